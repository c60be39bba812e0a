/** GET /api/v1/workspaces: an organization's customers ("workspaces" in Airbyte's vocabulary) as {id, name}. */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authentication.ts';
import type { ServiceContext } from '../context.ts';
import { listWorkspaces, type WorkspaceQuery } from '../connectors/customers.ts';
import { WorkspaceListSchema, WorkspacesQuerySchema } from '../http/account-schemas.ts';

export const WORKSPACES_PATH = '/api/v1/workspaces';

export function workspaceRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get<{ Querystring: WorkspaceQuery }>(
      WORKSPACES_PATH,
      // A scoped token sees its own customer only.
      { config: { customerScoped: true }, schema: { querystring: WorkspacesQuerySchema, response: { 200: WorkspaceListSchema } } },
      async (request) => {
        const p = principalOf(request);
        return listWorkspaces(ctx, p.organizationId, p.customerName, request.query);
      },
    );
  };
}
