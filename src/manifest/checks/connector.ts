/**
 * Connector-wide settings: aliases (unique, case-insensitively) and the headers sent on every
 * request.
 */
import type { Template } from '../../templates/index.ts';
import { AUTH_ROOTS, type CheckContext } from './checker.ts';

/** Aliases match case-insensitively, so two that differ only in case are one alias written twice. */
export function checkAliases({ m, check }: CheckContext): void {
  const aliasSeen = new Set<string>();
  (m.aliases ?? []).forEach((a, i) => {
    const key = a.trim().toLowerCase();
    if (aliasSeen.has(key)) check.add(['aliases', i], `alias "${a}" repeats another alias (aliases match case-insensitively)`);
    aliasSeen.add(key);
  });
}

/** Connector-level headers. */
export function checkHeaders({ m, check, config, credentialFields }: CheckContext): [string, Template][] {
  const headers: [string, Template][] = [];
  for (const [name, src] of Object.entries(m.headers ?? {})) {
    if (src === undefined) continue;
    const t = check.template(['headers', name], src, { roots: AUTH_ROOTS, credentials: credentialFields, config });
    if (t) headers.push([name, t]);
  }
  return headers;
}
