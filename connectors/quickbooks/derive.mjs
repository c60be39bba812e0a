#!/usr/bin/env node
// OUR DERIVATION, NOT INTUIT'S FILE. Intuit publishes no OpenAPI description of the QuickBooks
// Online Accounting API that can be vendored, so this script writes a small OpenAPI 3.0 extract of
// it (minor version 75) for the operations connectors/quickbooks/connector.yaml uses, from the
// facts of Intuit's API reference (Customer, Invoice, Payment, Item, CompanyInfo: create, read,
// sparse update with Id and SyncToken; the query operation and its SQL-like statements with
// STARTPOSITION/MAXRESULTS; change data capture; the Fault error body; minorversion), cross-checked
// with node-quickbooks@2.0.50 (ISC: paths /v3/company/<realmId>/<entity> in lower case, updates as
// POST /<entity>?operation=update with sparse: true, queries `select * from <Entity> ... startposition
// n maxresults n`, /cdc?entities=...&changedSince=..., minorversion 75, the token URL). Ids are
// numeric strings ("58"); every answer is {<Entity>: {...}, time}.
// Distributed under the repository's licence (MIT), as Switchboard's own work.
//
//   node connectors/quickbooks/derive.mjs > connectors/quickbooks/openapi.json
const ref = (name) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const s = { type: 'string' };
const n = { type: 'number' };
const b = { type: 'boolean' };
const obj = (properties, extra = {}) => ({ type: 'object', properties, ...extra });
const Ref = obj({ value: s, name: s }, { required: ['value'] });
const Email = obj({ Address: s });
const Phone = obj({ FreeFormNumber: s });
const Address = obj({ Id: s, Line1: s, Line2: s, City: s, CountrySubDivisionCode: s, PostalCode: s, Country: s });
const MetaData = obj({ CreateTime: { type: 'string', format: 'date-time' }, LastUpdatedTime: { type: 'string', format: 'date-time' } });
const COMMON = {
  Id: { type: 'string', pattern: '^[0-9]+$', example: '58' },
  SyncToken: { type: 'string', pattern: '^[0-9]+$' },
  domain: s,
  sparse: b,
  MetaData,
};
const SalesLine = obj({
  Id: s,
  LineNum: { type: 'integer' },
  Description: s,
  Amount: n,
  DetailType: { type: 'string', enum: ['SalesItemLineDetail', 'SubTotalLineDetail', 'DiscountLineDetail', 'DescriptionOnly'] },
  SalesItemLineDetail: obj({ ItemRef: Ref, Qty: n, UnitPrice: n, TaxCodeRef: Ref, ServiceDate: { type: 'string', format: 'date' } }),
});
const PaymentLine = obj({ Amount: n, LinkedTxn: { type: 'array', items: obj({ TxnId: s, TxnType: s }) } });

// Entity → [path word, fields read, fields written (a create's required ones first)].
const ENTITIES = {
  Customer: {
    path: 'customer',
    fields: {
      DisplayName: s,
      Title: s,
      GivenName: s,
      MiddleName: s,
      FamilyName: s,
      Suffix: s,
      CompanyName: s,
      FullyQualifiedName: s,
      PrintOnCheckName: s,
      PrimaryEmailAddr: Email,
      PrimaryPhone: Phone,
      Mobile: Phone,
      WebAddr: obj({ URI: s }),
      BillAddr: Address,
      ShipAddr: Address,
      Notes: s,
      Active: b,
      Job: b,
      ParentRef: Ref,
      Taxable: b,
      Balance: n,
      BalanceWithJobs: n,
      CurrencyRef: Ref,
      PreferredDeliveryMethod: s,
    },
    readOnly: ['FullyQualifiedName', 'Balance', 'BalanceWithJobs'],
    required: [],
  },
  Invoice: {
    path: 'invoice',
    fields: {
      DocNumber: s,
      TxnDate: { type: 'string', format: 'date' },
      DueDate: { type: 'string', format: 'date' },
      CustomerRef: Ref,
      Line: { type: 'array', items: SalesLine },
      TotalAmt: n,
      Balance: n,
      BillEmail: Email,
      BillAddr: Address,
      ShipAddr: Address,
      EmailStatus: s,
      PrintStatus: s,
      CustomerMemo: obj({ value: s }),
      PrivateNote: s,
      SalesTermRef: Ref,
      CurrencyRef: Ref,
      AllowOnlineCreditCardPayment: b,
      AllowOnlineACHPayment: b,
      LinkedTxn: { type: 'array', items: obj({ TxnId: s, TxnType: s }) },
    },
    readOnly: ['TotalAmt', 'Balance', 'LinkedTxn'],
    required: ['CustomerRef', 'Line'],
  },
  Payment: {
    path: 'payment',
    fields: {
      TxnDate: { type: 'string', format: 'date' },
      CustomerRef: Ref,
      TotalAmt: n,
      UnappliedAmt: n,
      PaymentRefNum: s,
      PaymentMethodRef: Ref,
      DepositToAccountRef: Ref,
      Line: { type: 'array', items: PaymentLine },
      PrivateNote: s,
      CurrencyRef: Ref,
      ProcessPayment: b,
    },
    readOnly: ['UnappliedAmt'],
    required: ['CustomerRef', 'TotalAmt'],
  },
  Item: {
    path: 'item',
    fields: {
      Name: s,
      Sku: s,
      Description: s,
      Type: { type: 'string', enum: ['Inventory', 'NonInventory', 'Service', 'Group', 'Category'] },
      FullyQualifiedName: s,
      UnitPrice: n,
      PurchaseCost: n,
      PurchaseDesc: s,
      IncomeAccountRef: Ref,
      ExpenseAccountRef: Ref,
      AssetAccountRef: Ref,
      TrackQtyOnHand: b,
      QtyOnHand: n,
      InvStartDate: { type: 'string', format: 'date' },
      Active: b,
      Taxable: b,
    },
    readOnly: ['FullyQualifiedName'],
    required: ['Name'],
  },
};

const Fault = obj(
  {
    Fault: obj({
      Error: { type: 'array', items: obj({ Message: s, Detail: s, code: s, element: s }, { required: ['Message', 'code'] }) },
      type: s,
    }),
    time: s,
  },
  { required: ['Fault'] },
);
const errors = {
  400: json(ref('Fault'), 'A validation or business rule fault'),
  401: json(ref('Fault'), 'An expired or refused token'),
  429: json(ref('Fault'), 'Throttled'),
};
const minor = {
  name: 'minorversion',
  in: 'query',
  description: 'The minor version of the API (75: every field used here)',
  schema: { type: 'integer', minimum: 1, maximum: 75 },
};
const realm = { name: 'realmId', in: 'path', required: true, description: 'The company (realm) id', schema: { type: 'string', pattern: '^[0-9]+$' } };

const schemas = { Fault, Ref };
const paths = {};
for (const [name, e] of Object.entries(ENTITIES)) {
  schemas[name] = obj({ ...COMMON, ...e.fields }, { required: ['Id'] });
  const writable = Object.fromEntries(Object.entries(e.fields).filter(([k]) => !e.readOnly.includes(k)));
  const envelope = obj({ [name]: ref(name), time: { type: 'string', format: 'date-time' } }, { required: [name] });
  paths[`/v3/company/{realmId}/${e.path}`] = {
    post: {
      operationId: `createOrUpdate${name}`,
      summary: `Create a ${name}; with operation=update, update one (its Id and SyncToken; sparse: only the fields sent)`,
      parameters: [realm, minor, { name: 'operation', in: 'query', schema: { type: 'string', enum: ['update', 'delete'] } }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: obj({ Id: COMMON.Id, SyncToken: COMMON.SyncToken, sparse: b, ...writable }, { additionalProperties: false }),
          },
        },
      },
      responses: { 200: json(envelope), ...errors },
    },
  };
  paths[`/v3/company/{realmId}/${e.path}/{id}`] = {
    get: {
      operationId: `read${name}`,
      summary: `Read a ${name}`,
      parameters: [realm, { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } }, minor],
      responses: { 200: json(envelope), ...errors },
    },
  };
}
schemas.CompanyInfo = obj({
  Id: s,
  SyncToken: s,
  CompanyName: s,
  LegalName: s,
  Country: s,
  Email: Email,
  CompanyAddr: Address,
  FiscalYearStartMonth: s,
  SupportedLanguages: s,
  MetaData,
});
paths['/v3/company/{realmId}/companyinfo/{id}'] = {
  get: {
    operationId: 'readCompanyInfo',
    summary: "The company's name, address and settings (its id is the realm id)",
    parameters: [realm, { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } }, minor],
    responses: { 200: json(obj({ CompanyInfo: ref('CompanyInfo'), time: s }, { required: ['CompanyInfo'] })), ...errors },
  },
};
paths['/v3/company/{realmId}/preferences'] = {
  get: {
    operationId: 'readPreferences',
    summary: "The company's preferences (accounting, sales forms, currencies...)",
    parameters: [realm, minor],
    responses: {
      200: json(
        obj(
          {
            Preferences: obj({
              Id: s,
              SyncToken: s,
              AccountingInfoPrefs: obj({ FiscalYearStartMonth: s, UseAccountNumbers: b }),
              SalesFormsPrefs: obj({ AllowDiscount: b, DefaultTerms: Ref, CustomTxnNumbers: b }),
              CurrencyPrefs: obj({ MultiCurrencyEnabled: b, HomeCurrency: Ref }),
              MetaData,
            }),
            time: { type: 'string', format: 'date-time' },
          },
          { required: ['Preferences'] },
        ),
      ),
      ...errors,
    },
  },
};
paths['/v3/company/{realmId}/query'] = {
  get: {
    operationId: 'query',
    summary: 'Run a query statement: select * from <Entity> [where ...] [orderby ...] [startposition n] [maxresults n] (at most 1,000)',
    parameters: [realm, { name: 'query', in: 'query', required: true, schema: s }, minor],
    responses: {
      200: json(
        obj(
          {
            QueryResponse: obj({
              ...Object.fromEntries([...Object.keys(ENTITIES), 'CompanyInfo'].map((k) => [k, { type: 'array', items: ref(k) }])),
              startPosition: { type: 'integer' },
              maxResults: { type: 'integer' },
              totalCount: { type: 'integer' },
            }),
            time: s,
          },
          { required: ['QueryResponse'] },
        ),
      ),
      ...errors,
    },
  },
};
paths['/v3/company/{realmId}/cdc'] = {
  get: {
    operationId: 'changeDataCapture',
    summary: 'The entities of the listed types changed since a time (at most 30 days back, 1,000 each); deleted ones carry status Deleted',
    parameters: [
      realm,
      { name: 'entities', in: 'query', required: true, description: 'Comma-separated entity names: Customer,Invoice', schema: s },
      { name: 'changedSince', in: 'query', required: true, schema: { type: 'string', format: 'date-time' } },
      minor,
    ],
    responses: {
      200: json(
        obj(
          {
            CDCResponse: {
              type: 'array',
              items: obj({
                QueryResponse: {
                  type: 'array',
                  items: obj({
                    ...Object.fromEntries(Object.keys(ENTITIES).map((k) => [k, { type: 'array', items: { allOf: [ref(k)], properties: { status: s } } }])),
                    startPosition: { type: 'integer' },
                    maxResults: { type: 'integer' },
                  }),
                },
              }),
            },
            time: s,
          },
          { required: ['CDCResponse'] },
        ),
      ),
      ...errors,
    },
  },
};

const doc = {
  openapi: '3.0.3',
  info: {
    title: 'QuickBooks Online Accounting API (Switchboard extract)',
    version: '3 (minor version 75)',
    description:
      "Customers, invoices, payments and items of a QuickBooks Online company: read, create, sparse update, query statements and change data capture. Derived by Switchboard (connectors/quickbooks/derive.mjs) from Intuit's API reference; not Intuit's file.",
    license: { name: "MIT (Switchboard's derivation)" },
    'x-derived-from': "Intuit's QuickBooks Online Accounting API reference (minor version 75); node-quickbooks@2.0.50 (ISC) for paths and shapes",
  },
  servers: [{ url: 'https://quickbooks.api.intuit.com' }],
  security: [{ oauth2: ['com.intuit.quickbooks.accounting'] }],
  paths,
  components: {
    schemas,
    securitySchemes: {
      oauth2: {
        type: 'oauth2',
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://appcenter.intuit.com/connect/oauth2',
            tokenUrl: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
            refreshUrl: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
            scopes: { 'com.intuit.quickbooks.accounting': 'The company’s accounting data' },
          },
        },
      },
    },
  },
};
process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
