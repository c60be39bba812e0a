/**
 * The shape of a description's paths, as the resources read them. Two vendor habits hide it:
 * a suffix on every path (`/Accounts/{AccountSid}/Messages/{Sid}.json`: the resource is
 * `/Accounts/{AccountSid}/Messages/{Sid}`), and `#fragment` pseudo-paths, several operations on
 * one path told apart by a fragment (`/files/{file_id}#get_shared_link`), which a request never
 * carries. Both are left out of a path's shape; the operations keep their paths.
 */

const EXTENSION = /\.([A-Za-z]{2,5})$/;

/** A function from a path of the description to its shape (no fragment, no shared suffix). */
export function pathShapes(paths: readonly string[]): (path: string) => string {
  const bare = paths.map((p) => p.replace(/#.*$/, ''));
  // A suffix after an id (`{Sid}.json`), or one more than half of the paths end with: a format,
  // not a resource's name (an RPC method's `.list` follows no id and varies).
  const counts = new Map<string, number>();
  for (const p of bare) {
    const ext = EXTENSION.exec(p.split('/').at(-1) ?? '')?.[0];
    if (ext !== undefined) counts.set(ext, (counts.get(ext) ?? 0) + 1);
  }
  const afterId = bare.map((p) => /\}(\.[A-Za-z]{2,5})$/.exec(p)?.[1]).find((x) => x !== undefined);
  const suffix = afterId ?? [...counts].find(([, n]) => n * 2 > bare.length)?.[0];
  return (path) => {
    const noFragment = path.replace(/#.*$/, '');
    return suffix !== undefined && noFragment.endsWith(suffix) ? noFragment.slice(0, -suffix.length) : noFragment;
  };
}

/** Whether a path is a `#fragment` pseudo-path. */
export const isFragmentPath = (path: string): boolean => path.includes('#');

/** How many leading static segments every path shares (an API's /api/v1), short of any path's last segment. */
export function sharedPrefix(paths: string[][]): number {
  const first = paths[0] ?? [];
  let n = 0;
  while (n < first.length && !first[n]!.startsWith('{') && paths.every((segs) => segs.length > n + 1 && segs[n] === first[n])) n++;
  return n;
}
