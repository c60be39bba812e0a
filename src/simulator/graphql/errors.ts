/**
 * GraphQL error answers in the vendor's shape: the sidecar's graphql.errors entries per code (or
 * graphql.error), its codes, statuses and messages; request errors answer `{errors}` with a status,
 * field errors land in `errors` beside `data`.
 */
import { GraphQLError } from 'graphql';
import { render as renderTemplate } from '../core/templates.ts';
import type { GraphqlSidecar, Sidecar } from '../sidecar.ts';
import type { SimResponse } from '../sim-server.ts';

type Rec = Record<string, unknown>;

/** Templates here render their values, not their keys. */
export const render = (template: unknown, vars: Record<string, string | number>): unknown => renderTemplate(template, vars, false);

export interface GraphqlErrors {
  entry(code: string, message: string, status: number, vars?: Record<string, string | number>): Rec;
  statusOf(code: string, fallback: number): number;
  requestError(code: string, message: string, fallback?: number, vars?: Record<string, string | number>): SimResponse;
  /** An error of one field, raised while executing: it lands in `errors` beside `data`. */
  fieldError(code: string, message: string, vars?: Record<string, string>): GraphQLError;
}

export function graphqlErrors(sidecar: Sidecar, g: GraphqlSidecar): GraphqlErrors {
  // Body problems (bad_request) answer as validation problems (invalid) unless the sidecar tells them apart.
  const codeOf = (code: string): string =>
    sidecar.error?.codes?.[code] ?? (code === 'bad_request' && g.errors?.[code] === undefined ? codeOf('invalid') : code);
  const entry = (code: string, message: string, status: number, vars: Record<string, string | number> = {}): Rec =>
    render(g.errors?.[code] ?? g.error ?? { message: '{{message}}', extensions: { code: '{{code}}' } }, {
      ...vars,
      message,
      code: codeOf(code),
      status,
    }) as Rec;
  const statusOf = (code: string, fallback: number): number => g.status?.[code] ?? (code === 'bad_request' ? g.status?.['invalid'] : undefined) ?? fallback;
  const requestError = (code: string, message: string, fallback = 400, vars: Record<string, string | number> = {}): SimResponse => {
    const status = statusOf(code, fallback);
    const custom = g.messages?.[code];
    return { status, json: { errors: [entry(code, custom === undefined ? message : String(render(custom, vars)), status, vars)] } };
  };
  /** An error of one field, raised while executing: it lands in `errors` beside `data`. */
  const fieldError = (code: string, message: string, vars: Record<string, string> = {}): GraphQLError => {
    const custom = g.messages?.[code];
    const e = entry(code, custom === undefined ? message : String(render(custom, vars)), statusOf(code, 200));
    const ext = (e['extensions'] ?? {}) as Rec;
    const err = new GraphQLError(String(e['message'] ?? message), { extensions: { ...ext } });
    (err as GraphQLError & { simCode?: string }).simCode = code;
    return err;
  };
  return { entry, statusOf, requestError, fieldError };
}
