/**
 * Nested collections and the records they belong to. A collection path that extends another
 * resource's item path (`/repos/{owner}/{repo}/issues` under `/repos/{owner}/{repo}`,
 * `/projects/{project_gid}/sections` under `/projects/{project_gid}`) lists records of its parent:
 * seeded records are spread over the parent's records (so every seeded repository has issues),
 * and a list or create under a parent that does not exist is that parent's 404, as the vendors
 * answer, rather than an empty page.
 */

/** How a nested resource's path params name its parent record: each param → the parent record's dotted field. */
export interface ParentLink {
  resource: string;
  fields: Record<string, string>;
}

interface LinkOperation {
  key: string;
  method: string;
  path: string;
}

interface LinkClassified {
  kind: string;
  resource?: string;
  idParam?: string;
  rpc?: boolean;
  keyParams?: string[];
}

/** A path with its params unnamed: `/a/{}/b`. */
const anonymous = (path: string): string => path.replace(/\{[^}]+\}/g, '{}');

const paramsOf = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);

/**
 * The parent link of each nested list or create operation the description implies, by operation
 * key: its path is `<an item path of another resource>/<word>` with the same path params (a
 * resource listed both at the top and under a parent, as Asana's `/projects` and
 * `/workspaces/{gid}/projects`, is linked only through the nested one). `idFieldOf` gives a
 * resource's id field (a single-id item path names it); `keyOf` the sidecar's `key` of a resource
 * whose item path has several ids (e.g. `{owner: owner.login, repo: name}`).
 */
export function parentLinks(
  operations: readonly LinkOperation[],
  classified: ReadonlyMap<string, LinkClassified>,
  idFieldOf: (resource: string) => string | undefined,
  keyOf: (resource: string) => Record<string, string> | undefined,
): Map<string, ParentLink> {
  const links = new Map<string, ParentLink>();
  for (const op of operations) {
    const c = classified.get(op.key);
    if (c?.resource === undefined || c.rpc === true || (c.kind !== 'list' && c.kind !== 'create')) continue;
    const params = paramsOf(op.path);
    if (params.length === 0) continue;
    // The parent's item path, whatever its params are named (/Accounts/{Sid} for /Accounts/{AccountSid}/Messages).
    // A list by a search or query path (/objects/{object}/records/query) lists the collection before it.
    const listed = c.kind === 'list' && /\/(search|query)$/.test(op.path) ? op.path.slice(0, op.path.lastIndexOf('/')) : op.path;
    const parentPath = anonymous(listed.slice(0, listed.lastIndexOf('/')));
    const item = operations.find((o) => o.method === 'GET' && anonymous(o.path) === parentPath && classified.get(o.key)?.kind === 'get');
    const ic = item === undefined ? undefined : classified.get(item.key);
    if (ic?.resource === undefined || ic.resource === c.resource) continue;
    const fields: Record<string, string> = {};
    if (ic.keyParams !== undefined) {
      const key = keyOf(ic.resource);
      for (const p of params) if (key?.[p] !== undefined) fields[p] = key[p];
    } else if (ic.idParam !== undefined) {
      // The parent's id, and the ids above it that its item path also names (GitLab's issue under
      // /projects/{project_id}/issues/{issue_iid}): fields of the parent record its sidecar `key` names.
      const itemParams = paramsOf(item!.path);
      const parent = ic.resource;
      const key = keyOf(parent) ?? {};
      params.forEach((p, i) => {
        const field = itemParams[i] === ic.idParam ? idFieldOf(parent) : (key[p] ?? key[itemParams[i] ?? '']);
        if (field !== undefined) fields[p] = field;
      });
    }
    if (Object.keys(fields).length === params.length) links.set(op.key, { resource: ic.resource, fields });
  }
  return links;
}

/**
 * A sidecar `key` value naming the parent record's own parent (the path id it was made under)
 * rather than a field of it: `{team-id: ^team-id}` for a channel, whose record does not name its team.
 */
export const FROM_PARENTS = '^';

/** The path params a record of the parent stands for (`{owner: "northwind", repo: "api"}`), or undefined when one is missing. */
export function parentParams(
  link: ParentLink,
  parent: Record<string, unknown>,
  getPath: (obj: unknown, path: string) => unknown,
  parents: Readonly<Record<string, string>> = {},
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [param, field] of Object.entries(link.fields)) {
    const v = field.startsWith(FROM_PARENTS) ? parents[field.slice(FROM_PARENTS.length)] : getPath(parent, field);
    if (typeof v !== 'string' && typeof v !== 'number') return undefined;
    out[param] = String(v);
  }
  return out;
}
