/** The error message's place in a description's error responses. */
import { flatten, isArraySchema, isObjectSchema, propertiesOf, type OpenApiSchema } from '../json-schema.ts';
import { jsonSchemaOf, type PathItem } from './document.ts';

/** `body.errors.0.message`-like path of the message in the first 4xx/default JSON error schema. */
export function findErrorMessage(paths: Record<string, PathItem>): string | undefined {
  for (const item of Object.values(paths)) {
    for (const op of [item.get, item.post, item.put, item.patch]) {
      for (const [code, r] of Object.entries(op?.responses ?? {})) {
        if (!/^4\d\d$|^4XX$|^default$/i.test(code)) continue;
        const found = messagePath(jsonSchemaOf(r?.content), 3);
        // A list of plain messages (Jira's errorMessages, Gong's errors: [string]): its first one.
        if (found?.at(-1) === FIRST) return `(first ${['body', ...found.slice(0, -1)].join('.')})`;
        if (found) return ['body', ...found].join('.');
      }
    }
  }
  return undefined;
}

/** Marks a message path that ends in a list of strings: the message is its first element. */
const FIRST = '\u0000first';

function messagePath(schema: OpenApiSchema | undefined, depth: number): string[] | undefined {
  if (schema === undefined || depth === 0) return undefined;
  const props = propertiesOf(schema);
  const strings = props.find(
    ([k, v]) => /^(error_?messages|messages|errors)$/i.test(k) && isArraySchema(v) && flatten(flatten(v)['items'])['type'] === 'string',
  );
  if (strings) return [strings[0], FIRST];
  // description: Zendesk's {error: "RecordNotFound", description: "Not found"}; error only as a string.
  for (const key of ['message', 'error_description', 'detail', 'error_message', 'title', 'description', 'error']) {
    const p = props.find(([k, v]) => k === key && !isObjectSchema(v) && !isArraySchema(v));
    if (p) return [p[0]];
  }
  for (const [k, v] of props) {
    if (isArraySchema(v)) {
      const inner = messagePath(flatten(flatten(v)['items']), depth - 1);
      if (inner) return [k, '0', ...inner];
    } else if (isObjectSchema(v)) {
      const inner = messagePath(v, depth - 1);
      if (inner) return [k, ...inner];
    }
  }
  return undefined;
}
