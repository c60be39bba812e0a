// Derives connectors/zoho_crm/openapi.json (OUR OpenAPI description of the part of Zoho CRM API v8
// the connector uses) from Zoho's official Node SDK, @zohocrm/nodejs-sdk-8.0 (Apache-2.0), which is
// generated from Zoho's own API specification:
//   - the paths, methods, query parameters and headers of the record operations
//     (lib/core/com/zoho/crm/api/record/record_operations.js: getRecords, getRecord, createRecords,
//     updateRecord, searchRecords, getDeletedRecords) and of the organization (org/org_operations.js);
//   - the field API names of the Leads, Contacts, Accounts and Deals modules (record/field.js);
//   - the envelopes, `info`, deleted-record, success and error models (lib/config/json_details.json).
// What the SDK does not say is added from Zoho's API reference (zoho.com/crm/developer/docs/api/v8),
// each marked `x-added-by: derive.mjs`: the fields' JSON types (TYPES below), parameter types and
// bounds, which parameters are required, and the 204 (no records) and 304 (nothing modified since
// If-Modified-Since) answers of lists.
//
//   npm pack @zohocrm/nodejs-sdk-8.0@2.0.0 && tar xzf zohocrm-nodejs-sdk-8.0-2.0.0.tgz
//   node connectors/zoho_crm/derive.mjs package > connectors/zoho_crm/openapi.json
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const SDK = process.argv[2] ?? 'package';
const api = (p) => readFileSync(join(SDK, 'lib/core/com/zoho/crm/api', p), 'utf8');
const details = JSON.parse(readFileSync(join(SDK, 'lib/config/json_details.json'), 'utf8'));
const MODULES = ['Leads', 'Contacts', 'Accounts', 'Deals'];
const ADDED = { 'x-added-by': 'derive.mjs' };

/** The SDK's `static X = new Param("name", ...)` (or Header) names of one class in a file. */
function sdkNames(source, className, kind) {
  const start = source.indexOf(`class ${className}{`);
  if (start < 0) throw new Error(`no class ${className} in the SDK`);
  const body = source.slice(start, source.indexOf('}', start));
  return [...body.matchAll(new RegExp(`new ${kind}\\("([^"]+)"`, 'g'))].map((m) => m[1]);
}

/** Field API names of one module (record/field.js: `static Leads = class { static X = new Field("X") }`). */
function moduleFields(source, module) {
  const start = source.indexOf(`static ${module} = class {`);
  if (start < 0) throw new Error(`no fields of ${module} in the SDK`);
  const body = source.slice(start, source.indexOf('}', start));
  return [...body.matchAll(/new Field\("([^"]+)"\)/g)].map((m) => m[1]);
}

/** The JSON names of one SDK model (json_details.json), for checking our schemas against it. */
function modelKeys(key) {
  const m = details[`core/com/zoho/crm/api/${key}`];
  if (m === undefined) throw new Error(`no model ${key} in the SDK`);
  return Object.values(m).map((f) => f.name);
}

const nullable = (s) => ({ ...s, nullable: true });
const str = nullable({ type: 'string' });
const id = { type: 'string', pattern: '^[0-9]+$', example: '5843104000000425001', description: 'A record id: 19 digits, as text' };
const lookup = nullable({ type: 'object', properties: { id, name: str }, required: ['id'] });
const user = nullable({ type: 'object', properties: { id, name: str, email: str }, required: ['id'] });
const dateTime = nullable({ type: 'string', format: 'date-time', example: '2026-01-05T09:30:00+01:00' });
const date = nullable({ type: 'string', format: 'date' });
const number = nullable({ type: 'number' });
const integer = nullable({ type: 'integer' });
const boolean = nullable({ type: 'boolean' });
const named = nullable({ type: 'array', items: { type: 'object', properties: { id, name: str } } });

/** JSON types of the standard fields, from the API reference (a field not named here is text). */
const TYPES = {
  id,
  Owner: user,
  Created_By: user,
  Modified_By: user,
  Account_Name: lookup,
  Contact_Name: lookup,
  Vendor_Name: lookup,
  Reporting_To: lookup,
  Parent_Account: lookup,
  Campaign_Source: lookup,
  Layout: lookup,
  Pipeline: lookup,
  Territory: lookup,
  Converted_Account: lookup,
  Converted_Contact: lookup,
  Converted_Deal: lookup,
  Tag: named,
  Territories: named,
  Created_Time: dateTime,
  Modified_Time: dateTime,
  Closing_Date: date,
  Date_of_Birth: date,
  Amount: number,
  Annual_Revenue: number,
  Expected_Revenue: number,
  Exchange_Rate: number,
  Average_Time_Spent_Minutes: number,
  Probability: integer,
  No_of_Employees: integer,
  Employees: integer,
  Days_Visited: integer,
  Number_Of_Chats: integer,
  Visitor_Score: integer,
  Overall_Sales_Duration: integer,
  Sales_Cycle_Duration: integer,
  Email_Opt_Out: boolean,
  Locked__s: boolean,
  Converted__s: boolean,
  Data_Processing_Basis_Details: nullable({ type: 'object' }),
  Record_Image: str,
  Full_Name: str,
};
const READ_ONLY = new Set([
  'id',
  'Created_Time',
  'Modified_Time',
  'Created_By',
  'Modified_By',
  'Full_Name',
  'Last_Activity_Time',
  'Change_Log_Time__s',
  'Locked__s',
]);
/** Each module's mandatory field on create (the API reference's "mandatory fields"). */
const MANDATORY = { Leads: ['Last_Name'], Contacts: ['Last_Name'], Accounts: ['Account_Name'], Deals: ['Deal_Name', 'Stage'] };
// The name fields are text in the modules that define them (an Account's Account_Name; a Contact's is a lookup).
const OWN_TEXT = { Accounts: ['Account_Name'] };

const ops = api('record/record_operations.js');
const fieldsSource = api('record/field.js');
const infoKeys = modelKeys('record/info');
const param = (name, schema, extra = {}) => ({ name, in: 'query', schema, ...extra });
const since = {
  name: 'If-Modified-Since',
  in: 'header',
  required: false,
  description: 'Only records modified at or after this time (ISO 8601, e.g. 2019-07-25T15:26:49+05:30)',
  schema: { type: 'string', format: 'date-time' },
};

/** The query parameters of an SDK operation, typed from the API reference. */
const PARAM_TYPES = {
  fields: { type: 'string', description: 'Field API names, comma separated (at most 50); mandatory when listing' },
  ids: { type: 'string', description: 'Record ids, comma separated (at most 100)' },
  sort_by: { type: 'string', enum: ['id', 'Created_Time', 'Modified_Time'] },
  sort_order: { type: 'string', enum: ['asc', 'desc'] },
  page: { type: 'integer', minimum: 1, description: 'With per_page, reaches the first 2000 records; page_token beyond' },
  per_page: { type: 'integer', minimum: 1, maximum: 200, default: 200 },
  page_token: { type: 'string', description: 'info.next_page_token of the previous page (not with page)' },
  cvid: { type: 'string', pattern: '^[0-9]+$' },
  territory_id: { type: 'string', pattern: '^[0-9]+$' },
  include_child: { type: 'boolean' },
  converted: { type: 'string', enum: ['true', 'false', 'both'] },
  approved: { type: 'string', enum: ['true', 'false', 'both'] },
  criteria: { type: 'string', description: '(Field:operator:value) groups joined by and/or: ((Last_Name:equals:Burns)and(Email:starts_with:b))' },
  email: { type: 'string' },
  phone: { type: 'string' },
  word: { type: 'string' },
  type: { type: 'string', enum: ['all', 'recycle', 'permanent'] },
};
/** Parameters the SDK lists that integrations do not send here (user-scoped, time windows of other modules). */
const SKIP = new Set(['uid', 'startDateTime', 'endDateTime', 'on_demand_properties']);
function sdkParams(className, required = []) {
  return sdkNames(ops, className, 'Param')
    .filter((n) => !SKIP.has(n))
    .map((n) => {
      const schema = PARAM_TYPES[n];
      if (schema === undefined) throw new Error(`no type for the SDK's ${className} param ${n}`);
      return param(n, schema, required.includes(n) ? { required: true } : {});
    });
}
function sdkHeaders(className) {
  const names = sdkNames(ops, className, 'Header');
  if (!names.includes('If-Modified-Since')) throw new Error(`${className} has no If-Modified-Since header in the SDK`);
  return [since];
}

const schemas = {
  Info: {
    type: 'object',
    description: `Paging of a list (the SDK's record Info: ${infoKeys.join(', ')})`,
    properties: {
      per_page: { type: 'integer' },
      count: { type: 'integer' },
      page: { type: 'integer' },
      sort_by: str,
      sort_order: str,
      more_records: { type: 'boolean' },
      next_page_token: str,
      previous_page_token: str,
      page_token_expiry: dateTime,
    },
  },
  Error: {
    type: 'object',
    description: `An error (the SDK's APIException: ${modelKeys('record/api_exception').join(', ')})`,
    properties: {
      code: { type: 'string', example: 'INVALID_DATA' },
      details: { type: 'object' },
      message: { type: 'string' },
      status: { type: 'string', example: 'error' },
    },
    required: ['code', 'message', 'status'],
  },
  ActionResponse: {
    type: 'object',
    description: `One record's write result (the SDK's SuccessResponse / APIException: ${modelKeys('record/success_response').join(', ')})`,
    properties: {
      code: { type: 'string', example: 'SUCCESS' },
      duplicate_field: str,
      action: str,
      details: {
        type: 'object',
        properties: { id, Created_Time: dateTime, Modified_Time: dateTime, Created_By: user, Modified_By: user, api_name: str },
      },
      message: { type: 'string', example: 'record added' },
      status: { type: 'string', enum: ['success', 'error'] },
    },
    required: ['code', 'details', 'message', 'status'],
  },
  ActionWrapper: { type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/ActionResponse' } } }, required: ['data'] },
  MinifiedUser: user,
  DeletedRecord: {
    type: 'object',
    description: `A deleted record (the SDK's DeletedRecord: ${modelKeys('record/deleted_record').join(', ')})`,
    properties: {
      id,
      display_name: str,
      type: { type: 'string', enum: ['recycle', 'permanent'] },
      deleted_time: dateTime,
      created_by: user,
      deleted_by: user,
    },
    required: ['id'],
  },
  DeletedRecords: {
    type: 'object',
    properties: { data: { type: 'array', items: { $ref: '#/components/schemas/DeletedRecord' } }, info: { $ref: '#/components/schemas/Info' } },
    required: ['data'],
  },
  Org: {
    type: 'object',
    description: "The organization (the SDK's org Org; the fields an integration reads)",
    properties: Object.fromEntries(
      ['id', 'company_name', 'domain_name', 'primary_email', 'primary_zuid', 'zgid', 'country_code', 'currency', 'time_zone', 'iso_code', 'max_per_page'].map(
        (k) => {
          if (!modelKeys('org/org').includes(k)) throw new Error(`the SDK's org has no ${k}`);
          return [k, k === 'id' ? id : k === 'max_per_page' ? { type: 'integer' } : str];
        },
      ),
    ),
    required: ['id'],
  },
  OrgWrapper: { type: 'object', properties: { org: { type: 'array', items: { $ref: '#/components/schemas/Org' } } }, required: ['org'] },
};

const errors = (statuses) =>
  Object.fromEntries(
    statuses.map((s) => [String(s), { description: 'Refused', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }]),
  );
const json = (ref) => ({ 'application/json': { schema: { $ref: ref } } });
const paths = {};
for (const module of MODULES) {
  const singular = module.slice(0, -1);
  const fields = moduleFields(fieldsSource, module);
  const properties = {};
  for (const f of fields) properties[f] = OWN_TEXT[module]?.includes(f) ? str : (TYPES[f] ?? str);
  schemas[singular] = { type: 'object', description: `A ${singular} (field API names from the SDK's Field.${module})`, properties, required: ['id'] };
  const writable = Object.fromEntries(Object.entries(properties).filter(([k]) => !READ_ONLY.has(k)));
  schemas[`${singular}Input`] = {
    type: 'object',
    properties: writable,
    additionalProperties: true,
    description: 'Custom fields are written by their API names too',
  };
  schemas[`${module}Response`] = {
    type: 'object',
    properties: { data: { type: 'array', items: { $ref: `#/components/schemas/${singular}` } }, info: { $ref: '#/components/schemas/Info' } },
    required: ['data'],
  };
  const body = (required) => ({
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['data'],
          properties: {
            data: { type: 'array', minItems: 1, maxItems: 100, items: { allOf: [{ $ref: `#/components/schemas/${singular}Input` }], required } },
            trigger: { type: 'array', items: { type: 'string', enum: ['approval', 'workflow', 'blueprint', 'pathfinder', 'orchestration'] } },
          },
        },
      },
    },
  });
  const list = {
    200: { description: 'Records', content: json(`#/components/schemas/${module}Response`) },
    204: { description: 'No records', ...ADDED },
    304: { description: 'No record modified since If-Modified-Since', ...ADDED },
    ...errors([400, 401, 403]),
  };
  paths[`/crm/v8/${module}`] = {
    get: {
      operationId: `get${module}`,
      summary: `getRecords of ${module}`,
      parameters: [...sdkParams('GetRecordsParam', ['fields']), ...sdkHeaders('GetRecordsHeader')],
      responses: list,
    },
    post: {
      operationId: `create${module}`,
      summary: `createRecords of ${module}`,
      requestBody: body(MANDATORY[module]),
      responses: { 201: { description: 'Created', content: json('#/components/schemas/ActionWrapper') }, ...errors([400, 401, 403]) },
    },
  };
  paths[`/crm/v8/${module}/{id}`] = {
    parameters: [{ name: 'id', in: 'path', required: true, schema: id }],
    get: {
      operationId: `get${singular}`,
      summary: `getRecord of ${module}`,
      parameters: [...sdkParams('GetRecordParam'), ...sdkHeaders('GetRecordHeader')],
      responses: {
        200: { description: 'The record, as the one item of data', content: json(`#/components/schemas/${module}Response`) },
        204: { description: 'No such record', ...ADDED },
        ...errors([400, 401, 403]),
      },
    },
    put: {
      operationId: `update${singular}`,
      summary: `updateRecord of ${module}`,
      requestBody: body([]),
      responses: { 200: { description: 'Updated', content: json('#/components/schemas/ActionWrapper') }, ...errors([400, 401, 403]) },
    },
  };
  paths[`/crm/v8/${module}/search`] = {
    get: {
      operationId: `search${module}`,
      summary: `searchRecords of ${module}`,
      parameters: sdkParams('SearchRecordsParam'),
      responses: {
        200: { description: 'Matching records', content: json(`#/components/schemas/${module}Response`) },
        204: { description: 'No match', ...ADDED },
        ...errors([400, 401, 403]),
      },
    },
  };
  paths[`/crm/v8/${module}/deleted`] = {
    get: {
      operationId: `getDeleted${module}`,
      summary: `getDeletedRecords of ${module}`,
      parameters: [...sdkParams('GetDeletedRecordsParam'), ...sdkHeaders('GetDeletedRecordsHeader')],
      responses: {
        200: { description: 'Deleted records', content: json('#/components/schemas/DeletedRecords') },
        204: { description: 'None', ...ADDED },
        304: { description: 'None deleted since If-Modified-Since', ...ADDED },
        ...errors([400, 401, 403]),
      },
    },
  };
}
paths['/crm/v8/org'] = {
  get: {
    operationId: 'getOrganization',
    summary: 'getOrganization',
    responses: { 200: { description: 'The organization', content: json('#/components/schemas/OrgWrapper') }, ...errors([401]) },
  },
};

const doc = {
  openapi: '3.0.3',
  info: {
    title: 'Zoho CRM API v8 (records of Leads, Contacts, Accounts, Deals; organization)',
    version: '8.0',
    description: 'Derived by Switchboard (connectors/zoho_crm/derive.mjs) from the official Node SDK and the API reference; not published by Zoho.',
    license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    'x-derived-from': 'npm:@zohocrm/nodejs-sdk-8.0@2.0.0 (Apache-2.0) and https://www.zoho.com/crm/developer/docs/api/v8/',
  },
  servers: [{ url: 'https://www.zohoapis.com', description: "US data centre; the account's own is the token answer's api_domain" }],
  security: [{ oauthtoken: [] }],
  paths,
  components: {
    schemas,
    securitySchemes: {
      oauthtoken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Zoho-oauthtoken <access token>', ...ADDED },
    },
  },
};
process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
