/**
 * Reading a vendor's SDL the way its own server does: warts graphql-js refuses are repaired in
 * memory and reported, never a reason to refuse the whole schema. A type that defines a field (an
 * argument, an input field, an enum value) twice keeps the first definition; each duplicate is named
 * in a warning.
 */
import { buildASTSchema, Kind, parse, type DocumentNode, type GraphQLSchema } from 'graphql';

export interface TolerantSchema {
  schema: GraphQLSchema;
  /** What was repaired, one line each (`Type.field is defined twice: the first definition is kept`). */
  warnings: string[];
}

type Named = { readonly name: { readonly value: string } };

/** The first of each name, and a warning per later one. */
function firstOfEach<T extends Named>(items: readonly T[] | undefined, label: (name: string) => string, warnings: string[]): T[] | undefined {
  if (items === undefined) return undefined;
  const seen = new Set<string>();
  const kept: T[] = [];
  for (const item of items) {
    if (seen.has(item.name.value)) {
      warnings.push(`${label(item.name.value)} is defined twice: the first definition is kept`);
      continue;
    }
    seen.add(item.name.value);
    kept.push(item);
  }
  return kept;
}

/** The document with each type's duplicate fields, arguments, input fields and enum values dropped. */
export function dedupeSdl(doc: DocumentNode, warnings: string[]): DocumentNode {
  const definitions = doc.definitions.map((d): typeof d => {
    switch (d.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
      case Kind.OBJECT_TYPE_EXTENSION:
      case Kind.INTERFACE_TYPE_DEFINITION:
      case Kind.INTERFACE_TYPE_EXTENSION: {
        const fields = firstOfEach(d.fields, (n) => `${d.name.value}.${n}`, warnings)?.map((f) => ({
          ...f,
          arguments: firstOfEach(f.arguments, (n) => `${d.name.value}.${f.name.value}(${n})`, warnings),
        }));
        return { ...d, fields } as typeof d;
      }
      case Kind.INPUT_OBJECT_TYPE_DEFINITION:
      case Kind.INPUT_OBJECT_TYPE_EXTENSION:
        return { ...d, fields: firstOfEach(d.fields, (n) => `${d.name.value}.${n}`, warnings) } as typeof d;
      case Kind.ENUM_TYPE_DEFINITION:
      case Kind.ENUM_TYPE_EXTENSION:
        return { ...d, values: firstOfEach(d.values, (n) => `${d.name.value}.${n}`, warnings) } as typeof d;
      case Kind.DIRECTIVE_DEFINITION:
        return { ...d, arguments: firstOfEach(d.arguments, (n) => `@${d.name.value}(${n})`, warnings) } as typeof d;
      default:
        return d;
    }
  });
  return { ...doc, definitions } as DocumentNode;
}

/**
 * Build a schema from SDL text, repairing what graphql-js would refuse and the vendor's server
 * evidently accepts (duplicate definitions). Syntax errors and real type errors still throw.
 */
export function buildTolerantSchema(sdl: string): TolerantSchema {
  const warnings: string[] = [];
  const doc = dedupeSdl(parse(sdl), warnings);
  return { schema: buildASTSchema(doc), warnings };
}
