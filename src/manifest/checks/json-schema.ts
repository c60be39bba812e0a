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
  try {
    checkAjv.compile(schema);
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
  if (!strictlyValid(schema)) return undefined;
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= strictAjv.compile(schema);
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
