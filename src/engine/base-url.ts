/** Upstream base URLs given by people (CLI flags, env vars, library options) are checked here. */
import { SwitchboardError } from '../errors/index.ts';

/**
 * The base URL without trailing slashes, or `invalid_base_url` with the fix spelled out: the most
 * common mistake is a missing scheme (`127.0.0.1:4010`), which `new URL` would read as scheme `127.0.0.1:`.
 */
export function checkBaseUrl(raw: string, what = 'base URL'): string {
  const value = raw.trim();
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    const hint = /^[\w.-]+:\d+(\/.*)?$/.test(value) || /^[\w.-]+\.[a-z]{2,}(\/.*)?$/i.test(value) ? `http://${value}` : 'http://127.0.0.1:4010';
    throw new SwitchboardError('invalid_base_url', `Invalid ${what} "${raw}": include the scheme, e.g. ${hint}`, {
      details: { value: raw, example: hint },
    });
  }
  return value.replace(/\/+$/, '');
}
