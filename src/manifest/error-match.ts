/**
 * The declarative form of an error rule (`match: {path, in}`): a dotted path from body, headers
 * or status, where `*` stands for any element of an array, and the values that match. Compiled
 * once at load time into a test over the response context.
 */

/** The test of a match rule: null when nothing matches, else `{matched}` (the element the first * stood for). */
export function compileErrorMatch(path: string, values: readonly unknown[]): (ctx: Record<string, unknown>) => Record<string, unknown> | null {
  // Header names are matched as received: lower case.
  const segments = path.split('.').map((seg, i, all) => (i === 1 && all[0] === 'headers' ? seg.toLowerCase() : seg));
  // Header values are text: `in: [0]` matches "x-ratelimit-remaining: 0" as `in: ["0"]` does.
  const headers = segments[0] === 'headers';
  const wanted = new Set(headers ? values.map(String) : values);
  const walk = (value: unknown, i: number, matched: unknown): { matched: unknown } | null => {
    if (i === segments.length) return wanted.has(headers && typeof value === 'string' ? value.trim() : value) ? { matched } : null;
    const seg = segments[i] as string;
    if (seg === '*') {
      if (!Array.isArray(value)) return null;
      for (const el of value) {
        const hit = walk(el, i + 1, matched === undefined ? el : matched);
        if (hit !== null) return hit;
      }
      return null;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    return Object.hasOwn(value, seg) ? walk((value as Record<string, unknown>)[seg], i + 1, matched) : null;
  };
  return (ctx) => {
    const hit = walk(ctx, 0, undefined);
    return hit === null ? null : { matched: hit.matched ?? null };
  };
}
