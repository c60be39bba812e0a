/**
 * The `auth` section: unique variant names, credential field patterns, and each variant's header
 * template (basic, bearer, api_key, oauth2, minted_bearer) and an api_key variant's query parameters, compiled
 * with its credentials schema;
 * then the credential checks (connector-wide `check` and each variant's own).
 */
import type { AuthVariant } from '../../../generated/manifest.ts';
import type { ValidateFunction } from 'ajv';
import type { Template } from '../../templates/index.ts';
import { basicAuthorization } from '../basic-auth.ts';
import type { CompiledAuthVariant, CompiledCheck, CompiledGrant } from '../compile.ts';
import { anchored, credentialsSchema } from '../schemas.ts';
import { treeTemplates } from '../template-tree.ts';
import { AUTH_ROOTS, REQUEST_ROOTS, type CheckContext, type Scope } from './checker.ts';
import { checkCallbackFields, checkTokenFields, followUpsOf } from './auth-follow-up.ts';
import { ajv, lazyValidator, strictlyValid } from './json-schema.ts';
import { compileCheck } from './request.ts';

type Variant<T extends AuthVariant['type']> = Extract<AuthVariant, { type: T }>;

/** Auth variants: unique names, compiled credential schemas and header templates. */
export function checkAuth(ctx: CheckContext): CompiledAuthVariant[] {
  const auth: CompiledAuthVariant[] = [];
  const variantNames = new Set<string>();
  ctx.m.auth.forEach((v: AuthVariant, i) => {
    if (variantNames.has(v.name)) ctx.check.add(['auth', i, 'name'], `duplicate auth variant name "${v.name}"`);
    variantNames.add(v.name);
    if (!fieldsValid(ctx, v, i)) return;
    const scope: Scope = { roots: AUTH_ROOTS, credentials: new Set(Object.keys(v.fields)), config: ctx.config };
    const compiled =
      v.type === 'basic'
        ? basicVariant(ctx, v, i, scope)
        : v.type === 'minted_bearer'
          ? mintedVariant(ctx, v, i, scope)
          : v.type === 'client_credentials'
            ? grantVariant(ctx, v, i, scope)
            : headerVariant(ctx, v, i, scope);
    if (compiled !== undefined) auth.push(compiled);
  });
  return auth;
}

/** A variant's fields: multiline only on strings, patterns that compile. False when a pattern does not. */
function fieldsValid(ctx: CheckContext, v: AuthVariant, i: number): boolean {
  let badPattern = false;
  for (const [k, f] of Object.entries(v.fields)) {
    if (f?.multiline === true && f.type !== 'string')
      ctx.check.add(['auth', i, 'fields', k, 'multiline'], `multiline is for string fields; "${k}" is ${f.type}`);
    if (f?.pattern === undefined) continue;
    try {
      new RegExp(anchored(f.pattern), 'u');
    } catch (e) {
      badPattern = true;
      ctx.check.add(['auth', i, 'fields', k, 'pattern'], `invalid regular expression: ${(e as Error).message}`);
    }
  }
  return !badPattern;
}

/** Credential fields a template reads must be secret (`what` names the template). */
function secretReads(ctx: CheckContext, v: AuthVariant, i: number, t: Template | undefined, what: string): void {
  for (const [root, key] of t?.references ?? []) {
    if (root === 'credentials' && key !== undefined && v.fields[key] !== undefined && v.fields[key]?.secret !== true) {
      ctx.check.add(['auth', i, 'fields', key], `"${key}" is read by ${what}, so it must be declared secret: true (never logged or returned)`);
    }
  }
}

function basicVariant(ctx: CheckContext, v: Variant<'basic'>, i: number, scope: Scope): CompiledAuthVariant | undefined {
  const username = ctx.check.template(['auth', i, 'username'], v.username, scope);
  const password = ctx.check.template(['auth', i, 'password'], v.password, scope);
  secretReads(ctx, v, i, password, 'the basic password');
  return username && password ? compiledVariant(v, basicTemplate(username, password)) : undefined;
}

function mintedVariant(ctx: CheckContext, v: Variant<'minted_bearer'>, i: number, scope: Scope): CompiledAuthVariant | undefined {
  const { check, config } = ctx;
  const key = check.template(['auth', i, 'jwt', 'private_key'], v.jwt.private_key, scope);
  secretReads(ctx, v, i, key, 'jwt.private_key');
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
  // {{jwt}}: the signed JWT where the request puts it (an RFC 7523 grant's form field `assertion`).
  const mintRoots = new Set([...REQUEST_ROOTS, 'jwt']);
  const mintCheck = compileCheck(check, { request: v.mint.request }, ['auth', i, 'mint'], new Set(Object.keys(v.fields)), config, v.fields, mintRoots);
  if (!key || !token || !mintCheck) return undefined;
  const r = mintCheck.action.request;
  const templates = [r.path, ...r.query.map(([, t]) => t), ...r.headers.map(([, t]) => t), ...(r.body ? treeTemplates(r.body).map(([, t]) => t) : [])];
  const jwtInRequest = templates.some((t) => t.references.some(([root]) => root === 'jwt'));
  // The header's value is the minted token, which only the engine holds; the template stands for it in listings.
  const placeholder: Template = { source: 'Bearer <minted token>', references: [], single: false, render: () => undefined, renderPath: () => '' };
  const compiled = compiledVariant(v, placeholder);
  compiled.mint = {
    privateKey: key,
    claims,
    backdateSeconds: v.jwt.backdate_seconds ?? 60,
    lifetimeSeconds: v.jwt.lifetime_seconds ?? 540,
    action: { ...mintCheck.action, entity: 'auth', name: 'create', retrySafe: false },
    jwtInRequest,
    ...(v.mint.base_url !== undefined ? { baseUrl: v.mint.base_url } : {}),
    token,
    ...(expiresAt ? { expiresAt } : {}),
    ...(expiresIn ? { expiresIn } : {}),
    renewBeforeSeconds: v.mint.renew_before_seconds ?? 60,
  };
  return compiled;
}

/** client_credentials: the token request's templates; the header carries the token it gets. */
function grantVariant(ctx: CheckContext, v: Variant<'client_credentials'>, i: number, scope: Scope): CompiledAuthVariant | undefined {
  const { check } = ctx;
  const clientId = check.template(['auth', i, 'client_id'], v.client_id ?? '{{credentials.client_id}}', scope);
  const clientSecret = check.template(['auth', i, 'client_secret'], v.client_secret ?? '{{credentials.client_secret}}', scope);
  secretReads(ctx, v, i, clientSecret, 'client_secret');
  const params: [string, Template][] = [];
  for (const [k, src] of Object.entries(v.token_params ?? {})) {
    if (['grant_type', 'client_id', 'client_secret', 'scope'].includes(k))
      check.add(['auth', i, 'token_params', k], `${k} is set by the variant's own keys; remove it`);
    const t = src === undefined ? undefined : check.template(['auth', i, 'token_params', k], src, scope);
    if (t) params.push([k, t]);
  }
  if (!clientId || !clientSecret) return undefined;
  const placeholder: Template = {
    source: 'Bearer <access token from token_url>',
    references: [],
    single: false,
    render: () => undefined,
    renderPath: () => '',
  };
  const grant: CompiledGrant = {
    tokenUrl: v.token_url,
    grantType: v.grant_type ?? 'client_credentials',
    clientId,
    clientSecret,
    tokenRequestAuth: v.token_request_auth ?? 'client_secret_post',
    ...(v.scopes !== undefined && v.scopes.length > 0 ? { scope: v.scopes.join(v.scope_separator ?? ' ') } : {}),
    params,
    renewBeforeSeconds: v.renew_before_seconds ?? 60,
  };
  return { ...compiledVariant(v, placeholder), grant };
}

/** bearer, api_key and oauth2: one header from one template. */
function headerVariant(ctx: CheckContext, v: Variant<'bearer' | 'api_key' | 'oauth2'>, i: number, scope: Scope): CompiledAuthVariant | undefined {
  const { check, m } = ctx;
  let header = 'Authorization';
  let source: string;
  if (v.type === 'bearer') source = `Bearer ${v.token}`;
  else if (v.type === 'api_key') {
    // A variant may send its credentials only as query parameters (below): then it sets no header.
    header = v.header ?? 'Authorization';
    source = v.value ?? '';
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
    if (root === 'credentials' && k !== undefined && v.fields[k]?.multiline === true)
      check.add(['auth', i, where], `"${k}" is multiline, and a header value cannot hold line breaks`);
  }
  if (v.type === 'oauth2') checkTokenFields(check, i, v, scope);
  if (v.type === 'oauth2') checkCallbackFields(check, i, v);
  const followUps = v.type === 'oauth2' ? followUpsOf(check, m, i, v, scope) : undefined;
  const query = v.type === 'api_key' ? queryCredentials(ctx, v, i, scope) : undefined;
  if (!value || query === null) return undefined;
  return { ...compiledVariant(v, value, header), ...(followUps !== undefined ? { followUps } : {}), ...(query !== undefined ? { query } : {}) };
}

/** An api_key variant's query parameters (name, template): each reads only secret credential fields. Null when one does not compile. */
function queryCredentials(ctx: CheckContext, v: Variant<'api_key'>, i: number, scope: Scope): [string, Template][] | null | undefined {
  if (v.query === undefined) return undefined;
  const out: [string, Template][] = [];
  for (const [name, src] of Object.entries(v.query)) {
    const t = src === undefined ? undefined : ctx.check.template(['auth', i, 'query', name], src, scope);
    if (t === undefined) return null;
    secretReads(ctx, v, i, t, `the query parameter ${name}`);
    out.push([name, t]);
  }
  return out;
}

/**
 * The credentials validator: compiled now when the schema does not pass the strict walk (so that
 * a bad field schema is refused at load, as before), else on its first call.
 */
function credentialsValidator(v: AuthVariant): ValidateFunction {
  const schema = credentialsSchema(v);
  return strictlyValid(schema) ? lazyValidator(ajv, schema) : ajv.compile(schema);
}

function compiledVariant(v: AuthVariant, value: Template, header = 'Authorization'): CompiledAuthVariant {
  return {
    def: v,
    validate: credentialsValidator(v),
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
  return {
    source: `Basic base64(${username.source}:${password.source})`,
    references: [...username.references, ...password.references],
    single: false,
    render,
    renderPath: (ctx) => String(render(ctx) ?? ''),
  };
}

/** The connector-wide credential check, and each variant's own (set on its compiled variant). */
export function checkCredentialChecks(ctx: CheckContext, auth: CompiledAuthVariant[]): CompiledCheck | undefined {
  const { m, check, config } = ctx;
  const credentialCheck = m.check !== undefined ? compileCheck(check, m.check, ['check'], ctx.credentialFields, config) : undefined;
  m.auth.forEach((v: AuthVariant, i) => {
    const compiled = auth.find((a) => a.def === v);
    if (v.check === undefined || compiled === undefined) return;
    const own = compileCheck(check, v.check, ['auth', i, 'check'], new Set(Object.keys(v.fields)), config);
    if (own !== undefined) compiled.check = own;
  });
  return credentialCheck;
}
