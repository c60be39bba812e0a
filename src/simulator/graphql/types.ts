/** The GraphQL simulator's public shapes, and the context its parts share. */
import type { GraphQLFieldResolver, GraphQLObjectType, GraphQLSchema } from 'graphql';
import type { OAuthClient } from '../core/oauth.ts';
import type { RateLimit } from '../core/rate-limit.ts';
import type { GraphqlSidecar, Sidecar } from '../sidecar.ts';
import type { Simulator } from '../sim-server.ts';
import type { ComplexityBudget } from './complexity.ts';
import type { GraphqlErrors } from './errors.ts';

export type Rec = Record<string, unknown>;
export type { RateLimit } from '../core/rate-limit.ts';

export interface GraphqlSimulatorOptions {
  /** The schema: SDL text, a file holding it, or a built schema. */
  schema: GraphQLSchema | string;
  sidecar?: Sidecar | string | undefined;
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always yields the same records. Default 1. */
  seed?: number | undefined;
  /** Tokens accepted (overrides the sidecar's auth.tokens). */
  tokens?: Iterable<string> | undefined;
  /** Rate limit (overrides the sidecar's); false disables it. */
  rateLimit?: RateLimit | false | undefined;
  /** The OAuth client of the sidecar's oauth flow; default sim_client / sim_secret. */
  oauthClient?: { clientId?: string | undefined; clientSecret?: string | undefined } | undefined;
  /** Most records a resource keeps; a create beyond is refused. Default 100 000. */
  maxRecords?: number | undefined;
  /**
   * Code for behaviour no declaration captures, by "Type.field": it replaces the generic
   * resolution of that field and gets the GraphqlContext. Throw an Error with `extensions` for an
   * error of the field in the vendor's shape.
   */
  resolvers?: Record<string, GraphQLFieldResolver<unknown, GraphqlContext>> | undefined;
  /** The concrete type name of a value of an interface or union, by the abstract type's name. */
  typeResolvers?: Record<string, (value: unknown) => string> | undefined;
  /** Variables of the sidecar's graphql.envelope and error templates, read per answer. */
  vars?: (() => Record<string, string | number>) | undefined;
}

/** What code-given resolvers get as context. */
export interface GraphqlContext {
  /** The API version the request asked for (graphql.versions), else undefined. */
  version: string | undefined;
  /** The simulated time (Date.now() + clock.offsetMs). */
  now: () => number;
  /** This query's cost and the budget around it, when graphql.complexity is declared. */
  complexity: { before: number; after: number; query: number; reset_in_x_seconds: number } | undefined;
  /**
   * A page of cursor pagination (graphql.cursor_pages): without a cursor, `rows` are kept as a
   * snapshot and its first `limit` answered; with one, the page after it (rows are then unused).
   */
  cursorPage(rows: Rec[], limit: number, cursor?: string | null): { cursor: string | null; rows: Rec[] };
}

/** The records of one object type. Object-typed fields hold `{__ref: id}` of the related record. */
export interface GraphqlResource {
  type: GraphQLObjectType;
  records: Map<string, Rec>;
  /** Records created through the API so far (the PRNG stream of new ids). */
  created: number;
}

export interface GraphqlSimulator extends Simulator {
  schema: GraphQLSchema;
  sidecar: Sidecar;
  /** By object type name. */
  resources: Map<string, GraphqlResource>;
  seed: number;
  /** The tokens accepted when the sidecar lists any (add or delete to grant or revoke). */
  tokens: Set<string>;
  oauth: OAuthClient;
  setRateLimit(limit: RateLimit | false): void;
  resetRateLimit(): void;
  /** Simulated time for rate-limit and budget windows (and code's context.now): advance() to skip ahead. */
  clock: { offsetMs: number; now(): number; advance(ms: number): void };
  /** The query-cost budget (graphql.complexity), mutable at runtime. */
  complexity: ComplexityBudget | undefined;
  /** Forget every cursor_pages snapshot. */
  clearCursors(): void;
  /** Seed every resource again, as when the simulator started (each table's Map is kept, cleared and refilled). */
  reseed(): void;
}

/** Simulated time: Date.now() plus an offset tests advance. */
export interface Clock {
  offsetMs: number;
  now(): number;
  advance(ms: number): void;
}

/** What the GraphQL front end's parts share. */
export interface GraphqlCtx {
  schema: GraphQLSchema;
  sidecar: Sidecar;
  g: GraphqlSidecar;
  options: GraphqlSimulatorOptions;
  seed: number;
  clock: Clock;
  queryType: GraphQLObjectType;
  mutationType: GraphQLObjectType | undefined;
  resources: Map<string, GraphqlResource>;
  errors: GraphqlErrors;
}
