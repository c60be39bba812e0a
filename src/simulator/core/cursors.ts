/**
 * The simulators' opaque cursors: base64url JSON of the next page's offset and, optionally, the id
 * of the page's last record (the next page starts after it while it is listed).
 */

export const encodeCursor = (offset: number, after?: unknown, limit?: number): string =>
  Buffer.from(JSON.stringify({ o: offset, ...(after === undefined ? {} : { k: after }), ...(limit === undefined ? {} : { l: limit }) })).toString('base64url');

/** The offset, last id and page size a cursor holds; undefined for anything this simulator did not issue. */
export function decodeCursor(s: string): { offset: number; after: unknown; limit?: number } | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { o?: unknown; k?: unknown; l?: unknown };
    if (!Number.isInteger(v.o) || (v.o as number) < 0) return undefined;
    return { offset: v.o as number, after: v.k, ...(Number.isInteger(v.l) && (v.l as number) > 0 ? { limit: v.l as number } : {}) };
  } catch {
    return undefined;
  }
}
