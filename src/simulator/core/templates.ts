/** Filling the sidecar's templates (error bodies, headers, envelopes) with a request's values. */

/**
 * Fill a template: "{{name}}" alone keeps a number's type, inside text it is text; an object entry
 * whose value renders to "" is left out. With `keys`, keys are templates too ({"{{field}}":
 * "{{message}}"}: errors by field), and an entry whose key renders to "" is left out as well.
 */
export function render(template: unknown, vars: Record<string, string | number>, keys = true): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(template);
    if (whole !== null && typeof vars[whole[1] as string] === 'number') return vars[whole[1] as string];
    return template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? ''));
  }
  if (Array.isArray(template)) return template.map((t) => render(t, vars, keys));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(
      Object.entries(template as Record<string, unknown>)
        .map(([k, v]) => [keys ? (render(k, vars, keys) as string) : k, render(v, vars, keys)] as const)
        .filter(([k, v]) => v !== '' && (!keys || k !== '')),
    );
  }
  return template;
}
