/**
 * The graphql-ruby dialect of the GraphQL simulator (sidecar `graphql.dialect: graphql-ruby`):
 * APIs served by graphql-ruby (several vendors' GraphQL APIs) word parse and validation errors
 * their own way ("Parse error on \")\" (RPAREN) at [59, 15]", "Field 'xxx' doesn't exist on type
 * 'User'", with extension codes such as undefinedField); graphql-js, which executes here, words
 * them differently, so they are translated.
 */
import { visit, type ASTNode, type DocumentNode, type GraphQLError } from 'graphql';

export interface ErrorEntry {
  message: string;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions?: Record<string, unknown>;
}

const PUNCTUATORS: Record<string, string> = {
  ')': 'RPAREN',
  '(': 'LPAREN',
  '{': 'LCURLY',
  '}': 'RCURLY',
  '[': 'LBRACKET',
  ']': 'RBRACKET',
  ':': 'COLON',
  '=': 'EQUALS',
  '!': 'BANG',
  $: 'VAR_SIGN',
  '@': 'DIR_SIGN',
  '...': 'ELLIPSIS',
  '|': 'PIPE',
  '&': 'AMP',
};

/** A graphql-js syntax error as graphql-ruby words it. */
export function parseErrorEntry(e: GraphQLError): ErrorEntry {
  const loc = e.locations?.[0];
  const at = loc ? ` at [${String(loc.line)}, ${String(loc.column)}]` : '';
  const msg = e.message.replace(/^Syntax Error: /, '');
  const found = /(?:found|Unexpected) (.+?)\.?$/.exec(msg)?.[1] ?? '';
  let token: string;
  if (found === '<EOF>') {
    return { message: 'Unexpected end of document', locations: loc ? [loc] : [] };
  } else if (/^"(.+)"$/.test(found) && PUNCTUATORS[found.slice(1, -1)] !== undefined) {
    token = `"${found.slice(1, -1)}" (${PUNCTUATORS[found.slice(1, -1)] as string})`;
  } else if (/^Name "(.+)"$/.test(found)) {
    token = `"${(/^Name "(.+)"$/.exec(found) as RegExpExecArray)[1] as string}" (IDENTIFIER)`;
  } else if (/^(Int|Float|String|BlockString) (.+)$/.test(found)) {
    const m = /^(Int|Float|String|BlockString) (.+)$/.exec(found) as RegExpExecArray;
    token = `${m[2] as string} (${(m[1] as string).toUpperCase().replace('BLOCKSTRING', 'STRING')})`;
  } else {
    return { message: `Parse error: ${msg}${at}`, locations: loc ? [loc] : [] };
  }
  return { message: `Parse error on ${token}${at}`, locations: loc ? [loc] : [] };
}

/** Find the field and argument a node sits in (for argument-literal errors). */
function argumentAt(doc: DocumentNode, node: ASTNode | undefined): { field?: string; arg?: string } {
  if (node?.loc === undefined) return {};
  const start = node.loc.start;
  let found: { field?: string; arg?: string } = {};
  visit(doc, {
    Argument(arg, _k, _p, _path, ancestors) {
      if (arg.loc && arg.loc.start <= start && start < arg.loc.end) {
        const field = [...ancestors].reverse().find((a) => (a as ASTNode).kind === 'Field') as { name: { value: string } } | undefined;
        found = { arg: arg.name.value, ...(field ? { field: field.name.value } : {}) };
      }
    },
  });
  return found;
}

/** A graphql-js validation error as graphql-ruby words it, with graphql-ruby's extension codes. */
export function validationErrorEntry(e: GraphQLError, doc: DocumentNode): ErrorEntry {
  const locations = e.locations ? [...e.locations] : [];
  const base = (message: string, extensions: Record<string, unknown>): ErrorEntry => ({ message, locations, extensions });
  let m: RegExpExecArray | null;
  if ((m = /^Cannot query field "(.+?)" on type "(.+?)"/.exec(e.message))) {
    return base(`Field '${m[1] as string}' doesn't exist on type '${m[2] as string}'`, { code: 'undefinedField', typeName: m[2], fieldName: m[1] });
  }
  if ((m = /^Unknown argument "(.+?)" on field "(?:.+\.)?(.+?)"/.exec(e.message))) {
    return base(`Field '${m[2] as string}' doesn't accept argument '${m[1] as string}'`, {
      code: 'argumentNotAccepted',
      name: m[2],
      typeName: 'Field',
      argumentName: m[1],
    });
  }
  if ((m = /^Field "(?:.+\.)?(.+?)" argument "(.+?)" of type "(.+?)" is required/.exec(e.message))) {
    return base(`Field '${m[1] as string}' is missing required arguments: ${m[2] as string}`, {
      code: 'missingRequiredArguments',
      className: 'Field',
      name: m[1],
      arguments: m[2],
    });
  }
  if ((m = /^Variable "\$(.+?)" is never used/.exec(e.message))) {
    return base(`Variable $${m[1] as string} is declared by anonymous query but not used`, { code: 'variableNotUsed', variableName: m[1] });
  }
  if ((m = /^Variable "\$(.+?)" is not defined/.exec(e.message))) {
    return base(`Variable $${m[1] as string} is used by anonymous query but not declared`, { code: 'variableNotDefined', variableName: m[1] });
  }
  if ((m = /^Variable "\$(.+?)" of type "(.+?)" used in position expecting type "(.+?)"/.exec(e.message))) {
    return base(`Nullability mismatch on variable $${m[1] as string} and argument (${m[2] as string} / ${m[3] as string})`, {
      code: 'variableMismatch',
      variableName: m[1],
      typeName: m[2],
    });
  }
  if ((m = /^Unknown type "(.+?)"/.exec(e.message))) {
    return base(`${m[1] as string} isn't a defined input type`, { code: 'variableRequiresValidType', typeName: m[1] });
  }
  if (/cannot represent|^Expected value of type|^Enum ".+" cannot represent/.test(e.message)) {
    const where = argumentAt(doc, e.nodes?.[0]);
    const type = /type "(.+?)"/.exec(e.message)?.[1] ?? /^(\w+) cannot represent/.exec(e.message)?.[1] ?? 'the declared type';
    const value = /(?:found|value:) (.+?)\.?$/.exec(e.message)?.[1] ?? '';
    if (where.arg !== undefined) {
      return base(`Argument '${where.arg}' on Field '${where.field ?? ''}' has an invalid value (${value}). Expected type '${type}'.`, {
        code: 'argumentLiteralsIncompatible',
        typeName: 'Field',
        argumentName: where.arg,
      });
    }
  }
  return base(e.message, { code: 'validationError' });
}

/** Variable coercion errors raised by execute(), as graphql-ruby words them. */
export function variableErrorEntry(e: GraphQLError): ErrorEntry {
  const locations = e.locations ? [...e.locations] : [];
  const m = /^Variable "\$(.+?)" (?:got invalid value (.+?); (.+)|of required type "(.+?)" was not provided\.)$/s.exec(e.message);
  if (m) {
    const name = m[1] as string;
    return {
      message: `Variable $${name} of type ${m[4] ?? typeOfVariable(e)} was provided invalid value`,
      locations,
      extensions: {
        code: 'variableMismatch',
        value: m[2] !== undefined ? safeParse(m[2]) : null,
        problems: [{ path: [], explanation: m[3] ?? 'Expected value to not be null' }],
      },
    };
  }
  return { message: e.message, locations, extensions: { code: 'variableMismatch' } };
}

function typeOfVariable(e: GraphQLError): string {
  const node = e.nodes?.[0] as { type?: unknown } | undefined;
  const print = (t: unknown): string => {
    const n = t as { kind: string; name?: { value: string }; type?: unknown };
    if (n.kind === 'NonNullType') return `${print(n.type)}!`;
    if (n.kind === 'ListType') return `[${print(n.type)}]`;
    return n.name?.value ?? '?';
  };
  return node?.type ? print(node.type) : '?';
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return s;
  }
}
