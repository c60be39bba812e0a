#!/usr/bin/env node
// OUR DERIVATION, NOT SALESFORCE'S FILE. Salesforce publishes no OpenAPI description of its REST
// API on npm (its Postman collection and the per-org beta "OpenAPI for sObjects" are generated per
// org and not licensed for redistribution), so this script writes a small OpenAPI 3.0 extract of
// the REST API (version 66.0) for the operations connectors/salesforce/connector.yaml uses, from
// the facts of Salesforce's REST API Developer Guide (Query, Query More Results with
// nextRecordsUrl, sObject Rows (GET with ?fields=, PATCH 204), sObject Basic Information (POST:
// 201 {id, success, errors}), sObject Get Deleted (start/end, deletedRecords), Limits, the error
// body [{message, errorCode, fields}]), the OAuth 2.0 web server and JWT bearer flows, and the
// Object Reference for the standard fields of Account, Contact, Lead, Opportunity, Case and
// Organization (names, types, which are writable), cross-checked with jsforce@3 (MIT) for
// the shapes of query results and save results. Record ids are 18 characters, their first three
// the object's key prefix (001 Account, 003 Contact, 00Q Lead, 006 Opportunity, 500 Case, 00D Organization, 005 User).
// Distributed under the repository's licence (MIT), as Switchboard's own work.
//
//   node connectors/salesforce/derive.mjs > connectors/salesforce/openapi.json
const V = '/services/data/v66.0';

// Field tables: name → [type, writable?]. Types: id (an 18-char id), ref (an id of another
// record), s (text), n (number), i (integer), b (boolean), dt (date-time), d (date), p (picklist: text).
const AUDIT = {
  IsDeleted: ['b'],
  OwnerId: ['ref', true],
  CreatedDate: ['dt'],
  CreatedById: ['ref'],
  LastModifiedDate: ['dt'],
  LastModifiedById: ['ref'],
  SystemModstamp: ['dt'],
};
const address = (prefix) => Object.fromEntries(['Street', 'City', 'State', 'PostalCode', 'Country'].map((f) => [`${prefix}${f}`, ['s', true]]));
const OBJECTS = {
  Account: {
    prefix: '001',
    example: '001Dn00000bVqHxIAK',
    required: ['Name'],
    fields: {
      Name: ['s', true],
      AccountNumber: ['s', true],
      Type: ['p', true],
      ParentId: ['ref', true],
      ...address('Billing'),
      ...address('Shipping'),
      Phone: ['s', true],
      Fax: ['s', true],
      Website: ['s', true],
      Industry: ['p', true],
      AnnualRevenue: ['n', true],
      NumberOfEmployees: ['i', true],
      Description: ['s', true],
      AccountSource: ['p', true],
      LastActivityDate: ['d'],
      ...AUDIT,
    },
  },
  Contact: {
    prefix: '003',
    example: '003Dn00000QbXy2IAF',
    required: ['LastName'],
    fields: {
      AccountId: ['ref', true],
      Salutation: ['p', true],
      FirstName: ['s', true],
      LastName: ['s', true],
      Name: ['s'],
      Title: ['s', true],
      Department: ['s', true],
      Email: ['s', true],
      Phone: ['s', true],
      MobilePhone: ['s', true],
      ...address('Mailing'),
      LeadSource: ['p', true],
      Birthdate: ['d', true],
      Description: ['s', true],
      HasOptedOutOfEmail: ['b', true],
      LastActivityDate: ['d'],
      ...AUDIT,
    },
  },
  Lead: {
    prefix: '00Q',
    example: '00QDn000006sL1kMAE',
    required: ['LastName', 'Company'],
    fields: {
      Salutation: ['p', true],
      FirstName: ['s', true],
      LastName: ['s', true],
      Name: ['s'],
      Title: ['s', true],
      Company: ['s', true],
      Email: ['s', true],
      Phone: ['s', true],
      MobilePhone: ['s', true],
      Website: ['s', true],
      ...Object.fromEntries(['Street', 'City', 'State', 'PostalCode', 'Country'].map((f) => [f, ['s', true]])),
      Status: ['p', true],
      LeadSource: ['p', true],
      Industry: ['p', true],
      Rating: ['p', true],
      AnnualRevenue: ['n', true],
      NumberOfEmployees: ['i', true],
      Description: ['s', true],
      IsConverted: ['b'],
      ConvertedDate: ['d'],
      ConvertedAccountId: ['ref'],
      ConvertedContactId: ['ref'],
      ConvertedOpportunityId: ['ref'],
      HasOptedOutOfEmail: ['b', true],
      ...AUDIT,
    },
  },
  Opportunity: {
    prefix: '006',
    example: '006Dn000004AbCdIAK',
    required: ['Name', 'StageName', 'CloseDate'],
    fields: {
      AccountId: ['ref', true],
      Name: ['s', true],
      Description: ['s', true],
      StageName: ['p', true],
      Amount: ['n', true],
      Probability: ['n', true],
      CloseDate: ['d', true],
      Type: ['p', true],
      NextStep: ['s', true],
      LeadSource: ['p', true],
      IsClosed: ['b'],
      IsWon: ['b'],
      ForecastCategory: ['p'],
      ForecastCategoryName: ['p', true],
      CampaignId: ['ref', true],
      LastActivityDate: ['d'],
      ...AUDIT,
    },
  },
  Case: {
    prefix: '500',
    example: '500Dn000002XyZaIAK',
    required: [],
    fields: {
      CaseNumber: ['s'],
      ContactId: ['ref', true],
      AccountId: ['ref', true],
      ParentId: ['ref', true],
      SuppliedName: ['s', true],
      SuppliedEmail: ['s', true],
      SuppliedPhone: ['s', true],
      Type: ['p', true],
      Status: ['p', true],
      Reason: ['p', true],
      Origin: ['p', true],
      Subject: ['s', true],
      Priority: ['p', true],
      Description: ['s', true],
      IsClosed: ['b'],
      ClosedDate: ['dt'],
      IsEscalated: ['b', true],
      ...AUDIT,
    },
  },
  Organization: {
    prefix: '00D',
    example: '00DDn00000AbCdEMAV',
    readOnly: true,
    required: [],
    fields: {
      Name: ['s'],
      InstanceName: ['s'],
      IsSandbox: ['b'],
      OrganizationType: ['s'],
      Country: ['s'],
      DefaultLocaleSidKey: ['s'],
      LanguageLocaleKey: ['s'],
      TimeZoneSidKey: ['s'],
      CreatedDate: ['dt'],
      SystemModstamp: ['dt'],
    },
  },
};

const ID = { type: 'string', pattern: '^[a-zA-Z0-9]{18}$', minLength: 18, maxLength: 18 };
const schemaOf = (type) =>
  ({
    id: { ...ID },
    ref: { ...ID, nullable: true },
    s: { type: 'string', nullable: true },
    p: { type: 'string', nullable: true },
    n: { type: 'number', nullable: true },
    i: { type: 'integer', nullable: true },
    b: { type: 'boolean' },
    dt: { type: 'string', format: 'date-time', nullable: true },
    d: { type: 'string', format: 'date', nullable: true },
  })[type];
const errorBody = {
  description: 'An error: a list of {message, errorCode, fields}',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Errors' } } },
};
const errors = { 400: errorBody, 401: errorBody, 403: errorBody, 404: errorBody };
const json = (schema, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const ref = (name) => ({ $ref: `#/components/schemas/${name}` });

const schemas = {
  Attributes: {
    type: 'object',
    description: "The record's type and REST URL, on every record answered",
    properties: { type: { type: 'string' }, url: { type: 'string' } },
    required: ['type'],
  },
  Errors: {
    type: 'array',
    items: {
      type: 'object',
      required: ['message', 'errorCode'],
      properties: { message: { type: 'string' }, errorCode: { type: 'string' }, fields: { type: 'array', items: { type: 'string' } } },
    },
  },
  SaveResult: {
    type: 'object',
    required: ['id', 'success', 'errors'],
    properties: { id: { ...ID }, success: { type: 'boolean' }, errors: { type: 'array', items: { type: 'object' } } },
  },
  QueryResult: {
    type: 'object',
    required: ['totalSize', 'done', 'records'],
    properties: {
      totalSize: { type: 'integer' },
      done: { type: 'boolean' },
      nextRecordsUrl: { type: 'string', description: 'The next batch: /services/data/vXX.X/query/<queryLocator>, absent when done' },
      records: {
        type: 'array',
        items: { type: 'object', required: ['attributes'], properties: { attributes: ref('Attributes') }, additionalProperties: true },
      },
    },
  },
  DeletedResult: {
    type: 'object',
    required: ['deletedRecords', 'earliestDateAvailable', 'latestDateCovered'],
    properties: {
      deletedRecords: {
        type: 'array',
        items: { type: 'object', required: ['id', 'deletedDate'], properties: { id: { ...ID }, deletedDate: { type: 'string', format: 'date-time' } } },
      },
      earliestDateAvailable: { type: 'string', format: 'date-time' },
      latestDateCovered: { type: 'string', format: 'date-time' },
    },
  },
};

const paths = {};
for (const [name, o] of Object.entries(OBJECTS)) {
  const properties = { attributes: ref('Attributes'), Id: { ...ID, example: o.example } };
  const writable = {};
  for (const [f, [type, w]] of Object.entries(o.fields)) {
    properties[f] = schemaOf(type);
    if (w) writable[f] = { ...schemaOf(type) };
  }
  schemas[name] = { type: 'object', required: ['Id'], properties };
  schemas[`${name}Write`] = { type: 'object', additionalProperties: false, properties: writable };
  schemas[`${name}Create`] = { allOf: [ref(`${name}Write`)], required: o.required };
  // A path takes the 15-character id as well as the 18-character one.
  const idParam = {
    name: 'id',
    in: 'path',
    required: true,
    description: `The record's id (${o.prefix}...), 18 or 15 characters`,
    schema: { type: 'string', pattern: '^[a-zA-Z0-9]{15}([a-zA-Z0-9]{3})?$' },
  };
  if (o.readOnly) {
    paths[`${V}/sobjects/${name}/{id}`] = {
      get: {
        operationId: `get${name}`,
        summary: `Get the ${name}'s fields`,
        parameters: [idParam, { name: 'fields', in: 'query', description: 'Comma-separated field names (default: all)', schema: { type: 'string' } }],
        responses: { 200: json(ref(name)), ...errors },
      },
    };
    delete schemas[`${name}Write`];
    delete schemas[`${name}Create`];
    continue;
  }
  paths[`${V}/sobjects/${name}`] = {
    post: {
      operationId: `create${name}`,
      summary: `Create a ${name}`,
      requestBody: { required: true, content: { 'application/json': { schema: { ...schemas[`${name}Write`], required: o.required } } } },
      responses: { 201: json(ref('SaveResult'), 'Created: the new id'), ...errors },
    },
  };
  paths[`${V}/sobjects/${name}/{id}`] = {
    get: {
      operationId: `get${name}`,
      summary: `Get a ${name}'s fields`,
      parameters: [idParam, { name: 'fields', in: 'query', description: 'Comma-separated field names (default: all)', schema: { type: 'string' } }],
      responses: { 200: json(ref(name)), ...errors },
    },
    patch: {
      operationId: `update${name}`,
      summary: `Update a ${name}'s fields`,
      parameters: [idParam],
      requestBody: { required: true, content: { 'application/json': { schema: ref(`${name}Write`) } } },
      responses: { 204: { description: 'Updated (no content)' }, ...errors },
    },
    delete: {
      operationId: `delete${name}`,
      summary: `Delete a ${name} (to the Recycle Bin)`,
      parameters: [idParam],
      responses: { 204: { description: 'Deleted (no content)' }, ...errors },
    },
  };
  paths[`${V}/sobjects/${name}/deleted/`] = {
    get: {
      operationId: `getDeleted${name}`,
      summary: `${name} records deleted between start and end (at most 30 days back)`,
      parameters: ['start', 'end'].map((p) => ({ name: p, in: 'query', required: true, schema: { type: 'string', format: 'date-time' } })),
      responses: { 200: json(ref('DeletedResult')), ...errors },
    },
  };
  delete schemas[`${name}Create`];
}
paths[`${V}/query`] = {
  get: {
    operationId: 'query',
    summary: 'Run a SOQL query: the first batch, and nextRecordsUrl while more remain',
    parameters: [
      { name: 'q', in: 'query', required: true, description: 'A SOQL statement', schema: { type: 'string' } },
      {
        name: 'Sforce-Query-Options',
        in: 'header',
        description: 'batchSize=<200..2000>: records per batch',
        schema: { type: 'string', pattern: '^batchSize=\\d+$' },
      },
    ],
    responses: { 200: json(ref('QueryResult')), ...errors },
  },
};
paths[`${V}/query/{queryLocator}`] = {
  get: {
    operationId: 'queryMore',
    summary: "The next batch of a query's records (a query locator from nextRecordsUrl)",
    parameters: [{ name: 'queryLocator', in: 'path', required: true, schema: { type: 'string' } }],
    responses: { 200: json(ref('QueryResult')), ...errors },
  },
};
paths[`${V}/limits`] = {
  get: {
    operationId: 'limits',
    summary: "The org's limits and what remains of each (DailyApiRequests...)",
    responses: {
      200: json({
        type: 'object',
        additionalProperties: { type: 'object', properties: { Max: { type: 'integer' }, Remaining: { type: 'integer' } } },
        example: { DailyApiRequests: { Max: 100000, Remaining: 99876 }, DataStorageMB: { Max: 1024, Remaining: 1012 } },
      }),
      ...errors,
    },
  },
};
const doc = {
  openapi: '3.0.3',
  info: {
    title: 'Salesforce REST API (Switchboard extract)',
    version: '66.0',
    description:
      "Accounts, contacts, leads, opportunities and cases through SOQL queries and sObject rows, deleted records, the org and its limits. Derived by Switchboard (connectors/salesforce/derive.mjs) from Salesforce's REST API Developer Guide and Object Reference; not Salesforce's file.",
    license: { name: "MIT (Switchboard's derivation)" },
    'x-derived-from': 'Salesforce REST API Developer Guide v66.0 and Object Reference (standard fields); jsforce@3 (MIT) for result shapes',
  },
  servers: [{ url: 'https://{instance}.my.salesforce.com', variables: { instance: { default: 'MyDomainName', description: "The org's My Domain" } } }],
  security: [{ oauth2: ['api'] }],
  paths,
  components: {
    schemas,
    securitySchemes: {
      oauth2: {
        type: 'oauth2',
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://login.salesforce.com/services/oauth2/authorize',
            tokenUrl: 'https://login.salesforce.com/services/oauth2/token',
            refreshUrl: 'https://login.salesforce.com/services/oauth2/token',
            scopes: { api: 'The REST API', refresh_token: 'Refresh tokens (offline access)' },
          },
        },
      },
    },
  },
};
process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
