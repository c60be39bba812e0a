/**
 * application/x-www-form-urlencoded bodies (request.body_encoding: form), with the nested keys
 * Stripe's API reads (its OpenAPI description: `style: deepObject, explode: true`) and Slack's
 * flat forms as the special case of a flat object:
 *
 * - `{metadata: {plan: pro}}`          → `metadata[plan]=pro`
 * - `{expand: [customer, invoice]}`    → `expand[]=customer&expand[]=invoice` (scalars only)
 * - `{items: [{price: p1}]}`           → `items[0][price]=p1` (an array holding an object or array is indexed)
 * - `true` / `false` / numbers         → their JSON text; `null` → an empty value (`key=`, Stripe's "unset")
 * - `undefined` (a template that rendered nothing) → the key is left out, as in JSON bodies
 * - `{}` / `[]`                        → nothing is sent for that key
 */

function scalar(v: unknown): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

function append(out: URLSearchParams, key: string, v: unknown): void {
  if (v === undefined) return;
  if (Array.isArray(v)) {
    const indexed = v.some((e) => e !== null && typeof e === 'object');
    v.forEach((e, i) => append(out, indexed ? `${key}[${i}]` : `${key}[]`, e));
    return;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, e] of Object.entries(v)) append(out, `${key}[${k}]`, e);
    return;
  }
  out.append(key, scalar(v));
}

/** The form encoding of a rendered body, which must be an object (its keys are the form's top-level names). */
export function formEncode(body: Record<string, unknown>): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) append(out, k, v);
  // URLSearchParams writes brackets as %5B/%5D, which form decoders (Stripe's, qs, Rack) read back as brackets.
  return out.toString();
}
