/**
 * `switchboard init <type> --from-openapi <file>`: a connector manifest scaffolded from a vendor's
 * OpenAPI 3.x description. `$ref`s (across components and files) are resolved by
 * @apidevtools/json-schema-ref-parser; everything else is read from the resolved document:
 *
 * - base URL from `servers` (an enum server variable becomes config.region with base_url.regions;
 *   other variables take their default, reported);
 * - auth variants from `securitySchemes` (bearer, API key header, basic, OAuth 2 authorization code);
 * - entities from collection/item path pairs (`/widgets`, `/widgets/{widget_id}`): list and create
 *   from the collection's GET and POST, get and update from the item's GET and PATCH (else PUT, else
 *   POST: Stripe updates with POST /v1/customers/{customer}); RPC-style methods (`/widgets.list`,
 *   `/widgets.info`, `/widgets.create`, `/widgets.update`) by their verb, or as a simulator
 *   sidecar's `resources` declare them (`--sidecar`);
 * - params from parameters (the description's names; a deepObject object such as Stripe's
 *   `created` becomes one param per property, `created_gt` → `created[gt]`) and from the JSON or
 *   form-encoded request body (`body_encoding: form`), unwrapped from a single-key wrapper
 *   (`{"data": {...}}`) that the body template puts back;
 * - records from the response schema, unwrapped from envelopes (`{data: [...]}`, `{data: {...}}`);
 * - pagination from cursor/offset/page params and the response field carrying the next value, or a
 *   declared Link header; Retry-After / rate-limit reset headers where responses declare them.
 *
 * Every guess is recorded (a `# check:` comment in the YAML); what cannot be inferred is reported.
 */
import { SwitchboardError } from '../errors/index.ts';
import type { Sidecar } from '../simulator/sidecar.ts';
import { shortText, type Guess, type Scaffold } from './scaffold.ts';
import { scaffoldAuth, scaffoldRetry } from './openapi/auth.ts';
import { scaffoldCheck } from './openapi/check.ts';
import { isObj, loadOpenApi, type Obj, type PathItem } from './openapi/document.ts';
import { scaffoldEntities } from './openapi/entities.ts';
import { findErrorMessage } from './openapi/errors.ts';
import type { Notes } from './openapi/notes.ts';
import { planEntities, type EntityPlan } from './openapi/plan.ts';
import { scaffoldServers } from './openapi/servers.ts';
import { applySharedIds, findSharedIds, placeholderHost } from './openapi/tenant.ts';

export { loadOpenApi };

export interface OpenApiInitOptions {
  type: string;
  /** Entity names to keep (default all that have a list or get). */
  entities?: string[] | undefined;
  /** vendor_description.path to write (the copy of the description beside the manifest). */
  descriptionPath: string;
  /** vendor_description.source: where the description came from. */
  source: string;
  /** A simulator sidecar: its `resources` say which RPC method lists, gets, creates or updates what; `auth.params` are credential parameters. */
  sidecar?: Pick<Sidecar, 'resources' | 'auth' | 'pagination'> | undefined;
}

export async function scaffoldFromOpenApi(file: string, o: OpenApiInitOptions): Promise<Scaffold> {
  const doc = await loadOpenApi(file);
  const guesses: Guess[] = [];
  const report: string[] = [];
  const guess = (path: (string | number)[], message: string): void => void guesses.push({ path, message });
  const info = isObj(doc['info']) ? doc['info'] : {};
  const manifest: Obj = {
    manifest_version: 1,
    type: o.type,
    title: typeof info['title'] === 'string' && info['title'] !== '' ? info['title'] : o.type,
    kind: 'api',
  };
  guess(['kind'], 'what kind of system this is, e.g. work-management, crm, ticketing');
  const desc = shortText(info['description']);
  if (desc) manifest['description'] = desc;
  const docsUrl = isObj(doc['externalDocs']) ? doc['externalDocs']['url'] : undefined;
  if (typeof docsUrl === 'string') manifest['docs_url'] = docsUrl;
  const licence = isObj(info['license'])
    ? [info['license']['name'], info['license']['url'] ?? info['license']['identifier']].filter((x) => typeof x === 'string').join(', ')
    : undefined;
  manifest['vendor_description'] = { path: o.descriptionPath, format: 'openapi', source: o.source, ...(licence ? { licence } : {}) };
  if (!licence) guess(['vendor_description', 'source'], 'the description states no licence: check that you may redistribute it, or do not commit the copy');
  const notes: Notes = { guess, report };

  // Servers → base_url (and config.region for an enum variable).
  const { baseUrl, config } = scaffoldServers(doc, notes);
  manifest['base_url'] = baseUrl;
  if (Object.keys(config).length > 0) manifest['config'] = config;
  manifest['headers'] = { Accept: 'application/json' };
  manifest['retry'] = scaffoldRetry(doc, notes);
  // Security schemes → auth variants, with the scopes the chosen entities' operations need.
  const chosen = chooseEntities(file, doc, o);
  manifest['auth'] = scaffoldAuth(
    doc,
    notes,
    chosen.flatMap((c) => Object.values(c.ops).map((d) => d.op)),
  );

  // Errors: the message in the error response schema.
  const errorMessage = findErrorMessage(doc['paths'] as Record<string, PathItem>);
  if (errorMessage) {
    manifest['errors'] = { message: `{{default ${[...new Set([errorMessage, 'body.message', 'body.error'])].join(' ')}}}` };
    guess(['errors', 'message'], `from the error response schema (${errorMessage.replace(/^\(first body\.(.*)\)$/, '$1[0]').replace(/^body\./, '')})`);
  } else report.push('errors: no error response schema with a message field');

  // Entities.
  manifest['list_meta'] = {
    next_page: {
      type: ['string', 'integer', 'null'],
      description: 'What to pass for the next page (the pagination param of each list), null on the last page',
    },
  };
  const shared = findSharedIds(doc['paths'] as Record<string, PathItem>, chosen);
  const { entities, sentHeaders, checkRequest } = scaffoldEntities(chosen, o.sidecar, notes, shared);
  manifest['entities'] = entities;
  for (const [h, v] of Object.entries(sentHeaders)) {
    (manifest['headers'] as Obj)[h] = v;
    guess(['headers', h], `the ${h} header parameter's default, sent on every request`);
  }
  const check = scaffoldCheck(doc['paths'] as Record<string, PathItem>, checkRequest, notes);
  if (check !== undefined) manifest['check'] = check;
  applySharedIds(shared, manifest, notes);
  placeholderHost(manifest, notes);

  // Key order of the manifest as people write it: entities last.
  const order = [
    'manifest_version',
    'type',
    'title',
    'kind',
    'description',
    'docs_url',
    'vendor_description',
    'base_url',
    'config',
    'headers',
    'retry',
    'auth',
    'errors',
    'check',
    'list_meta',
    'entities',
  ];
  const ordered = Object.fromEntries(order.filter((k) => manifest[k] !== undefined).map((k) => [k, manifest[k]]));
  return {
    type: o.type,
    manifest: ordered,
    guesses,
    report,
    header: [
      `${String(manifest['title'])} — scaffolded by \`switchboard init ${o.type} --from-openapi\` from ${o.source}`,
      `(OpenAPI ${String(doc['openapi'])}${info['version'] !== undefined ? `, API version ${String(info['version'])}` : ''}; entities: ${chosen.map((c) => c.name).join(', ')}).`,
    ],
  };
}

/** The entities to scaffold: those --entities names (each must exist), else every one found. */
function chooseEntities(file: string, doc: Obj, o: OpenApiInitOptions): EntityPlan[] {
  const plans = planEntities(doc['paths'] as Record<string, PathItem>, o.sidecar?.resources);
  const available = plans.map((p) => p.name);
  const wanted = o.entities && o.entities.length > 0 ? o.entities : undefined;
  if (wanted) {
    const unknown = wanted.filter((w) => !available.includes(w));
    if (unknown.length > 0) {
      throw new SwitchboardError(
        'invalid_params',
        `--entities: ${unknown.join(', ')} not found in the description; entities (collection/item path pairs, RPC methods): ${available.join(', ')}`,
        {
          details: { unknown, valid: available },
        },
      );
    }
  }
  const chosen = wanted ? wanted.map((w) => plans.find((p) => p.name === w)!) : plans;
  if (chosen.length === 0)
    throw new SwitchboardError('invalid_params', `No entity found in ${file}: no collection path with a GET (list) or item path with a GET (get)`);
  return chosen;
}
