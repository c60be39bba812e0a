/**
 * The simulators' opaque cursors: base64url JSON of the next page's offset and, optionally, the id
 * of the page's last record (the next page starts after it while it is listed).
 */

export const encodeCursor = (offset: number, after?: unknown): string =>
  Buffer.from(JSON.stringify(after === undefined ? { o: offset } : { o: offset, k: after })).toString('base64url');

/** The offset and last id a cursor holds; undefined for anything this simulator did not issue. */
export function decodeCursor(s: string): { offset: number; after: unknown } | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { o?: unknown; k?: unknown };
    return Number.isInteger(v.o) && (v.o as number) >= 0 ? { offset: v.o as number, after: v.k } : undefined;
  } catch {
    return undefined;
  }
}
