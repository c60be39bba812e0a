/**
 * An oauth2 variant's follow_up requests: calls made after the token exchange (and optionally on
 * refresh) that fill non-secret credential fields, sent only to hosts of the manifest.
 */
import type { Manifest, OAuth2Auth } from '../../../generated/manifest.ts';
import type { Template } from '../../templates/index.ts';
import type { CompiledFollowUp } from '../compile.ts';
import { FOLLOW_UP_ROOTS, TOKEN_ANSWER_ROOTS, type Checker, type Scope } from './checker.ts';

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

/** A field a token answer or follow_up may fill: declared, non-secret, not one of the tokens; else why not. */
function fillableField(v: OAuth2Auth, name: string): string | undefined {
  const field = v.fields[name];
  if (field === undefined) return `"${name}" is not a credential field of this variant (fields: ${Object.keys(v.fields).join(', ')})`;
  if (field.secret === true || name === 'access_token' || name === 'refresh_token' || name === 'expires_at')
    return `"${name}" is ${field.secret === true ? 'secret' : 'a token field'}: only non-secret fields are filled this way`;
  return undefined;
}

/** Check an oauth2 variant's token_fields (templates over the token answer; rendered by src/auth when tokens arrive). */
export function checkTokenFields(check: Checker, i: number, v: OAuth2Auth, scope: Scope): void {
  for (const [name, src] of Object.entries(v.token_fields ?? {})) {
    if (src === undefined) continue;
    const at = ['auth', i, 'token_fields', name];
    const why = fillableField(v, name);
    if (why !== undefined) check.add(at, why);
    if (v.follow_up?.some((f) => f.fields[name] !== undefined) === true) check.add(at, `"${name}" is filled by a follow_up too`);
    check.template(at, src, { roots: TOKEN_ANSWER_ROOTS, config: scope.config });
  }
}

/** Check an oauth2 variant's callback_fields (filled from the callback's query by the hosted OAuth flow). */
export function checkCallbackFields(check: Checker, i: number, v: OAuth2Auth): void {
  for (const name of Object.keys(v.callback_fields ?? {})) {
    const at = ['auth', i, 'callback_fields', name];
    const why = fillableField(v, name);
    if (why !== undefined) check.add(at, why);
    if (v.token_fields?.[name] !== undefined || v.follow_up?.some((f) => f.fields[name] !== undefined) === true)
      check.add(at, `"${name}" is filled by token_fields or a follow_up too`);
  }
}

/** Check and compile an oauth2 variant's follow_up requests. */
export function followUpsOf(check: Checker, m: Manifest, i: number, v: OAuth2Auth, scope: Scope): CompiledFollowUp[] | undefined {
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
      check.add(
        [...at, 'request', 'url'],
        `a follow_up URL must be on a host of this manifest (${[...hosts].join(', ') || 'none'}): it is where the new tokens are sent`,
      );
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
      const why = fillableField(v, name);
      if (why !== undefined) {
        check.add([...at, 'fields', name], why);
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
    if (ok)
      out.push({
        method: f.request.method ?? 'GET',
        url,
        headers,
        fields,
        ...(f.missing !== undefined ? { missing: f.missing } : {}),
        onRefresh: f.on_refresh === true,
      });
  });
  return out;
}
