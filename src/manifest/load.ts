/**
 * The manifest loader: parse YAML, validate against the manifest JSON Schema, run the semantic
 * checks JSON Schema cannot express, and compile every template and check every schema — all at
 * load time (an action's params validator is built on its first call).
 * Every problem is reported at once, each with file, location (dotted path and line:column) and
 * a message written for a connector author.
 */
import { compileWebhooks, type WebhooksDef } from '../webhooks/manifest.ts';
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { AuthVariant, CredentialCheck, Manifest, OAuth2Auth, Request } from '../../generated/manifest.ts';
import { basicAuthorization } from './basic-auth.ts';
import { SwitchboardError } from '../errors/index.ts';
import { compileTemplate, TemplateSyntaxError, truthy, type Template } from '../templates/index.ts';
import { compileErrorMatch } from './error-match.ts';
import { compileOnEmpty } from './on-empty.ts';
import { createAjv } from './ajv.ts';
import { MANIFEST_SCHEMA } from './manifest-schema.ts';
import { anchored, credentialsSchema, paramsSchema } from './schemas.ts';
import {
  ACTION_NAMES,
  LIST_ACTIONS,
  compileTree,
  treeTemplates,
  type ActionName,
  type CompiledAction,
  type CompiledAuthVariant,
  type CompiledFollowUp,
  type CompiledCheck,
  type CompiledEntity,
  type CompiledRequest,
  type LoadedManifest,
  type TemplateTree,
} from './compile.ts';

/** One problem found in a manifest. */
export interface ManifestProblem {
  file: string;
  /** Dotted location, e.g. entities.notes.actions.get.request.path. */
  location: string;
  line?: number;
  column?: number;
  message: string;
}

/** Thrown when a manifest has problems; carries all of them. */
export class ManifestError extends SwitchboardError {
  readonly problems: ManifestProblem[];
  constructor(problems: ManifestProblem[]) {
    super('manifest_invalid', problems.map(formatProblem).join('\n'), {
      errors: problems.map((p) => ({ path: `${p.file}#${p.location}`, message: p.message })),
    });
    this.problems = problems;
  }
}

/** `file:line:col location: message`, the form the CLI prints. */
export function formatProblem(p: ManifestProblem): string {
  const pos = p.line !== undefined ? `:${p.line}:${p.column ?? 1}` : '';
  return `${p.file}${pos} ${p.location || '(root)'}: ${p.message}`;
}

const ajv = createAjv();
/**
 * A manifest's verdict comes from a validator that stops at the first error (a third cheaper to
 * build than one collecting every error); the manifest that fails is validated again by the
 * full one, built then, for every problem with its message.
 */
const manifestValid = createAjv({ allErrors: false, messages: false, code: { optimize: false } }).compile<Manifest>(MANIFEST_SCHEMA);
let validateManifest: ValidateFunction<Manifest> | undefined;
/**
 * Embedded schemas (records, params, list_meta, credential fields) are also compiled with ajv's
 * strictSchema, which refuses keys that are not JSON Schema keywords: a YAML flow map with an
 * unquoted comma (`{ description: a, b }`) turns "b" into such a key and would otherwise pass.
 */
const strictAjv = createAjv({ strictSchema: true, validateFormats: true });

/**
 * Records and params are checked under strictSchema by an instance that builds the cheapest
 * validator (first error only, no messages, no code optimization), which is then dropped: what it
 * refuses is what strictAjv refuses (strictSchema and formats act at compile time, keyword by
 * keyword, whatever the code is for), and strictAjv then says why.
 */
const checkAjv = createAjv({ strictSchema: true, validateFormats: true, allErrors: false, messages: false, code: { optimize: false } });

/** Whether `schema` compiles under strictSchema (its validator is not kept). */
function strictlyValid(schema: object): boolean {
  try {
    checkAjv.compile(schema);
    return true;
  } catch {
    return false;
  }
}

/**
 * `schema`'s validator under strictSchema, or undefined when refused. Refusal is decided now, by
 * the check-only instance above; the validator itself (strictAjv's: strictSchema only adds
 * refusals at compile time, so it validates as the lenient instance's would) is compiled on its
 * first call, so commands that never validate params (codegen, validate, connectors) never
 * build one, and a process builds only those of the actions it runs.
 */
function strictCompile(schema: object): ValidateFunction | undefined {
  if (!strictlyValid(schema)) return undefined;
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= strictAjv.compile(schema);
    const ok = compiled(data);
    validate.errors = compiled.errors ?? null;
    return ok;
  }) as ValidateFunction;
  validate.errors = null;
  validate.schema = schema;
  return validate;
}

/** Problems of keys in `schema` that are not JSON Schema keywords, reported at `path`. */
function unknownKeywords(schema: unknown): string | undefined {
  try {
    strictAjv.compile(schema as object);
    return undefined;
  } catch (e) {
    const m = /unknown keyword: "(.*)"/.exec((e as Error).message);
    return m ? `"${m[1] ?? ''}" is not a JSON Schema keyword (a YAML flow map with an unquoted comma? quote the description)` : undefined;
  }
}

/** Roots a template may reference, by where it appears. */
type Scope = {
  roots: ReadonlySet<string>;
  /** Declared params of the action (for params.X), when the scope has an action. */
  params?: Record<string, { required?: boolean }>;
  /** Credential fields allowed (for credentials.X). */
  credentials?: ReadonlySet<string>;
  config: ReadonlySet<string>;
  /** Credential fields a request path may use (a minted_bearer mint request): each needs a pattern and may not be secret. */
  pathCredentials?: Record<string, { pattern?: string; secret?: boolean } | undefined>;
};

class Checker {
  readonly problems: ManifestProblem[] = [];
  constructor(
    private readonly file: string,
    private readonly doc: Document | undefined,
    private readonly lines: LineCounter | undefined,
  ) {}

  add(path: (string | number)[], message: string): void {
    const p: ManifestProblem = { file: this.file, location: path.join('.'), message };
    const node = this.doc?.getIn(path, true);
    if (this.lines && isNode(node) && node.range) {
      const pos = this.lines.linePos(node.range[0]);
      p.line = pos.line;
      p.column = pos.col;
    } else if (this.lines && path.length > 0) {
      // Missing key: point at the closest parent that exists.
      for (let i = path.length - 1; i >= 0; i--) {
        const parent = this.doc?.getIn(path.slice(0, i), true);
        if (isNode(parent) && parent.range) {
          const pos = this.lines.linePos(parent.range[0]);
          p.line = pos.line;
          p.column = pos.col;
          break;
        }
      }
    }
    this.problems.push(p);
  }

  /** Compile a template and check its references against the scope. */
  template(path: (string | number)[], source: string, scope: Scope, opts: { pathParams?: boolean } = {}): Template | undefined {
    let t: Template;
    try {
      t = compileTemplate(source);
    } catch (e) {
      this.add(path, e instanceof TemplateSyntaxError ? `template error: ${e.message}` : String(e));
      return undefined;
    }
    this.references(path, t, scope, opts);
    return t;
  }

  references(path: (string | number)[], t: Template, scope: Scope, opts: { pathParams?: boolean } = {}): void {
    for (const ref of t.references) {
      const [root, key] = ref;
      const shown = ref.join('.');
      if (root === undefined) continue;
      if (!scope.roots.has(root)) {
        this.add(path, `unknown variable "${shown}": templates here may use ${[...scope.roots].map((r) => `${r}.*`).join(', ')}`);
        continue;
      }
      if (opts.pathParams && root === 'credentials' && scope.pathCredentials !== undefined && key !== undefined && ref.length === 2) {
        const f = scope.pathCredentials[key];
        if (f?.secret === true) this.add(path, `credentials.${key} is secret, and a path is not: use a non-secret field`);
        else if (f !== undefined && f.pattern === undefined) this.add(path, `credentials.${key} is part of the path, so its field needs a pattern (e.g. pattern: "[0-9]+")`);
        if (f === undefined) this.add(path, `unknown variable "${shown}": not a credential field of this variant`);
        continue;
      }
      if (opts.pathParams && root !== 'params') {
        this.add(path, `path templates may only use params${scope.pathCredentials !== undefined ? ' and credential fields' : ''}, not "${shown}"`);
        continue;
      }
      if (key === undefined) {
        if (root === 'params' || root === 'credentials' || root === 'config') {
          if (opts.pathParams) this.add(path, `path templates must name one param, not all of "${root}"`);
        }
        continue;
      }
      if (root === 'params' && scope.params !== undefined) {
        const p = scope.params[key];
        if (p === undefined) {
          const declared = Object.keys(scope.params);
          this.add(path, `"${shown}" is not a declared param of this action (declared: ${declared.length ? declared.join(', ') : 'none'})`);
        } else if (opts.pathParams && p.required !== true) {
          this.add(path, `path parameter "${key}" must be declared with required: true`);
        }
      } else if (root === 'credentials' && scope.credentials !== undefined && !scope.credentials.has(key)) {
        this.add(path, `"${shown}" is not a credential field (fields: ${[...scope.credentials].join(', ')})`);
      } else if (root === 'call' && !CALL_KEYS.has(key)) {
        this.add(path, `"${shown}" is not a call value (call.id is)`);
      } else if (root === 'config' && !scope.config.has(key) && key !== 'region') {
        this.add(path, `"${shown}" is not a declared config value (declared: ${[...scope.config].join(', ') || 'none'})`);
      }
    }
  }

  tree(path: (string | number)[], value: unknown, scope: Scope): TemplateTree | undefined {
    let tree: TemplateTree;
    try {
      tree = compileTree(value);
    } catch (e) {
      this.add(path, e instanceof TemplateSyntaxError ? `template error: ${e.message}` : String(e));
      return undefined;
    }
    for (const [sub, t] of treeTemplates(tree)) this.references([...path, ...sub], t, scope);
    return tree;
  }
}

function describeAjvError(e: ErrorObject): string {
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown key "${String(e.params['additionalProperty'])}"`;
    case 'required':
      return `missing required key "${String(e.params['missingProperty'])}"`;
    case 'enum':
      return `must be one of: ${(e.params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(e.params['allowedValue'])}`;
    case 'propertyNames':
      return `invalid name "${String(e.params['propertyName'])}"`;
    case 'discriminator':
      return e.params['error'] === 'mapping' ? `unknown type ${JSON.stringify(e.params['tagValue'] ?? '')}` : `missing "type"`;
    default:
      return e.message ?? 'invalid';
  }
}

function pointerToPath(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Parse and validate manifest text. Throws ManifestError with every problem found. */
export function loadManifestText(text: string, file: string): LoadedManifest {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: true });
  const check = new Checker(file, doc, lines);
  if (doc.errors.length > 0) {
    for (const err of doc.errors) {
      const pos = err.linePos?.[0];
      check.problems.push({
        file,
        location: '',
        ...(pos ? { line: pos.line, column: pos.col } : {}),
        message: `YAML ${err.code === 'DUPLICATE_KEY' ? 'duplicate key' : 'syntax error'}: ${err.message.split('\n')[0]}`,
      });
    }
    throw new ManifestError(check.problems);
  }
  const raw: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (!manifestValid(raw)) {
    validateManifest ??= ajv.compile<Manifest>(MANIFEST_SCHEMA);
    validateManifest(raw);
    const seen = new Set<string>();
    for (const e of validateManifest.errors ?? []) {
      // oneOf/if branches produce noise once the discriminator has named the real problem.
      if (e.keyword === 'oneOf' || e.keyword === 'if') continue;
      let path = pointerToPath(e.instancePath);
      if (e.keyword === 'additionalProperties') path = [...path, String(e.params['additionalProperty'])];
      const msg = describeAjvError(e);
      const key = `${path.join('.')}|${msg}`;
      if (seen.has(key)) continue;
      seen.add(key);
      check.add(path, msg);
    }
    throw new ManifestError(check.problems);
  }
  const loaded = semanticCheck(raw, file, check);
  if (check.problems.length > 0) throw new ManifestError(check.problems);
  return loaded;
}

/** Load a manifest file. Throws ManifestError (with file and locations) on any problem. */
export function loadManifestFile(file: string): LoadedManifest {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ManifestError([{ file, location: '', message: `cannot read file: ${(e as Error).message}` }]);
  }
  return loadManifestText(text, file);
}

// call.id: one random id per logical call, the same across its retries (idempotency keys).
const REQUEST_ROOTS = new Set(['params', 'credentials', 'config', 'call']);
const CALL_KEYS: ReadonlySet<string> = new Set(['id']);
const RESPONSE_ROOTS = new Set(['body', 'headers', 'params', 'status']);
// Error rules are connector-wide: they may read the failing action's params, unchecked by name.
const ERROR_ROOTS = new Set(['body', 'headers', 'status', 'params']);
const MATCH_ROOTS = new Set([...ERROR_ROOTS, 'matched']);
const AUTH_ROOTS = new Set(['credentials', 'config']);
const FOLLOW_UP_ROOTS = new Set(['body', 'headers']);

function semanticCheck(m: Manifest, file: string, check: Checker): LoadedManifest {
  const config = new Set(Object.keys(m.config ?? {}));
  const allCredentialFields = new Set(m.auth.flatMap((v) => Object.keys(v.fields)));

  // Aliases match case-insensitively, so two that differ only in case are one alias written twice.
  const aliasSeen = new Set<string>();
  (m.aliases ?? []).forEach((a, i) => {
    const key = a.trim().toLowerCase();
    if (aliasSeen.has(key)) check.add(['aliases', i], `alias "${a}" repeats another alias (aliases match case-insensitively)`);
    aliasSeen.add(key);
  });

  // Connector-level headers.
  const headers: [string, Template][] = [];
  for (const [name, src] of Object.entries(m.headers ?? {})) {
    if (src === undefined) continue;
    const t = check.template(['headers', name], src, { roots: AUTH_ROOTS, credentials: allCredentialFields, config });
    if (t) headers.push([name, t]);
  }

  // Auth variants: unique names, compiled credential schemas and header templates.
  const auth: CompiledAuthVariant[] = [];
  const variantNames = new Set<string>();
  m.auth.forEach((v: AuthVariant, i) => {
    if (variantNames.has(v.name)) check.add(['auth', i, 'name'], `duplicate auth variant name "${v.name}"`);
    variantNames.add(v.name);
    let badPattern = false;
    for (const [k, f] of Object.entries(v.fields)) {
      if (f?.multiline === true && f.type !== 'string') check.add(['auth', i, 'fields', k, 'multiline'], `multiline is for string fields; "${k}" is ${f.type}`);
      if (f?.pattern === undefined) continue;
      try {
        new RegExp(anchored(f.pattern), 'u');
      } catch (e) {
        badPattern = true;
        check.add(['auth', i, 'fields', k, 'pattern'], `invalid regular expression: ${(e as Error).message}`);
      }
    }
    if (badPattern) return;
    const scope: Scope = { roots: AUTH_ROOTS, credentials: new Set(Object.keys(v.fields)), config };
    let header = 'Authorization';
    let source: string;
    if (v.type === 'basic') {
      const username = check.template(['auth', i, 'username'], v.username, scope);
      const password = check.template(['auth', i, 'password'], v.password, scope);
      for (const [root, key] of password?.references ?? []) {
        if (root === 'credentials' && key !== undefined && v.fields[key] !== undefined && v.fields[key]?.secret !== true) {
          check.add(['auth', i, 'fields', key], `"${key}" is read by the basic password, so it must be declared secret: true (never logged or returned)`);
        }
      }
      if (username && password) auth.push(compiledVariant(v, basicTemplate(username, password)));
      return;
    }
    if (v.type === 'minted_bearer') {
      const key = check.template(['auth', i, 'jwt', 'private_key'], v.jwt.private_key, scope);
      for (const [root, k] of key?.references ?? []) {
        if (root === 'credentials' && k !== undefined && v.fields[k] !== undefined && v.fields[k]?.secret !== true) {
          check.add(['auth', i, 'fields', k], `"${k}" is read by jwt.private_key, so it must be declared secret: true (never logged or returned)`);
        }
      }
      const claims: [string, Template][] = [];
      for (const [name, src] of Object.entries(v.jwt.claims)) {
        if (name === 'iat' || name === 'exp') {
          check.add(['auth', i, 'jwt', 'claims', name], `${name} is set by the interpreter (jwt.backdate_seconds, jwt.lifetime_seconds); remove it`);
          continue;
        }
        const t = src === undefined ? undefined : check.template(['auth', i, 'jwt', 'claims', name], src, scope);
        if (t) claims.push([name, t]);
      }
      if (v.mint.expires_at !== undefined && v.mint.expires_in !== undefined) check.add(['auth', i, 'mint'], 'give expires_at or expires_in, not both');
      const resScope: Scope = { roots: new Set(['body', 'headers', 'status']), config };
      const token = check.template(['auth', i, 'mint', 'token'], v.mint.token, resScope);
      const expiresAt = v.mint.expires_at !== undefined ? check.template(['auth', i, 'mint', 'expires_at'], v.mint.expires_at, resScope) : undefined;
      const expiresIn = v.mint.expires_in !== undefined ? check.template(['auth', i, 'mint', 'expires_in'], v.mint.expires_in, resScope) : undefined;
      const mintCheck = compileCheck(check, { request: v.mint.request }, ['auth', i, 'mint'], new Set(Object.keys(v.fields)), config, v.fields);
      if (key && token && mintCheck) {
        // The header's value is the minted token, which only the engine holds; the template stands for it in listings.
        const placeholder: Template = { source: 'Bearer <minted token>', references: [], single: false, render: () => undefined, renderPath: () => '' };
        const compiled = compiledVariant(v, placeholder);
        compiled.mint = {
          privateKey: key,
          claims,
          backdateSeconds: v.jwt.backdate_seconds ?? 60,
          lifetimeSeconds: v.jwt.lifetime_seconds ?? 540,
          action: { ...mintCheck.action, entity: 'auth', name: 'create', retrySafe: false },
          token,
          ...(expiresAt ? { expiresAt } : {}),
          ...(expiresIn ? { expiresIn } : {}),
          renewBeforeSeconds: v.mint.renew_before_seconds ?? 60,
        };
        auth.push(compiled);
      }
      return;
    }
    if (v.type === 'bearer') source = `Bearer ${v.token}`;
    else if (v.type === 'api_key') {
      header = v.header;
      source = v.value;
    } else {
      if (v.fields['access_token'] === undefined) check.add(['auth', i, 'fields'], 'an oauth2 variant must declare the access_token field');
      if (v.refreshes && v.fields['refresh_token'] === undefined) check.add(['auth', i, 'fields'], 'refreshes: true needs a refresh_token field');
      if (v.expires && v.fields['expires_at'] === undefined) check.add(['auth', i, 'fields'], 'expires: true needs an expires_at field (Unix seconds)');
      header = v.apply?.header ?? 'Authorization';
      source = v.apply?.value ?? 'Bearer {{credentials.access_token}}';
    }
    const where = v.type === 'bearer' ? 'token' : v.type === 'api_key' ? 'value' : 'apply';
    const value = check.template(['auth', i, where], source, scope);
    // A header cannot hold a line break: a multiline field (a PEM key) is for signing, not for sending.
    for (const [root, k] of value?.references ?? []) {
      if (root === 'credentials' && k !== undefined && v.fields[k]?.multiline === true) check.add(['auth', i, where], `"${k}" is multiline, and a header value cannot hold line breaks`);
    }
    const followUps = v.type === 'oauth2' ? followUpsOf(check, m, i, v, scope) : undefined;
    if (value) auth.push({ ...compiledVariant(v, value, header), ...(followUps !== undefined ? { followUps } : {}) });
  });

  // Base URLs with variables (default, regions, per-variant).
  const baseUrls = new Map<string, Template>();
  const baseUrl = (at: (string | number)[], source: string | undefined, credentialFields: Record<string, { pattern?: string; secret?: boolean } | undefined>): void => {
    if (source === undefined || !source.includes('{{')) return;
    const t = check.template(at, source, { roots: AUTH_ROOTS, credentials: new Set(Object.keys(credentialFields)), config });
    if (t === undefined) return;
    if (/^https?:\/\/\{\{[^}]*\}\}(?:[/:]|$)/.test(source)) check.add(at, 'a base URL variable may be one label of the host (https://{{config.subdomain}}.example.com) or a path segment, not the whole host');
    for (const ref of t.references) {
      const [root, key] = ref;
      if (key === undefined || ref.length > 2) {
        check.add(at, `a base URL variable must name one field (config.<name> or credentials.<name>), not "${ref.join('.')}"`);
        continue;
      }
      if (root === 'config') {
        const f = m.config?.[key];
        if (f !== undefined && f.pattern === undefined && f.enum === undefined) check.add(['config', key], `"${key}" is a variable of the base URL, so it needs a pattern (or enum) that keeps the request on the vendor's host, e.g. pattern: "[a-z0-9][a-z0-9-]{0,62}"`);
      } else if (root === 'credentials') {
        const f = credentialFields[key];
        if (f !== undefined && f.pattern === undefined) check.add(at, `credentials.${key} is a variable of the base URL, so its field needs a pattern that keeps the request on the vendor's host, e.g. pattern: "[a-z0-9][a-z0-9-]{0,62}"`);
        if (f?.secret === true) check.add(at, `credentials.${key} is secret, and a base URL is not: use a non-secret field`);
      }
    }
    if (t.single) check.add(at, 'a base URL must be more than one variable');
    baseUrls.set(source, t);
  };
  const anyFields = Object.assign({}, ...m.auth.map((v) => v.fields)) as Record<string, { pattern?: string; secret?: boolean } | undefined>;
  baseUrl(['base_url', 'default'], m.base_url.default, anyFields);
  for (const [r, u] of Object.entries(m.base_url.regions ?? {})) baseUrl(['base_url', 'regions', r], u, anyFields);
  m.auth.forEach((v, i) => baseUrl(['auth', i, 'base_url'], v.base_url, v.fields));
  // OAuth URLs may name the account's host the same way (https://{{credentials.subdomain}}.zendesk.com/oauth/tokens).
  m.auth.forEach((v, i) => {
    if (v.type !== 'oauth2') return;
    for (const key of ['authorize_url', 'token_url'] as const) {
      if (!v[key].includes('{{')) continue;
      baseUrl(['auth', i, key], v[key], v.fields);
      const t = baseUrls.get(v[key]);
      if (t !== undefined && t.references.some(([root]) => root !== 'credentials')) check.add(['auth', i, key], 'an OAuth URL variable must be a credential field of its variant (credentials.<name>)');
    }
  });
  for (const [k, f] of Object.entries(m.config ?? {})) {
    if (f?.pattern === undefined) continue;
    let re: RegExp | undefined;
    try {
      re = new RegExp(anchored(f.pattern), 'u');
    } catch (e) {
      check.add(['config', k, 'pattern'], `invalid regular expression: ${(e as Error).message}`);
    }
    if (re !== undefined && typeof f.default === 'string' && !re.test(f.default)) check.add(['config', k, 'default'], `the default does not match the pattern ${f.pattern}`);
  }

  // Errors.
  const errorMessage = m.errors?.message !== undefined ? check.template(['errors', 'message'], m.errors.message, { roots: ERROR_ROOTS, config }) : undefined;
  const errorRules = (key: 'in_body' | 'on_status'): LoadedManifest['bodyErrors'] => {
    const out: LoadedManifest['bodyErrors'] = [];
    (m.errors?.[key] ?? []).forEach((rule, i) => {
      const at = ['errors', key, i];
      // A match rule's templates may also read `matched`, the error entry that matched.
      const scope: Scope = { roots: rule.match !== undefined ? MATCH_ROOTS : ERROR_ROOTS, config };
      if ((rule.match === undefined) === (rule.when === undefined)) check.add(at, 'an error rule needs exactly one of when (a template) or match (a path and values)');
      let test: LoadedManifest['bodyErrors'][number]['test'] | undefined;
      if (rule.match !== undefined) test = compileErrorMatch(rule.match.path, rule.match.in);
      else if (rule.when !== undefined) {
        const when = check.template([...at, 'when'], rule.when, scope);
        if (when) test = (ctx) => (truthy(when.render(ctx)) ? {} : null);
      }
      if (rule.status !== undefined && test !== undefined) {
        const statuses = new Set(rule.status);
        const inner = test;
        test = (ctx) => (statuses.has(ctx['status'] as number) ? inner(ctx) : null);
      }
      const message = rule.message !== undefined ? check.template([...at, 'message'], rule.message, scope) : undefined;
      const retry = rule.retry_after_seconds !== undefined ? check.template([...at, 'retry_after_seconds'], rule.retry_after_seconds, scope) : undefined;
      if (test) out.push({ test, code: rule.code, notExecuted: rule.not_executed === true, ...(message ? { message } : {}), ...(retry ? { retryAfterSeconds: retry } : {}) });
    });
    return out;
  };
  const bodyErrors = errorRules('in_body');
  const statusErrors = errorRules('on_status');
  let errorList: LoadedManifest['errorList'];
  const el = m.errors?.list;
  if (el !== undefined) {
    const items = check.template(['errors', 'list', 'items'], el.items, { roots: ERROR_ROOTS, config });
    const entryScope: Scope = { roots: new Set(['entry']), config };
    const path = el.path !== undefined ? check.template(['errors', 'list', 'path'], el.path, entryScope) : undefined;
    const message = el.message !== undefined ? check.template(['errors', 'list', 'message'], el.message, entryScope) : undefined;
    if (items) errorList = { items, ...(path ? { path } : {}), ...(message ? { message } : {}) };
  }

  const listMeta = Object.keys(m.list_meta ?? {});
  for (const [k, schema] of Object.entries(m.list_meta ?? {})) {
    const bad = unknownKeywords(schema);
    if (bad !== undefined) check.add(['list_meta', k], bad);
  }
  const entities = new Map<string, CompiledEntity>();
  for (const [entityName, entity] of Object.entries(m.entities)) {
    if (entity === undefined) continue;
    const base = ['entities', entityName];
    const recordProps = (entity.record['properties'] ?? {}) as Record<string, unknown>;
    if (entity.record['type'] !== 'object') check.add([...base, 'record', 'type'], 'a record schema must have type: object');
    if (recordProps[entity.primary_key] === undefined) {
      check.add([...base, 'primary_key'], `primary key "${entity.primary_key}" is not a property of the record schema`);
    }
    try {
      if (!strictlyValid(entity.record)) {
        ajv.compile(entity.record);
        const bad = unknownKeywords(entity.record);
        if (bad !== undefined) check.add([...base, 'record'], bad);
      }
    } catch (e) {
      check.add([...base, 'record'], `invalid JSON Schema: ${(e as Error).message}`);
    }
    const actions = new Map<ActionName, CompiledAction>();
    for (const [actionName, action] of Object.entries(entity.actions)) {
      if (action === undefined || !ACTION_NAMES.includes(actionName as ActionName)) continue;
      const name = actionName as ActionName;
      const at = [...base, 'actions', name];
      const params = (action.params ?? {}) as Record<string, { required?: boolean }>;
      const reqScope: Scope = { roots: REQUEST_ROOTS, params, credentials: allCredentialFields, config };
      const resScope: Scope = { roots: RESPONSE_ROOTS, params, config };

      let validateParams;
      try {
        const schema = paramsSchema(action);
        validateParams = strictCompile(schema);
        if (validateParams === undefined) {
          validateParams = ajv.compile(schema);
          // Param by param, to name the one at fault.
          for (const [param, schema] of Object.entries(action.params ?? {})) {
            const bad = unknownKeywords(schema === undefined ? {} : paramsSchema({ ...action, params: { [param]: schema } }));
            if (bad !== undefined) check.add([...at, 'params', param], bad);
          }
        }
      } catch (e) {
        check.add([...at, 'params'], `invalid param schema: ${(e as Error).message}`);
        continue;
      }
      const requiresAny = (action.requires_any ?? []).map((group) => [...group]);
      for (const [i, group] of requiresAny.entries()) {
        for (const p of group) if (params[p] === undefined) check.add([...at, 'requires_any', String(i)], `"${p}" is not a param of this action (params: ${Object.keys(params).join(', ') || 'none'})`);
      }
      const request = compileRequest(check, [...at, 'request'], action.request, reqScope);

      const res = action.response;
      const records = res.records !== undefined ? check.template([...at, 'response', 'records'], res.records, resScope) : undefined;
      const record = res.record !== undefined ? check.template([...at, 'response', 'record'], res.record, resScope) : undefined;
      const notFoundWhen = res.not_found_when !== undefined ? check.template([...at, 'response', 'not_found_when'], res.not_found_when, resScope) : undefined;
      const onEmpty = compileOnEmpty(check, at, name, res.on_empty, entity.actions, resScope);
      const map: [string, Template][] = [];
      for (const [k, src] of Object.entries(res.map ?? {})) {
        const t = src === undefined ? undefined : check.template([...at, 'response', 'map', k], src, { roots: new Set(['record', 'params']), params, config });
        if (t) map.push([k, t]);
      }
      const meta: [string, Template][] = [];
      if (LIST_ACTIONS.has(name)) {
        if (res.records === undefined) check.add([...at, 'response'], `a ${name} action needs response.records`);
        const given = Object.keys(res.meta ?? {});
        for (const k of listMeta) if (!given.includes(k)) check.add([...at, 'response', 'meta'], `missing meta field "${k}" declared in list_meta`);
        for (const k of given) {
          if (!listMeta.includes(k)) check.add([...at, 'response', 'meta', k], `meta field "${k}" is not declared in list_meta (declared: ${listMeta.join(', ') || 'none'})`);
          const src = res.meta?.[k];
          const t = src === undefined ? undefined : check.template([...at, 'response', 'meta', k], src, resScope);
          if (t) meta.push([k, t]);
        }
      } else {
        if (res.record === undefined) check.add([...at, 'response'], `a ${name} action needs response.record`);
        if (res.records !== undefined) check.add([...at, 'response', 'records'], `records is for list actions; use record`);
        if (action.pagination !== undefined) check.add([...at, 'pagination'], 'pagination is for list actions');
      }

      let pagination: CompiledAction['pagination'];
      const pg = action.pagination;
      if (pg !== undefined) {
        const pat = [...at, 'pagination'];
        if ('param' in pg && params[pg.param] === undefined) check.add([...pat, 'param'], `pagination param "${pg.param}" is not a declared param of this action`);
        if ((pg.type === 'offset' || pg.type === 'page') && pg.limit_param !== undefined && params[pg.limit_param] === undefined) check.add([...pat, 'limit_param'], `"${pg.limit_param}" is not a declared param of this action`);
        const next = pg.type === 'cursor' || pg.type === 'graphql_cursor' || pg.type === 'scroll' || pg.type === 'next_url' ? check.template([...pat, 'next'], pg.next, resScope) : undefined;
        if ((pg.type === 'next_url' || pg.type === 'link_header') && action.request.method !== 'GET') check.add([...pat, 'type'], `${pg.type} follows the URL of the next page with GET; this request is a ${action.request.method} (use cursor with a body param)`);
        const hasMore = 'has_more' in pg && pg.has_more !== undefined ? check.template([...pat, 'has_more'], pg.has_more, resScope) : undefined;
        pagination = { def: pg, ...(next ? { next } : {}), ...(hasMore ? { hasMore } : {}) };
      }

      if (request) {
        actions.set(name, {
          entity: entityName,
          name,
          def: action,
          validateParams,
          requiresAny,
          request,
          ...(records ? { records } : {}),
          ...(record ? { record } : {}),
          meta,
          map,
          ...(notFoundWhen ? { notFoundWhen } : {}),
          ...(onEmpty ? { onEmpty } : {}),
          ...(pagination ? { pagination } : {}),
          retrySafe: action.retry_safe ?? (LIST_ACTIONS.has(name) || name === 'get'),
        });
      }
    }

    // Sync settings refer to actions and params of this entity.
    const sync = entity.sync;
    if (sync !== undefined) {
      const sat = [...base, 'sync'];
      const fullAction = sync.action ?? 'list';
      const list = entity.actions[fullAction];
      if (list === undefined) check.add(sat, `sync needs a ${fullAction} action on this entity`);
      else {
        const lp = list.params ?? {};
        for (const k of Object.keys(sync.params ?? {})) if (lp[k] === undefined) check.add([...sat, 'params', k], `"${k}" is not a param of ${entityName}.${fullAction}`);
      }
      const inc = sync.incremental;
      const incAction = inc?.action ?? 'list';
      const incDef = entity.actions[incAction];
      if (inc && incAction !== fullAction && incDef === undefined) check.add([...sat, 'incremental', 'action'], `"${incAction}" is not an action of ${entityName}`);
      if (inc && incDef !== undefined) {
        const ip = incDef.params ?? {};
        const fixed = incAction === fullAction ? {} : (inc.params ?? {});
        for (const k of Object.keys(fixed)) if (ip[k] === undefined) check.add([...sat, 'incremental', 'params', k], `"${k}" is not a param of ${entityName}.${incAction}`);
        if ((inc.mode ?? 'param') === 'param') {
          if (inc.param === undefined) check.add([...sat, 'incremental'], 'incremental mode param needs the list param to set ("param")');
          else if (ip[inc.param] === undefined) check.add([...sat, 'incremental', 'param'], `"${inc.param}" is not a param of ${entityName}.${incAction}`);
        }
      }
      for (const only of ['changes', 'scroll'] as const) {
        const used = only === 'changes' ? incAction === 'changes' : fullAction === 'scroll';
        if (entity.actions[only] !== undefined && !used) check.add([...base, 'actions', only], `the sync-only ${only} action is not used by sync (set sync.${only === 'changes' ? 'incremental.action' : 'action'}: ${only})`);
      }
      if (sync.for_each !== undefined) {
        const fe = sync.for_each;
        const parent = m.entities[fe.entity];
        if (parent === undefined || parent.actions['list'] === undefined) check.add([...sat, 'for_each', 'entity'], `"${fe.entity}" is not an entity with a list action`);
        if ((entity.actions['list']?.params ?? {})[fe.param] === undefined) check.add([...sat, 'for_each', 'param'], `"${fe.param}" is not a param of ${entityName}.list`);
        check.template([...sat, 'for_each', 'value'], fe.value, { roots: new Set(['record']), config });
        for (const [k, t] of Object.entries(fe.also ?? {})) {
          if ((entity.actions['list']?.params ?? {})[k] === undefined) check.add([...sat, 'for_each', 'also', k], `"${k}" is not a param of ${entityName}.list`);
          else if (k === fe.param) check.add([...sat, 'for_each', 'also', k], `"${k}" is already for_each.param`);
          if (t !== undefined) check.template([...sat, 'for_each', 'also', k], t, { roots: new Set(['record']), config });
        }
      }
      if (sync.removals !== undefined) {
        const rm = sync.removals;
        const rat = [...sat, 'removals'];
        const source = m.entities[rm.entity];
        const lp = source?.actions['list']?.params ?? {};
        if (source === undefined || source.actions['list'] === undefined) check.add([...rat, 'entity'], `"${rm.entity}" is not an entity with a list action`);
        else {
          if (rm.since_param !== undefined && lp[rm.since_param] === undefined) check.add([...rat, 'since_param'], `"${rm.since_param}" is not a param of ${rm.entity}.list`);
          for (const k of Object.keys(rm.params ?? {})) if (lp[k] === undefined) check.add([...rat, 'params', k], `"${k}" is not a param of ${rm.entity}.list`);
          if (sync.for_each !== undefined && lp[sync.for_each.param] === undefined) check.add([...rat, 'entity'], `with for_each, ${rm.entity}.list needs the param "${sync.for_each.param}" too`);
        }
        if (sync.incremental === undefined) check.add(rat, 'removals need incremental (they apply to incremental runs, since the last high-water mark)');
        check.template([...rat, 'id'], rm.id, { roots: new Set(['record']), config });
        if (rm.when !== undefined) check.template([...rat, 'when'], rm.when, { roots: new Set(['record']), config });
      }
      if (sync.deleted_when !== undefined) check.template([...sat, 'deleted_when'], sync.deleted_when, { roots: new Set(['record']), config });
      if (sync.hydrate !== undefined) {
        const get = entity.actions['get'];
        if (get === undefined) check.add([...sat, 'hydrate', 'action'], `hydrate uses ${entityName}.get, which this entity does not declare`);
        else {
          for (const [k, src] of Object.entries(sync.hydrate.params)) {
            if ((get.params ?? {})[k] === undefined) check.add([...sat, 'hydrate', 'params', k], `"${k}" is not a param of ${entityName}.get`);
            if (src !== undefined) check.template([...sat, 'hydrate', 'params', k], src, { roots: new Set(['record']), config });
          }
        }
      }
    }
    if (entity.search !== undefined && entity.sync === undefined) {
      check.add(
        [...base, 'search'],
        'search fields need a sync: search reads only records the hosted service has synced, so without a sync block this entity\'s search would always return []. Add sync (e.g. sync: { action: list }) or remove search',
      );
    }
    if (entity.search !== undefined) {
      for (const [field, source] of Object.entries(entity.search.sources ?? {})) {
        if (entity.search.fields[field] === undefined) check.add([...base, 'search', 'sources', field], `"${field}" is not a search field`);
        if (source === undefined || source === '') check.add([...base, 'search', 'sources', field], 'empty source path');
      }
    }
    entities.set(entityName, { name: entityName, def: entity, actions });
  }

  const credentialCheck = m.check !== undefined ? compileCheck(check, m.check, ['check'], allCredentialFields, config) : undefined;
  m.auth.forEach((v: AuthVariant, i) => {
    const compiled = auth.find((a) => a.def === v);
    if (v.check === undefined || compiled === undefined) return;
    const own = compileCheck(check, v.check, ['auth', i, 'check'], new Set(Object.keys(v.fields)), config);
    if (own !== undefined) compiled.check = own;
  });
  const webhooks = m.webhooks === undefined ? undefined : compileWebhooks(m.webhooks as WebhooksDef, new Map([...entities].map(([n, e]) => [n, { hasGet: e.actions.has('get'), synced: e.def.sync !== undefined, params: new Map([...e.actions].map(([a, act]) => [a, Object.keys(act.def.params ?? {})])) }])), (path, msg) => check.add(['webhooks', ...path], msg));
  const vendorDescription = m.vendor_description !== undefined ? checkVendorDescription(check, file, m.vendor_description) : undefined;

  return {
    file,
    manifest: m,
    type: m.type,
    headers,
    auth,
    entities,
    ...(errorMessage ? { errorMessage } : {}),
    bodyErrors,
    statusErrors,
    baseUrls,
    ...(errorList ? { errorList } : {}),
    ...(credentialCheck ? { check: credentialCheck } : {}),
    ...(webhooks !== undefined ? { webhooks } : {}),
    ...(vendorDescription ? { vendorDescription } : {}),
  };
}

/** The hosts a follow_up request may reach: the variant's authorize and token hosts, and every literal base URL host. */
function followUpHosts(m: Manifest, v: OAuth2Auth): Set<string> {
  const hosts = new Set<string>();
  const urls = [v.authorize_url, v.token_url, v.base_url, m.base_url.default, ...Object.values(m.base_url.regions ?? {}), ...m.auth.map((a) => a.base_url)];
  for (const u of urls) {
    const host = u === undefined ? undefined : /^https?:\/\/([^/?#]+)/.exec(u)?.[1];
    if (host !== undefined && !host.includes('{{')) hosts.add(host.toLowerCase());
  }
  return hosts;
}

/** Check and compile an oauth2 variant's follow_up requests. */
function followUpsOf(check: Checker, m: Manifest, i: number, v: OAuth2Auth, scope: Scope): CompiledFollowUp[] | undefined {
  if (v.follow_up === undefined) return undefined;
  const hosts = followUpHosts(m, v);
  const filled = new Set<string>();
  const out: CompiledFollowUp[] = [];
  v.follow_up.forEach((f, j) => {
    const at = ['auth', i, 'follow_up', j];
    let ok = true;
    const url = f.request.url;
    let host: string | undefined;
    try {
      host = new URL(url).host.toLowerCase();
    } catch {
      host = undefined;
    }
    if (url.includes('{{')) {
      check.add([...at, 'request', 'url'], 'a follow_up URL may not hold variables: it is where the new tokens are sent');
      ok = false;
    } else if (host === undefined || !hosts.has(host)) {
      check.add([...at, 'request', 'url'], `a follow_up URL must be on a host of this manifest (${[...hosts].join(', ') || 'none'}): it is where the new tokens are sent`);
      ok = false;
    }
    const headers: [string, Template][] = [];
    for (const [name, src] of Object.entries(f.request.headers ?? {})) {
      if (src === undefined) continue;
      const t = check.template([...at, 'request', 'headers', name], src, scope);
      if (t) headers.push([name, t]);
      else ok = false;
    }
    const fields: [string, Template][] = [];
    for (const [name, src] of Object.entries(f.fields)) {
      if (src === undefined) continue;
      const field = v.fields[name];
      if (field === undefined) {
        check.add([...at, 'fields', name], `"${name}" is not a credential field of this variant (fields: ${Object.keys(v.fields).join(', ')})`);
        ok = false;
      } else if (field.secret === true || name === 'access_token' || name === 'refresh_token' || name === 'expires_at') {
        check.add([...at, 'fields', name], `"${name}" is ${field.secret === true ? 'secret' : 'a token field'}: a follow_up fills non-secret fields only`);
        ok = false;
      } else if (filled.has(name)) {
        check.add([...at, 'fields', name], `"${name}" is filled by an earlier follow_up too`);
        ok = false;
      }
      filled.add(name);
      const t = check.template([...at, 'fields', name], src, { roots: FOLLOW_UP_ROOTS, config: scope.config });
      if (t) fields.push([name, t]);
      else ok = false;
    }
    if (ok) out.push({ method: f.request.method ?? 'GET', url, headers, fields, ...(f.missing !== undefined ? { missing: f.missing } : {}), onRefresh: f.on_refresh === true });
  });
  return out;
}

function compiledVariant(v: AuthVariant, value: Template, header = 'Authorization'): CompiledAuthVariant {
  return {
    def: v,
    validate: ajv.compile(credentialsSchema(v)),
    header,
    value,
    secretFields: Object.entries(v.fields)
      .filter(([, f]) => f?.secret === true)
      .map(([k]) => k),
  };
}

/** The Authorization value of a basic variant, as a template over its username and password templates. */
function basicTemplate(username: Template, password: Template): Template {
  const render = (ctx: Record<string, unknown>): unknown => basicAuthorization(username.render(ctx), password.render(ctx));
  return { source: `Basic base64(${username.source}:${password.source})`, references: [...username.references, ...password.references], single: false, render, renderPath: (ctx) => String(render(ctx) ?? '') };
}

/**
 * vendor_description.path: relative to the manifest's directory, inside it (a connector's folder
 * is self-contained, and is what the package ships), and an existing file.
 */
function checkVendorDescription(check: Checker, file: string, vd: NonNullable<Manifest['vendor_description']>): LoadedManifest['vendorDescription'] {
  const at = ['vendor_description', 'path'];
  const dir = dirname(resolve(file));
  const target = resolve(dir, vd.path);
  const inside = relative(dir, target);
  if (isAbsolute(vd.path) || inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    check.add(at, `"${vd.path}" must be a file inside the manifest's directory (${dir}), given relative to it, e.g. openapi.yaml`);
    return undefined;
  }
  let isFile = false;
  try {
    isFile = statSync(target).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) {
    check.add(at, `no file ${vd.path} beside the manifest (looked for ${target}); vendor the description there or fix the path`);
    return undefined;
  }
  return { file: target, format: vd.format };
}

/** Compile a request declaration (an action's, or the check's); undefined when its path does not compile. */
function compileRequest(check: Checker, at: (string | number)[], r: Request, reqScope: Scope): CompiledRequest | undefined {
  const path = check.template([...at, 'path'], r.path, reqScope, { pathParams: true });
  if (!r.path.startsWith('/')) check.add([...at, 'path'], 'the path must start with "/"');
  const query: [string, Template][] = [];
  for (const [k, src] of Object.entries(r.query ?? {})) {
    const t = src === undefined ? undefined : check.template([...at, 'query', k], src, reqScope);
    if (t) query.push([k, t]);
  }
  const reqHeaders: [string, Template][] = [];
  for (const [k, src] of Object.entries(r.headers ?? {})) {
    const t = src === undefined ? undefined : check.template([...at, 'headers', k], src, reqScope);
    if (t) reqHeaders.push([k, t]);
  }
  const body = r.body !== undefined ? check.tree([...at, 'body'], r.body, reqScope) : undefined;
  if (r.body_encoding === 'form') {
    if (r.body === undefined) check.add([...at, 'body_encoding'], 'body_encoding: form needs a body (an object whose keys are the form fields)');
    else if (body !== undefined && body.kind !== 'object' && body.kind !== 'template') check.add([...at, 'body'], 'a form body must be an object (its keys are the form fields), or one template that renders one');
    if (r.graphql !== undefined) check.add([...at, 'body_encoding'], 'GraphQL requests are sent as JSON; remove body_encoding');
    if (r.method === 'GET' || r.method === 'DELETE') check.add([...at, 'body_encoding'], `a ${r.method} request carries no body; send these values as query params`);
  }
  let graphql: CompiledRequest['graphql'];
  if (r.graphql !== undefined) {
    if (r.body !== undefined) check.add(at, 'use either body or graphql, not both');
    if (r.method !== 'POST') check.add([...at, 'method'], 'GraphQL requests are sent with POST');
    const q = check.template([...at, 'graphql', 'query'], r.graphql.query, reqScope);
    const vars = r.graphql.variables !== undefined ? check.tree([...at, 'graphql', 'variables'], r.graphql.variables, reqScope) : undefined;
    if (q) graphql = { query: q, ...(vars ? { variables: vars } : {}) };
  }
  if (path === undefined) return undefined;
  return { method: r.method, path, query, headers: reqHeaders, ...(body ? { body } : {}), bodyEncoding: r.body_encoding ?? 'json', ...(graphql ? { graphql } : {}) };
}

/** The credential check: its request as a params-less get-shaped action whose record is the whole body. */
function compileCheck(
  check: Checker,
  c: CredentialCheck,
  at: (string | number)[],
  credentials: ReadonlySet<string>,
  config: ReadonlySet<string>,
  pathCredentials?: Scope['pathCredentials'],
): CompiledCheck | undefined {
  const request = compileRequest(check, [...at, 'request'], c.request, { roots: REQUEST_ROOTS, params: {}, credentials, config, ...(pathCredentials !== undefined ? { pathCredentials } : {}) });
  const resScope: Scope = { roots: new Set(['body', 'headers', 'status']), config };
  const success = c.success !== undefined ? check.template([...at, 'success'], c.success, resScope) : undefined;
  const info: [string, Template][] = [];
  for (const [k, src] of Object.entries(c.info ?? {})) {
    const t = src === undefined ? undefined : check.template([...at, 'info', k], src, resScope);
    if (t) info.push([k, t]);
  }
  const record = compileTemplate('{{body}}');
  if (request === undefined) return undefined;
  const action: CompiledAction = {
    entity: 'check',
    name: 'get',
    def: { request: c.request, response: { record: '{{body}}' } },
    validateParams: ajv.compile({ type: 'object' }),
    requiresAny: [],
    request,
    record,
    meta: [],
    map: [],
    retrySafe: true,
  };
  return { action, ...(success ? { success } : {}), info };
}
