'use strict';
/**
 * The service's OpenAPI document → TypeScript path types, with openapi-typescript's transform and
 * printer: in codegen's worker thread (index.ts, OpenApiWorker) and on the caller's thread alike.
 *
 * openapi-typescript's openapiTS() lints and bundles its input with Redocly before transforming
 * it: loading Redocly and those two walks are more than half its time on this document, which
 * codegen builds itself, in one piece, with every $ref inside it. So the document goes straight
 * to the transform openapiTS() runs after them, with the context openapiTS() builds from the
 * same options; what that lint would refuse here (not OpenAPI 3.x, a $ref to nothing, an
 * operationId used twice) is refused here with a clear error, and test/codegen/openapi-types.test.ts
 * runs the whole of openapiTS() on the service's document and expects the same text.
 *
 * Plain CommonJS: the worker thread loads it by path, without the TypeScript loader.
 */
const { dirname, join } = require('node:path');

let library;

/**
 * openapi-typescript's transform, discriminator scan, $ref resolver and printer, from `entry` (the
 * path of its CommonJS build): the modules that hold them when the package is laid out as this
 * code knows (they do not load Redocly), else the package's entry, which has them all.
 */
function load(entry) {
  if (library !== undefined) return library;
  const dist = dirname(entry);
  try {
    const parts = {
      transformSchema: require(join(dist, 'transform', 'index.cjs')),
      scanDiscriminators: require(join(dist, 'lib', 'utils.cjs')).scanDiscriminators,
      resolveRef: require(join(dist, 'lib', 'utils.cjs')).resolveRef,
      astToString: require(join(dist, 'lib', 'ts.cjs')).astToString,
    };
    if (Object.values(parts).every((f) => typeof f === 'function')) return (library = parts);
  } catch {
    // Another layout: the entry below.
  }
  const m = require(entry);
  library = { transformSchema: m.transformSchema, scanDiscriminators: m.scanDiscriminators, resolveRef: m.resolveRef, astToString: m.astToString };
  return library;
}

/** Throws unless `document` is OpenAPI 3.x, its every $ref points at something inside it, and no operationId repeats. */
function check(document) {
  const version = Number.parseFloat(document.openapi);
  if (!(version >= 3 && version < 4)) throw new Error(`the OpenAPI document: expected OpenAPI 3.x, got openapi: ${JSON.stringify(document.openapi)}`);
  const operations = new Map();
  // The keys down to the node being looked at: its path is spelled out only for an error.
  const keys = [];
  const walk = (node) => {
    if (node === null || typeof node !== 'object') return;
    if (typeof node.$ref === 'string') {
      const pointer = node.$ref.startsWith('#/') ? node.$ref.slice(2).split('/') : undefined;
      let target = document;
      for (const key of pointer ?? []) target = target !== null && typeof target === 'object' ? target[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
      if (pointer === undefined || target === undefined) {
        throw new Error(`the OpenAPI document: #/${keys.join('/')}: $ref ${JSON.stringify(node.$ref)} points at nothing in the document`);
      }
    }
    for (const key of Object.keys(node)) {
      keys.push(key);
      walk(node[key]);
      keys.pop();
    }
  };
  walk(document);
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      const id = operation !== null && typeof operation === 'object' ? operation.operationId : undefined;
      if (typeof id !== 'string') continue;
      const seen = operations.get(id);
      if (seen !== undefined)
        throw new Error(`the OpenAPI document: operationId ${JSON.stringify(id)} of ${method.toUpperCase()} ${path} is also that of ${seen}`);
      operations.set(id, `${method.toUpperCase()} ${path}`);
    }
  }
}

/**
 * `run()` with String.prototype.localeCompare answering from one Intl.Collator per locale and
 * options, then restored. The transform's alphabetical order sorts with
 * `a.localeCompare(b, "en-us", { numeric: true })`, which builds a collator on every call:
 * about a third of its time. The answers are the same (ECMA-402 defines localeCompare as a
 * new Intl.Collator(locales, options) comparing the two), and nothing else runs meanwhile
 * (run is synchronous).
 */
function withCollators(run) {
  const localeCompare = String.prototype.localeCompare;
  const collators = new Map();
  String.prototype.localeCompare = function (that, locales, options) {
    const key = JSON.stringify([locales, options]);
    let collator = collators.get(key);
    if (collator === undefined) collators.set(key, (collator = new Intl.Collator(locales, options)));
    return collator.compare(String(this), String(that));
  };
  try {
    return run();
  } finally {
    String.prototype.localeCompare = localeCompare;
  }
}

/** The TypeScript openapiTS(document, options) prints, for the options codegen uses (no functions among them). */
function openapiTypes(entry, document, options = {}) {
  const { transformSchema, scanDiscriminators, resolveRef, astToString } = load(entry);
  check(document);
  const silent = options.silent ?? false;
  // The context openapiTS() builds from its options (openapi-typescript 7's, key for key).
  const ctx = {
    additionalProperties: options.additionalProperties ?? false,
    alphabetize: options.alphabetize ?? false,
    arrayLength: options.arrayLength ?? false,
    defaultNonNullable: options.defaultNonNullable ?? true,
    discriminators: scanDiscriminators(document, options),
    emptyObjectsUnknown: options.emptyObjectsUnknown ?? false,
    enum: options.enum ?? false,
    enumValues: options.enumValues ?? false,
    conditionalEnums: options.conditionalEnums ?? false,
    dedupeEnums: options.dedupeEnums ?? false,
    excludeDeprecated: options.excludeDeprecated ?? false,
    exportType: options.exportType ?? false,
    immutable: options.immutable ?? false,
    rootTypes: options.rootTypes ?? false,
    rootTypesNoSchemaPrefix: options.rootTypesNoSchemaPrefix ?? false,
    rootTypesKeepCasing: options.rootTypesKeepCasing ?? false,
    injectFooter: [],
    pathParamsAsTypes: options.pathParamsAsTypes ?? false,
    postTransform: undefined,
    propertiesRequiredByDefault: options.propertiesRequiredByDefault ?? false,
    redoc: undefined,
    silent,
    inject: options.inject ?? undefined,
    transform: undefined,
    transformProperty: undefined,
    makePathsEnum: options.makePathsEnum ?? false,
    generatePathParams: options.generatePathParams ?? false,
    readWriteMarkers: options.readWriteMarkers ?? false,
    resolve: ($ref) => resolveRef(document, $ref, { silent }),
  };
  return withCollators(() => astToString(transformSchema(document, ctx)));
}

module.exports = { load, openapiTypes };
