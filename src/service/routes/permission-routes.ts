/**
 * GET /api/v1/account/permissions: the allow-lists in force for the caller (its application's
 * and, for a scoped token, the token's own); PUT sets the application's (its own token only;
 * `null` removes it). A scoped token's own list is set when it is minted (account-routes.ts).
 * Changes are recorded in the audit log as `permissions.updated` (audit-log.ts).
 */
import type { FastifyInstance } from 'fastify';
import { SwitchboardError } from '../../errors/index.ts';
import { principalOf } from '../auth/authentication.ts';
import type { ServiceContext } from '../context.ts';
import type { Schema } from '../http/schemas.ts';
import { AccessRulesSchema, applicationSubject, writeRules, type AccessRules } from '../auth/permissions.ts';

export const PERMISSIONS_PATH = '/api/v1/account/permissions';

const NullableRules = { anyOf: [AccessRulesSchema, { type: 'null' }] };
export const PermissionsViewSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['application', 'token'],
  properties: {
    application: { ...NullableRules, description: "The application's allow-list (null: everything allowed)" },
    token: { ...NullableRules, description: "A scoped token's own allow-list, applied on top of the application's (null: none, or an application token)" },
  },
};
const PutBodySchema: Schema = { type: 'object', additionalProperties: false, required: ['permissions'], properties: { permissions: NullableRules } };

export function permissionRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    // The preHandler hook (permissions.ts) has loaded the lists onto the principal.
    const view = (p: ReturnType<typeof principalOf>) => ({
      application: p.permissions?.find((x) => x.source === 'application')?.rules ?? null,
      token: p.permissions?.find((x) => x.source === 'token')?.rules ?? null,
    });
    app.get(
      PERMISSIONS_PATH,
      { config: { auth: 'application', customerScoped: true }, schema: { response: { 200: PermissionsViewSchema } } },
      async (request) => view(principalOf(request)),
    );
    app.put<{ Body: { permissions: AccessRules | null } }>(
      PERMISSIONS_PATH,
      { config: { auth: 'application', customerScoped: true }, schema: { body: PutBodySchema, response: { 200: PermissionsViewSchema } } },
      async (request) => {
        const p = principalOf(request);
        if (p.customerName !== null)
          throw new SwitchboardError(
            'permission_denied',
            "Not allowed for this scoped token: changing permissions (ask with the application's own access token)",
          );
        await writeRules(ctx, p.applicationId, applicationSubject(p.applicationId), request.body.permissions);
        const rules = request.body.permissions;
        p.permissions = rules === null ? [] : [{ source: 'application', rules }];
        return view(p);
      },
    );
  };
}

export function permissionOpenApiPaths(h: {
  json: (s: Schema) => Schema;
  ref: (name: string) => Schema;
  problems: (...s: number[]) => Record<string, Schema>;
  authed: number[];
}): Record<string, Schema> {
  return {
    [PERMISSIONS_PATH]: {
      get: {
        operationId: 'getPermissions',
        summary: "The allow-lists in force for the caller: its application's and, for a scoped token, the token's own (each must allow a call)",
        responses: { 200: { description: 'The allow-lists (null: none)', content: h.json(h.ref('Permissions')) }, ...h.problems(...h.authed) },
      },
      put: {
        operationId: 'setPermissions',
        summary: "Set (or with null remove) the application's allow-list of connector types, entities and actions; the application's own token only",
        requestBody: { required: true, content: h.json(PutBodySchema) },
        responses: { 200: { description: 'The allow-lists now in force', content: h.json(h.ref('Permissions')) }, ...h.problems(...h.authed, 400) },
      },
    },
  };
}
