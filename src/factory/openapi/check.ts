/** The credential check: a "who am I" path, else the first list without required params. */
import type { Obj, PathItem } from './document.ts';
import type { Notes } from './notes.ts';

const WHO = ['/me', '/users/me', '/user', '/account', '/whoami', '/users/self', '/self'];

export function scaffoldCheck(allPaths: Record<string, PathItem>, checkRequest: Obj | undefined, { guess, report }: Notes): Obj | undefined {
  const me =
    WHO.find((p) => allPaths[p]?.get !== undefined) ??
    // With a trailing slash, as APIs whose every path ends in one (/me/).
    WHO.map((p) => `${p}/`).find((p) => allPaths[p]?.get !== undefined) ??
    // Under a version prefix (Stripe's /v1/account).
    WHO.flatMap((p) => Object.keys(allPaths).filter((k) => k.endsWith(p) && /^\/v\d+(\.\d+)?$/.test(k.slice(0, k.length - p.length)))).find(
      (p) => allPaths[p]?.get !== undefined,
    ) ??
    // Under a versioned prefix (/rest/api/3/myself, /v2/me): the shortest such path.
    Object.keys(allPaths)
      .filter((p) => allPaths[p]?.get !== undefined && /\/(me|myself|whoami|users\/me|users\/self)$/.test(p))
      .sort((a, b) => a.length - b.length)[0];
  if (me) {
    guess(['check'], `${me} answers only with valid credentials`);
    return { request: { method: 'GET', path: me } };
  }
  if (checkRequest) {
    guess(['check'], 'a one-record list proves the credentials; a "who am I" endpoint is better if the API has one');
    return { request: checkRequest };
  }
  report.push('credential check: no "who am I" path and no list without required params');
  return undefined;
}
