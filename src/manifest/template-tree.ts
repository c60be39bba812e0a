/**
 * Template trees: a JSON value (a request body, GraphQL variables, a webhook challenge answer)
 * whose string leaves are compiled templates, compiled once at load time and rendered per call.
 */
import { compileTemplate, type Template } from '../templates/index.ts';

/** A JSON value tree whose string leaves are compiled templates. */
export type TemplateTree =
  | { kind: 'template'; template: Template }
  | { kind: 'object'; entries: [string, TemplateTree][] }
  | { kind: 'array'; items: TemplateTree[] }
  | { kind: 'literal'; value: unknown };

export function compileTree(value: unknown): TemplateTree {
  if (typeof value === 'string') return value.includes('{{') ? { kind: 'template', template: compileTemplate(value) } : { kind: 'literal', value };
  if (Array.isArray(value)) return { kind: 'array', items: value.map(compileTree) };
  if (value !== null && typeof value === 'object') return { kind: 'object', entries: Object.entries(value).map(([k, v]) => [k, compileTree(v)]) };
  return { kind: 'literal', value };
}

/** Render a template tree: undefined values drop their object key or array element. */
export function renderTree(tree: TemplateTree, ctx: Record<string, unknown>): unknown {
  switch (tree.kind) {
    case 'literal':
      return tree.value;
    case 'template':
      return tree.template.render(ctx);
    case 'array':
      return tree.items.map((t) => renderTree(t, ctx)).filter((v) => v !== undefined);
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, t] of tree.entries) {
        const v = renderTree(t, ctx);
        if (v !== undefined) out[k] = v;
      }
      return out;
    }
  }
}

/** Every template of a tree (for reference checks). */
export function treeTemplates(tree: TemplateTree, path: string[] = []): [string[], Template][] {
  switch (tree.kind) {
    case 'literal':
      return [];
    case 'template':
      return [[path, tree.template]];
    case 'array':
      return tree.items.flatMap((t, i) => treeTemplates(t, [...path, String(i)]));
    case 'object':
      return tree.entries.flatMap(([k, t]) => treeTemplates(t, [...path, k]));
  }
}
