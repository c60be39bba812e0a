/**
 * The manifest loader: parse YAML, merge the shared parts it `extends` under it (extends.ts),
 * validate against the manifest JSON Schema, run the semantic
 * checks JSON Schema cannot express, and compile every template and check every schema — all at
 * load time (an action's params validator is built on its first call).
 * Every problem is reported at once, each with file, location (dotted path and line:column) and
 * a message written for a connector author.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Manifest } from '../../generated/manifest.ts';
import { SwitchboardError } from '../errors/index.ts';
import { createAjv } from './ajv.ts';
import { ajv, Checker, semanticCheck, type ManifestProblem } from './checks/index.ts';
import type { LoadedManifest } from './compile.ts';
import { applyExtends } from './extends.ts';
import { MANIFEST_SCHEMA } from './manifest-schema.ts';
import { parseYaml } from './yaml-source.ts';

export type { ManifestProblem };

/** Thrown when a manifest has problems; carries all of them. */
export class ManifestError extends SwitchboardError {
  readonly problems: ManifestProblem[];
  constructor(problems: ManifestProblem[]) {
    super('manifest_invalid', problems.map(formatProblem).join('\n'), {
      errors: problems.map((p) => ({ path: `${p.file}#${p.location}`, message: p.message })),
    });
    this.problems = problems;
  }
}

/** `file:line:col location: message`, the form the CLI prints. */
export function formatProblem(p: ManifestProblem): string {
  const pos = p.line !== undefined ? `:${p.line}:${p.column ?? 1}` : '';
  return `${p.file}${pos} ${p.location || '(root)'}: ${p.message}`;
}

/**
 * A manifest's verdict comes from a validator that stops at the first error (a third cheaper to
 * build than one collecting every error); the manifest that fails is validated again by the
 * full one, built then, for every problem with its message.
 */
const manifestValid = createAjv({ allErrors: false, messages: false, code: { optimize: false } }).compile<Manifest>(MANIFEST_SCHEMA);
let validateManifest: ValidateFunction<Manifest> | undefined;

function describeAjvError(e: ErrorObject): string {
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown key "${String(e.params['additionalProperty'])}"`;
    case 'required':
      return `missing required key "${String(e.params['missingProperty'])}"`;
    case 'enum':
      return `must be one of: ${(e.params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(e.params['allowedValue'])}`;
    case 'propertyNames':
      return `invalid name "${String(e.params['propertyName'])}"`;
    case 'discriminator':
      return e.params['error'] === 'mapping' ? `unknown type ${JSON.stringify(e.params['tagValue'] ?? '')}` : `missing "type"`;
    default:
      return e.message ?? 'invalid';
  }
}

function pointerToPath(pointer: string): string[] {
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Parse and validate manifest text. Throws ManifestError with every problem found. */
export function loadManifestText(text: string, file: string): LoadedManifest {
  const parsed = parseYaml(text);
  if ('errors' in parsed) {
    throw new ManifestError(
      parsed.errors.map((err) => ({
        file,
        location: '',
        ...(err.line !== undefined ? { line: err.line, column: err.column! } : {}),
        message: `YAML ${err.duplicateKey ? 'duplicate key' : 'syntax error'}: ${err.message}`,
      })),
    );
  }
  let check = new Checker(file, parsed.source);
  const raw0 = parsed.source.value;
  // Shared parts (`extends`) are merged under the manifest before anything is checked.
  const { raw, layers, problems } = applyExtends(raw0, file, check);
  if (check.problems.length > 0 || problems.length > 0) throw new ManifestError([...check.problems, ...problems]);
  if (layers.length > 0) check = new Checker(file, parsed.source, layers);
  if (!manifestValid(raw)) {
    validateManifest ??= ajv.compile<Manifest>(MANIFEST_SCHEMA);
    validateManifest(raw);
    const seen = new Set<string>();
    for (const e of validateManifest.errors ?? []) {
      // oneOf/if branches produce noise once the discriminator has named the real problem.
      if (e.keyword === 'oneOf' || e.keyword === 'if') continue;
      let path = pointerToPath(e.instancePath);
      if (e.keyword === 'additionalProperties') path = [...path, String(e.params['additionalProperty'])];
      const msg = describeAjvError(e);
      const key = `${path.join('.')}|${msg}`;
      if (seen.has(key)) continue;
      seen.add(key);
      check.add(path, msg);
    }
    throw new ManifestError(check.problems);
  }
  const loaded = semanticCheck(raw, file, check);
  if (check.problems.length > 0) throw new ManifestError(check.problems);
  return loaded;
}

/** Load a manifest file. Throws ManifestError (with file and locations) on any problem. */
export function loadManifestFile(file: string): LoadedManifest {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ManifestError([{ file, location: '', message: `cannot read file: ${(e as Error).message}` }]);
  }
  return loadManifestText(text, file);
}
