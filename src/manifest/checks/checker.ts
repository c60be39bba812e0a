/**
 * The checker every manifest section's checks report through: a problem with its dotted path,
 * placed at its line and column in the YAML, and template compilation with reference checks
 * against the scope the template appears in.
 */
import { isNode } from 'yaml';
import type { Manifest } from '../../../generated/manifest.ts';
import { compileTemplate, TemplateSyntaxError, type Template } from '../../templates/index.ts';
import { compileTree, treeTemplates, type TemplateTree } from '../template-tree.ts';
import type { Located } from '../yaml-source.ts';

/** One problem found in a manifest. */
export interface ManifestProblem {
  file: string;
  /** Dotted location, e.g. entities.notes.actions.get.request.path. */
  location: string;
  line?: number;
  column?: number;
  message: string;
}

export type Path = (string | number)[];

// call.id: one random id per logical call, the same across its retries (idempotency keys).
export const REQUEST_ROOTS = new Set(['params', 'credentials', 'config', 'call']);
export const CALL_KEYS: ReadonlySet<string> = new Set(['id']);
export const RESPONSE_ROOTS = new Set(['body', 'headers', 'params', 'status']);
// Error rules are connector-wide: they may read the failing action's params, unchecked by name.
export const ERROR_ROOTS = new Set(['body', 'headers', 'status', 'params']);
export const MATCH_ROOTS = new Set([...ERROR_ROOTS, 'matched']);
export const AUTH_ROOTS = new Set(['credentials', 'config']);
export const FOLLOW_UP_ROOTS = new Set(['body', 'headers']);
export const TOKEN_ANSWER_ROOTS = new Set(['body']);

/** Roots a template may reference, by where it appears. */
export type Scope = {
  roots: ReadonlySet<string>;
  /** Declared params of the action (for params.X), when the scope has an action. */
  params?: Record<string, { required?: boolean }>;
  /** Credential fields allowed (for credentials.X). */
  credentials?: ReadonlySet<string>;
  config: ReadonlySet<string>;
  /** Credential fields a request path may use (a minted_bearer mint request): each needs a pattern and may not be secret. */
  pathCredentials?: Record<string, { pattern?: string; secret?: boolean } | undefined>;
};

export class Checker {
  readonly problems: ManifestProblem[] = [];
  /**
   * `parts`: the partial manifests `extends` merged under this one, nearest first: a problem at a
   * value this file does not hold is placed in the part it came from.
   */
  constructor(
    private readonly file: string,
    private readonly source?: { located(): Located },
    private readonly parts: readonly { file: string; located(): Located }[] = [],
  ) {}

  add(path: (string | number)[], message: string): void {
    const p: ManifestProblem = { file: this.file, location: path.join('.'), message };
    const own = this.source?.located();
    const node = own?.doc.getIn(path, true);
    const part =
      isNode(node) || path.length === 0 ? undefined : this.parts.map((l) => ({ file: l.file, ...l.located() })).find((l) => isNode(l.doc.getIn(path, true)));
    if (own && isNode(node) && node.range) {
      const pos = own.lines.linePos(node.range[0]);
      p.line = pos.line;
      p.column = pos.col;
    } else if (part !== undefined) {
      const range = (part.doc.getIn(path, true) as { range?: [number, number, number] }).range;
      p.file = part.file;
      if (range) Object.assign(p, { line: part.lines.linePos(range[0]).line, column: part.lines.linePos(range[0]).col });
    } else if (own && path.length > 0) {
      // Missing key: point at the closest parent that exists.
      for (let i = path.length - 1; i >= 0; i--) {
        const parent = own.doc.getIn(path.slice(0, i), true);
        if (isNode(parent) && parent.range) {
          const pos = own.lines.linePos(parent.range[0]);
          p.line = pos.line;
          p.column = pos.col;
          break;
        }
      }
    }
    this.problems.push(p);
  }

  /** Compile a template and check its references against the scope. */
  template(path: (string | number)[], source: string, scope: Scope, opts: { pathParams?: boolean } = {}): Template | undefined {
    let t: Template;
    try {
      t = compileTemplate(source);
    } catch (e) {
      this.add(path, e instanceof TemplateSyntaxError ? `template error: ${e.message}` : String(e));
      return undefined;
    }
    this.references(path, t, scope, opts);
    return t;
  }

  references(path: (string | number)[], t: Template, scope: Scope, opts: { pathParams?: boolean } = {}): void {
    for (const ref of t.references) {
      const [root, key] = ref;
      const shown = ref.join('.');
      if (root === undefined) continue;
      if (!scope.roots.has(root)) {
        this.add(path, `unknown variable "${shown}": templates here may use ${[...scope.roots].map((r) => `${r}.*`).join(', ')}`);
        continue;
      }
      if (opts.pathParams && root === 'credentials' && scope.pathCredentials !== undefined && key !== undefined && ref.length === 2) {
        const f = scope.pathCredentials[key];
        if (f?.secret === true) this.add(path, `credentials.${key} is secret, and a path is not: use a non-secret field`);
        else if (f !== undefined && f.pattern === undefined)
          this.add(path, `credentials.${key} is part of the path, so its field needs a pattern (e.g. pattern: "[0-9]+")`);
        if (f === undefined) this.add(path, `unknown variable "${shown}": not a credential field of this variant`);
        continue;
      }
      if (opts.pathParams && root !== 'params') {
        this.add(path, `path templates may only use params${scope.pathCredentials !== undefined ? ' and credential fields' : ''}, not "${shown}"`);
        continue;
      }
      if (key === undefined) {
        if (root === 'params' || root === 'credentials' || root === 'config') {
          if (opts.pathParams) this.add(path, `path templates must name one param, not all of "${root}"`);
        }
        continue;
      }
      if (root === 'params' && scope.params !== undefined) {
        const p = scope.params[key];
        if (p === undefined) {
          const declared = Object.keys(scope.params);
          this.add(path, `"${shown}" is not a declared param of this action (declared: ${declared.length ? declared.join(', ') : 'none'})`);
        } else if (opts.pathParams && p.required !== true) {
          this.add(path, `path parameter "${key}" must be declared with required: true`);
        }
      } else if (root === 'credentials' && scope.credentials !== undefined && !scope.credentials.has(key)) {
        this.add(path, `"${shown}" is not a credential field (fields: ${[...scope.credentials].join(', ')})`);
      } else if (root === 'call' && !CALL_KEYS.has(key)) {
        this.add(path, `"${shown}" is not a call value (call.id is)`);
      } else if (root === 'config' && !scope.config.has(key) && key !== 'region') {
        this.add(path, `"${shown}" is not a declared config value (declared: ${[...scope.config].join(', ') || 'none'})`);
      }
    }
  }

  tree(path: (string | number)[], value: unknown, scope: Scope): TemplateTree | undefined {
    let tree: TemplateTree;
    try {
      tree = compileTree(value);
    } catch (e) {
      this.add(path, e instanceof TemplateSyntaxError ? `template error: ${e.message}` : String(e));
      return undefined;
    }
    for (const [sub, t] of treeTemplates(tree)) this.references([...path, ...sub], t, scope);
    return tree;
  }
}

/** What every section's checks share: the manifest, the checker, and the names templates may use. */
export interface CheckContext {
  m: Manifest;
  file: string;
  check: Checker;
  /** Declared config names (config.X). */
  config: ReadonlySet<string>;
  /** Every credential field of every auth variant (credentials.X in connector-wide templates). */
  credentialFields: ReadonlySet<string>;
}
