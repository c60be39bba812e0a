/**
 * The generic simulators: any OpenAPI 3 description (openapi-simulator.ts) or GraphQL schema
 * (graphql-simulator.ts) served as a stateful local API, its request checks (description.ts) shared with the contract test, the
 * per-connector sidecar (sidecar.ts), and the HTTP plumbing every simulator uses (sim-server.ts).
 */
export {
  startOpenApiSimulator,
  SimulatorError,
  type OpenApiSimulator,
  type OpenApiSimulatorOptions,
  type OperationContext,
  type OperationHandler,
  type RateLimit,
  type Resource,
  type StoredRecord,
} from './openapi-simulator.ts';
export { oauthServer, type OAuthClient, type OAuthConfig, type OAuthError, type OAuthGrants } from './core/oauth.ts';
export { Description, formDecode, loadDescription, loadDescriptionSync, type Operation, type RequestProblem } from './description.ts';
export { loadSidecar, parseSidecar, type Sidecar, type GraphqlSidecar, type ResourceSidecar, type FieldRule } from './sidecar.ts';
export { OPERATOR_MEANINGS, type SearchRule, type OperatorMeaning } from './rules.ts';
export { startGraphqlSimulator, type GraphqlSimulator, type GraphqlSimulatorOptions, type GraphqlResource } from './graphql-simulator.ts';
export { startSimulator, parseJson, type SimRequest, type SimResponse, type Simulator, type Fault } from './sim-server.ts';
