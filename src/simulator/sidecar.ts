/**
 * The sidecar: what an OpenAPI description cannot say about its API, declared in a short YAML
 * file next to the connector (connectors/<type>/simulator.yaml) and read by the generic
 * simulator. Every key is optional; without a sidecar the simulator infers what it can.
 *
 *   error:          the vendor's error body, a JSON tree whose strings may hold {{status}},
 *                   {{code}}, {{message}}, {{field}} and {{request_id}}; `codes` renames the
 *                   simulator's codes (missing, invalid, unknown, unauthorized, invalid_token,
 *                   not_found, method_not_allowed, rate_limited) to the vendor's; `status` answers
 *                   a code with another HTTP status (200–599), `default` for the codes it does not
 *                   name (one vendor: missing and invalid are 422; another: 200 with ok: false, 429 kept).
 *   auth:           tokens: the credentials accepted (default: any present credential); header:
 *                   the header carrying them; params: parameters that carry the credential in the
 *                   description (e.g. `token`), which the Authorization header stands for;
 *                   bearer: every operation needs an Authorization token although the
 *                   description declares no security (e.g. declares none).
 *   rate_limit:     limit per window_seconds, the header names it sends, reset as unix|unix_ms|seconds;
 *                   a 429 carries Retry-After (the seconds until the window ends);
 *                   exceeded_headers: fixed headers of the 429 (a Should-Retry: "true" header); an
 *                   empty value removes one the simulator sends (Retry-After).
 *   pagination:     cursor_param, limit_param, default_limit, max_limit (a silent cap), and
 *                   dotted paths in list responses: next_cursor (the next cursor; on the last page
 *                   last_cursor if given, e.g. "", else null at the cursor's "next" holder or
 *                   the cursor itself), next_url (the next page's URL, null on the last), has_more
 *                   (true but on the last page), done (true on the last page: a vendor's end_of_stream).
 *   records:        how many records to seed per resource (default 5).
 *   resources:      per resource (the collection's last path segment): id_field, records;
 *                   lookup (other fields an item path's id may name, kept unique: a vendor's key);
 *                   lists (more operations that list it: a vendor's GET /search/jql for issue);
 *                   get ({operation, id_query}: a get by a query parameter, a vendor's
 *                   GET /user?accountId=); timestamps ({created, updated}: a dotted field, or
 *                   several, set on create and update; unix: as Unix seconds, unix_ms: as Unix milliseconds); unique ({fields, message}:
 *                   fields no two records share, a write repeating one is 409 conflict, store-rules.ts);
 *                   upsert (a create naming an existing record by this field updates it); soft_delete ({field, value, at, param}:
 *                   DELETE sets field to value (default true) and `at` to the time; get, update,
 *                   lists and searches then ignore the record and exports still show it; `param`
 *                   is the query param that lists or gets only marked records, default a boolean
 *                   flag's name: a vendor's archived=true); created_by
 *                   ([{operation, field, echo}]: a field of that operation's body creates a record
 *                   of this resource under the written record, echoed at the dotted path echo of
 *                   the answer: a ticket update's comment); key: for an item path with
 *                   several ids (/repos/{owner}/{repo}), the record field (dotted) each path param
 *                   names ({owner: owner.login, repo: name}); template: the record seeded and
 *                   created records start from instead of a sample of the schema, its strings may
 *                   be {{n}} (the record's ordinal), {{id}} and {{now}} (Unix seconds; the seed's
 *                   fixed time for seeded records), other placeholders left to the caller; seed:
 *                   fields merged over the template for seeded records only ({{n}} filled),
 *                   or a list of them, one per seeded record (records defaults to its length);
 *                   fields: seeded fields drawn from `pools`. A resource no item path implies is
 *                   declared here by its get, or by its lists (the records are the items of the
 *                   first list's array, listed per parent). For an RPC-style API
 *                   (/conversations.list): the operations that list, get, create, update and
 *                   delete it (get as an operation key or keys), the param naming the record
 *                   (id_param), the response property holding one record (record), a parent
 *                   (parent: {param, resource}) and request fields written elsewhere in the
 *                   record (writes: {topic: topic.value}). On a nested collection's resource
 *                   (/contacts/{contact_id}/notes), parent: {param, resource, append} makes the
 *                   parent's existence a condition and append references each created record
 *                   in the parent ({to, item, count}, store-rules.ts).
 *   filters:        per list query param: the record `field` it compares (dotted; default its
 *                   own name), `match` equals (default), since (field >= value), before (field <=
 *                   value), after (field > value), until (field < value) — numbers when both are
 *                   numeric (e.g. ts), else ISO times — and `any`: values that match every
 *                   record (state=all). A key header.<name> filters by a request header
 *                   (header.if-modified-since), body.<path> by a JSON body's value.
 *   unknown_query:  reject (400) or ignore (default) query parameters the description lacks.
 *   not_found:      the 404 for a record that does not exist (or a path id the description's
 *                   type rules out), by path parameter name, with `default` for the rest.
 *   parameters:     per parameter name, the code and message of a 400 it causes.
 *   operations:     per operation ("POST /tags"): bad_request, the code and message of any 400
 *                   it answers; pagination, its own (an export's); since ({param, field}: records
 *                   whose field is at or after the param's Unix seconds, oldest first). An
 *                   operation with its own pagination or since also shows soft-deleted records.
 *                   no_content_unless (an update): 204 without a body unless this query param
 *                   is true (e.g. edit: returnIssue=true answers the issue, else 204).
 *                   empty (a list): {status, when_filtered}: an empty page answers that status
 *                   without a body (204), or when_filtered's for a filter given (304).
 *   oauth:          a simulated authorization-code flow (oauth.ts): its two paths, token response,
 *                   refresh tokens (rotated, or kept with keep_refresh_token), expires_in,
 *                   and `endpoints`: more JSON answers about a grant (Atlassian's
 *                   accessible-resources), empty for a consent given with sim_grant=none.
 *   jwt_tokens:     tokens minted from an app's JWT (jwt-tokens.ts; an app's installation
 *                   tokens): the minting `operation`, public_keys by issuer (more from the
 *                   simulator's jwtKeys option), fingerprints a key must have, max_lifetime_seconds
 *                   of a JWT, ttl_seconds of a token, token_prefix, the response and its status.
 *                   Minted tokens are accepted on the other operations until they expire.
 *   search:         per operation ("POST /contacts/search"), a search over a resource (rules.ts):
 *                   a filter tree or structured filter groups (filter_groups: a vendor's
 *                   filterGroups), the body paths of the filters, sort (one field or a list of
 *                   keys) and page, a free-text query, the operator symbols and their meanings,
 *                   the symbols allowed per value type, the response template. Soft-deleted
 *                   records of the simulator's own store are never found.
 *   scroll:         per operation, a one-at-a-time server-side cursor over a whole resource
 *                   (rules.ts): its parameter, page size, idle expiry, its two errors, the response.
 *   pages:          per list operation, its page from a response template (rules.ts): stored or
 *                   newest-first order (reversed by a query value), the page-size, page-number
 *                   and cursor parameters, an offset cursor or a keyset cursor of a declared form,
 *                   a cap on offset paging.
 *   query:          per operation, a statement of a SQL-like query language in a query parameter
 *                   (SELECT ... FROM ... WHERE ... ORDER BY ... LIMIT ...; query-language.ts),
 *                   answered from the resource FROM names, paged behind a locator (`next`).
 *   changed:        per operation, a change feed over several resources: the records of each
 *                   name a query parameter lists changed since a time (rules.ts).
 *   deletions:      per operation, the records a resource's soft_delete marked, in the window
 *                   of two query parameters, each answered as a template (rules.ts).
 *   pools:          named lists of values; `resources.<name>.fields` draws seeded record fields
 *                   from them (`{pool: name}`), from a list given in place (`{one_of: [...]}`),
 *                   or from the ids of another resource's seeded records (`{ids_of: resource}`).
 *   sandbox:        credentials: the sample credentials `switchboard sandbox` prints for the
 *                   connector, by the manifest's credential field names (the simulator must
 *                   accept them: list the token under auth.tokens too when tokens are checked).
 *   graphql:        for the GraphQL simulator (graphql-simulator.ts) only: the endpoint path, the
 *                   HTTP status of each error code, the shape of one entry of `errors`, the record
 *                   fields `filter` arguments may compare, the ordering and archived arguments.
 *                   auth.header names the credential header (default Authorization; a scheme word
 *                   such as Bearer before the token is optional there). Also: the error dialect
 *                   (graphql-ruby wording), error entries per code, an envelope of top-level keys,
 *                   API versions by header, a query-cost budget (complexity), cursor pagination
 *                   over snapshots (cursor_pages), field values derived by templates (fields;
 *                   ids of a resource's records name them), list fields and their arguments
 *                   (lists: graphql/lists.ts), the concrete types of interface values (types);
 *                   rate_limit.sliding
 *                   makes the request limit a sliding window; rate_limit.bucket
 *                   a token bucket of `limit` requests refilled evenly over window_seconds;
 *                   rate_limit.per_credential: requests refused for their credentials spend nothing.
 *
 * Keys of the error body whose template renders to "" are left out.
 */
export * from './sidecar/types.ts';
export { loadSidecar, parseSidecar, seedCount, seedOf } from './sidecar/load.ts';
