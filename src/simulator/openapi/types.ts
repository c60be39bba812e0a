/** The OpenAPI simulator's public shapes: its options, resources, stored records and the started simulator. */
import type { KeyObject } from 'node:crypto';
import type { Description, Json, Operation } from '../description.ts';
import type { OAuthClient } from '../core/oauth.ts';
import type { RateLimit } from '../core/rate-limit.ts';
import type { RecordSource } from '../rules.ts';
import type { ResourceDeclaration, Sidecar } from '../sidecar.ts';
import type { SimRequest, SimResponse, Simulator } from '../sim-server.ts';

export type { RateLimit } from '../core/rate-limit.ts';
export { SimulatorError } from '../core/errors.ts';

export interface OpenApiSimulatorOptions {
  /** The description: a loaded one, or a YAML/JSON file. */
  description: Description | string;
  sidecar?: Sidecar | string | undefined;
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always yields the same records. Default 1. */
  seed?: number | undefined;
  /** Most records a resource keeps (seeded and created); a create beyond answers 507. Default 100 000. */
  maxRecords?: number | undefined;
  /** Tokens accepted (overrides the sidecar's auth.tokens). */
  tokens?: Iterable<string> | undefined;
  /** Rate limit (overrides the sidecar's); false disables it. */
  rateLimit?: RateLimit | false | undefined;
  /** The OAuth client the sidecar's oauth flow accepts; default sim_client / sim_secret. */
  oauthClient?: { clientId?: string | undefined; clientSecret?: string | undefined } | undefined;
  /**
   * Code for operations whose behaviour is a state machine the sidecar cannot declare, by
   * operation ("GET /contacts/{contact_id}"). It runs after the request passed every check
   * against the description; throwing a SimulatorError answers in the vendor's error shape.
   */
  handlers?: Record<string, OperationHandler> | undefined;
  /** Public keys (PEM or KeyObject) by JWT issuer for the sidecar's jwt_tokens, beside its public_keys. */
  jwtKeys?: Record<string, KeyObject | string> | undefined;
  /** Clock in ms for JWT checks and minted tokens' expiry; default Date.now. */
  now?: (() => number) | undefined;
  /**
   * Records of a resource kept outside the generic store (by a caller with state of its own), in
   * stored order, rendered on demand: the sidecar's search, scroll and pages rules read them. A
   * source keyed by an operation ("POST /companies/list") serves that operation's rule alone.
   */
  sources?: Record<string, RecordSource> | undefined;
  /**
   * Records of a resource the caller seeds itself (a Map of id to {record, parents}; a LazyRecords
   * for large generated sets): the store keeps them in this map and seeds nothing more for it.
   */
  records?: Record<string, Map<string, StoredRecord>> | undefined;
  /** Variables of the sidecar's record templates beside {{n}}, {{id}} and {{now}} (a workspace's id). */
  vars?: Record<string, unknown> | undefined;
}

/** A request that passed the description's checks, as an operation handler sees it. */
export interface OperationContext {
  req: SimRequest;
  op: Operation;
  /** Path params, as text. */
  params: Record<string, string>;
  /** Query params, coerced to the description's types. */
  query: Json;
  /** The parsed JSON body ({} when the operation takes none). */
  body: Json;
  /** scheme://host of the request, for links. */
  origin: string;
}

/** Undefined lets the generic store answer, with the body as the handler left it (a handler that checks or reshapes a write). */
export type OperationHandler = (ctx: OperationContext) => SimResponse | undefined;

export interface StoredRecord {
  record: Json;
  /** Path params of the collection it was created under (project_gid of /projects/{project_gid}/sections). */
  parents: Record<string, string>;
}

export interface Resource {
  name: string;
  /** The sidecar's declaration of an RPC-style resource (which operations list, get... it). */
  declared?: ResourceDeclaration;
  /** Records from the description's own success examples, seeded in turn (declared resources). */
  examples?: Json[];
  /** The record field the item path's id names. */
  idField: string;
  /** The record as the item GET answers it: pointer of its schema and envelope key. */
  recordRef: string | undefined;
  records: Map<string, StoredRecord>;
  /** Records created through the API so far (the PRNG stream of new ids). */
  created: number;
  /** Other fields an item path's id may name (the sidecar's lookup: a vendor's issue and project keys). */
  lookup: string[];
}

export interface OpenApiSimulator extends Simulator {
  description: Description;
  sidecar: Sidecar;
  resources: Map<string, Resource>;
  seed: number;
  /** The tokens accepted when the sidecar lists any (add or delete to grant or revoke). */
  tokens: Set<string>;
  /** The OAuth client of the sidecar's oauth flow; set `deny` to refuse consent. */
  oauth: OAuthClient;
  /** Public keys by JWT issuer accepted by the sidecar's jwt_tokens operation (add to register an app). */
  jwtKeys: Map<string, KeyObject | string>;
  /** When each token minted by jwt_tokens expires (ms); delete a token from `tokens` to revoke it. */
  tokenExpiry: Map<string, number>;
  /** Change (or disable) the rate limit; starts a fresh window. */
  setRateLimit(limit: RateLimit | false): void;
  /** Start a fresh rate-limit window (also done by reset()). */
  resetRateLimit(): void;
  /** Expire every access token the OAuth flow issued so far (when the sidecar's oauth sets expires_in): the next use is a 401 expired_token. */
  expireAccessTokens(): void;
  /** Close the open scroll of every scroll rule (also done by reset()). */
  closeScrolls(): void;
  /**
   * Change upstream data without the API (tests): add a record as a create would (the template or
   * a sample, a fresh id, timestamps now) with `fields` over it; merge fields into a record and
   * stamp its update time (undefined for an unknown id); remove a record (false when there was none).
   */
  addRecord(resource: string, fields?: Json): Json;
  updateRecord(resource: string, id: string, fields?: Json): Json | undefined;
  removeRecord(resource: string, id: string): boolean;
}

export type Kind = 'list' | 'create' | 'get' | 'update' | 'delete' | 'action';

export interface Classified {
  kind: Kind;
  resource?: string;
  /** The item path's id parameter. */
  idParam?: string;
  /** Declared RPC methods naming their record by one of several params (a get's `path`, a move's `from_path`): the first the request gives. */
  idParams?: string[];
  /** Declared by the sidecar (an RPC method): the id and parent are query or body params, not path segments. */
  rpc?: boolean;
  /** An item path with several ids (/repos/{owner}/{repo}): its params, found through the sidecar's resources.<name>.key. */
  keyParams?: string[];
  /** A get by a query parameter (the sidecar's resources.<name>.get.id_query). */
  idQuery?: string;
  /** An update of one object field of the record (PATCH .../items/{id}/fields): the body merges into it, and it is the answer. */
  field?: string;
}

/** What the OpenAPI front end's parts share: the description, the sidecar and options, the store, schema samples. */
export interface OpenApiContext {
  d: Description;
  sidecar: Sidecar;
  options: OpenApiSimulatorOptions;
  seed: number;
  resources: Map<string, Resource>;
  classified: Map<string, Classified>;
  /** A sample of the schema at a pointer (computed once, a fresh copy each time). */
  sample(pointer: string | undefined): unknown;
  /** The cached sample itself, to read and never to change. */
  peek(pointer: string | undefined): unknown;
  /** Some operation's error schema, for errors of requests no operation matches. */
  anyErrorRef: string | undefined;
}
