/**
 * The ajv instances the loader compiles with: the lenient one that builds the validators the
 * engine keeps, and the strict ones that refuse keys that are not JSON Schema keywords in the
 * schemas a manifest embeds (records, params, list_meta, credential fields).
 */
import type { ValidateFunction } from 'ajv';
import { createAjv } from '../ajv.ts';

export const ajv = createAjv();
/**
 * Embedded schemas (records, params, list_meta, credential fields) are also compiled with ajv's
 * strictSchema, which refuses keys that are not JSON Schema keywords: a YAML flow map with an
 * unquoted comma (`{ description: a, b }`) turns "b" into such a key and would otherwise pass.
 */
const strictAjv = createAjv({ strictSchema: true, validateFormats: true });

/**
 * Records and params are checked under strictSchema by an instance that builds the cheapest
 * validator (first error only, no messages, no code optimization), which is then dropped: what it
 * refuses is what strictAjv refuses (strictSchema and formats act at compile time, keyword by
 * keyword, whatever the code is for), and strictAjv then says why.
 */
const checkAjv = createAjv({ strictSchema: true, validateFormats: true, allErrors: false, messages: false, code: { optimize: false } });

/** Whether `schema` compiles under strictSchema (its validator is not kept). */
export function strictlyValid(schema: object): boolean {
  const walked = walkStrict(schema);
  if (walked !== 'compile') return walked && checkAjv.validateSchema(schema) === true;
  try {
    checkAjv.compile(schema);
    return true;
  } catch {
    return false;
  }
}

/** Keywords whose value is one subschema, an array of them, or a map of them (walked as ajv compiles them). */
const ONE = new Set(['not', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames']);
const MANY = new Set(['anyOf', 'oneOf', 'allOf']);
const MAP = new Set(['properties', 'patternProperties']);
/** Keywords that hold no subschema and need no compile-time check beyond the meta-schema's. */
const PLAIN = new Set([
  ...['type', 'enum', 'const', 'required', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment'],
  ...['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf', 'maxLength', 'minLength', 'maxProperties', 'minProperties'],
  ...['maxItems', 'minItems', 'uniqueItems', 'contentMediaType', 'contentEncoding', 'nullable', 'format', 'pattern', 'items', 'dependencies'],
]);

/**
 * What compiling `schema` under strictSchema would refuse, found without generating code (about
 * a third of `validate`'s time was ajv writing validators only to drop them): false for a key
 * that is no keyword, an unknown format, an invalid pattern or `nullable` without `type`, as
 * ajv's compile does (the meta-schema check, by the caller, covers the keywords' values); and
 * 'compile' when the schema uses a keyword whose compile-time checks this walk does not repeat
 * ($ref, discriminator, if/then/else...): then ajv compiles it.
 */
function walkStrict(schema: unknown): boolean | 'compile' {
  if (typeof schema === 'boolean') return true;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'compile';
  const s = schema as Record<string, unknown>;
  const children: unknown[] = [];
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
  for (const [key, value] of Object.entries(s)) {
    if (ONE.has(key)) children.push(value);
    else if (MANY.has(key) || key === 'items') children.push(...list(value));
    else if (MAP.has(key)) children.push(...Object.values((value ?? {}) as object));
    else if (key === 'dependencies') children.push(...Object.values((value ?? {}) as object).filter((d) => !Array.isArray(d)));
    else if (!PLAIN.has(key)) return checkAjv.RULES.keywords[key] === true ? 'compile' : false;
    else if (key === 'format' && (typeof value !== 'string' || checkAjv.formats[value] === undefined)) return false;
    else if (key === 'pattern' && !validPattern(value)) return false;
    else if (key === 'nullable' && value === true && s['type'] === undefined) return false;
  }
  let verdict: boolean | 'compile' = true;
  for (const child of children) {
    const v = walkStrict(child);
    if (v === false) return false;
    if (v === 'compile') verdict = 'compile';
  }
  return verdict;
}

/** Whether a `pattern` compiles as ajv compiles it (a unicode regular expression). */
function validPattern(pattern: unknown): boolean {
  try {
    new RegExp(String(pattern), 'u');
    return true;
  } catch {
    return false;
  }
}

/**
 * `schema`'s validator under strictSchema, or undefined when refused. Refusal is decided now, by
 * the check-only instance above; the validator itself (strictAjv's: strictSchema only adds
 * refusals at compile time, so it validates as the lenient instance's would) is compiled on its
 * first call, so commands that never validate params (codegen, validate, connectors) never
 * build one, and a process builds only those of the actions it runs.
 */
export function strictCompile(schema: object): ValidateFunction | undefined {
  return strictlyValid(schema) ? lazyValidator(strictAjv, schema) : undefined;
}

/** `schema`'s validator by `by`, compiled on its first call (a schema known to compile: no throw then). */
export function lazyValidator(by: typeof ajv, schema: object): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= by.compile(schema);
    const ok = compiled(data);
    validate.errors = compiled.errors ?? null;
    return ok;
  }) as ValidateFunction;
  validate.errors = null;
  validate.schema = schema;
  return validate;
}

/** Problems of keys in `schema` that are not JSON Schema keywords, reported at `path`. */
export function unknownKeywords(schema: unknown): string | undefined {
  try {
    strictAjv.compile(schema as object);
    return undefined;
  } catch (e) {
    const m = /unknown keyword: "(.*)"/.exec((e as Error).message);
    return m ? `"${m[1] ?? ''}" is not a JSON Schema keyword (a YAML flow map with an unquoted comma? quote the description)` : undefined;
  }
}
