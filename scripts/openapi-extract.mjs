// Shared by the scripts that trim a vendor's OpenAPI description to the operations a connector
// uses (connectors/<type>/trim.mjs, test/fixtures/asana/trim.mjs): the components the kept paths
// reach, and their order in the extract.

/**
 * Every `#/components/<kind>/<name>` that `value` refers to, transitively, each passed through
 * `copy` (a script's cleaning, e.g. dropping examples): `{kind: {name: schema}}`, in the order
 * first reached.
 */
export function reachedComponents(doc, value, copy = (v) => v) {
  const components = {};
  const seen = new Set();
  const reach = (v) => {
    if (Array.isArray(v)) return v.forEach(reach);
    if (v === null || typeof v !== 'object') return;
    const ref = v.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/') && !seen.has(ref)) {
      seen.add(ref);
      const [, , kind, name] = ref.split('/');
      const target = copy(doc.components[kind][name]);
      (components[kind] ??= {})[name] = target;
      reach(target);
    }
    for (const x of Object.values(v)) reach(x);
  };
  reach(value);
  return components;
}

/** Components with each kind's names sorted, and the kinds too unless `kinds` is false. */
export function sortedComponents(components, { kinds = true } = {}) {
  const entries = Object.entries(components).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))]);
  if (kinds) entries.sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(entries);
}
