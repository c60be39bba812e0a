/**
 * The connector conformance suite: one suite over every connector of the registry (no list of
 * names), each run by the interpreter against its simulator (started once, the way the sandbox
 * starts it, with the credentials the sandbox gives), for every entity × action its manifest
 * declares:
 *
 * - list: records come back, valid for the entity's record schema; with the smallest page size
 *   the action takes, a second page through the manifest's pagination when there is one.
 * - get: the record of an id taken from a listed (or created) record; an unknown id is
 *   `upstream_not_found`.
 * - create: params sampled from the action's params schema with realistic values (valid for it),
 *   parents and referenced ids taken from the simulator's records.
 * - update: on a created or listed record.
 * - any other action: its required params.
 * - a credential the upstream refuses is `upstream_credentials_rejected` (the credential check).
 * - sync of the entities that declare it into a record store (SQLite in a temp dir): a full run,
 *   then an incremental one where the manifest declares one.
 *
 * What a connector cannot do generically is a named skip in QUIRKS (with the reason), or params
 * given there; never a silent pass. Per-connector files in test/connectors hold only quirks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, connectorRegistry, SYNC_ONLY_ACTIONS, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { CompiledAction, LoadedManifest } from '../../src/manifest/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { migrate, openDatabase, type Database } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { compileTemplate } from '../../src/templates/index.ts';
import { failure } from '../helpers/errors.ts';
import { sampleParams } from '../helpers/param-values.ts';
import { recordChecker } from '../helpers/records.ts';
import { simulatedTypes, startConnectorSimulator, type ConnectorSimulator } from '../helpers/simulators.ts';

type Rec = Record<string, unknown>;

/** What a connector cannot do generically: named skips (with the reason) and params to give. */
interface Quirks {
  /** Test name (as in the report, without the connector) → why it is skipped. */
  skip?: Record<string, string>;
  /** `entity.action` → params given on top of the generated ones (from the record acted on). */
  params?: Record<string, Rec | ((target: Rec) => Rec)>;
  /** Entities whose list has a single page in the simulator even at the smallest page size → why. */
  onePage?: Record<string, string>;
  /** `entity.get` → the param that carries the record's id, when no param's value is the id. */
  idParam?: Record<string, string>;
  /** Synced entities the simulator seeds no records for → why. */
  emptySync?: Record<string, string>;
}

const QUIRKS: Record<string, Quirks> = {
  docusign: {
    skip: {
      'recipients.update':
        "DocuSign names the recipient to correct inside the body's signers array ({signers: [{recipientId, ...}]}), which the generic simulator cannot read as the record's id",
    },
  },
  github: {
    // A repository is named by its owner's login and its name, not by its id.
    params: {
      'repositories.get': (r) => ({ owner: (r['owner'] as Rec | undefined)?.['login'], repo: r['name'] }),
      'repositories.update': (r) => ({ owner: (r['owner'] as Rec | undefined)?.['login'], repo: r['name'] }),
    },
    idParam: { 'repositories.get': 'repo' },
    onePage: {
      issues: 'the sandbox seeds a repository with at most two issues',
      pull_requests: 'the sandbox seeds a repository with at most two pull requests',
      issue_comments: 'the sandbox seeds no issue comments: the list holds the one the suite creates',
    },
  },
  bitbucket: {
    // Repositories are listed per workspace (the sandbox's: its credentials' workspace) and named by its slug and their own.
    params: {
      'repositories.list': { workspace: 'northwind' },
      'repositories.get': (r) => ({ workspace: (r['workspace'] as Rec | undefined)?.['slug'], repo_slug: r['slug'] }),
      'repositories.update': (r) => ({ workspace: (r['workspace'] as Rec | undefined)?.['slug'], repo_slug: r['slug'] }),
      // A pull request's key is <workspace>/<repo>#<id>: its id counts per repository.
      'pull_requests.get': (r) => ({ pull_request_id: r['id'] }),
      'pull_requests.update': (r) => ({ pull_request_id: r['id'] }),
    },
    idParam: { 'repositories.get': 'repo_slug', 'pull_requests.get': 'pull_request_id' },
  },
  airtable: { onePage: { bases: 'Airtable pages bases 1,000 at a time and takes no page size; the sandbox seeds two' } },
  // Time-off requests are listed by a date range (start and end required): the seeded requests' year.
  bamboohr: { params: { 'time_off_requests.list': { start: '2026-01-01', end: '2026-12-31' } } },
  clickup: {
    onePage: {
      tasks:
        'ClickUp pages tasks 100 at a time with no page size param, and the sandbox seeds a list with a few (test/connectors/clickup.test.ts pages a larger one)',
    },
  },
  figma: {
    // Webhooks are listed by the context they were made on: the sandbox's team (its credentials' team_id).
    params: { 'webhooks.list': { context: 'team', context_id: '1535685101263221741' } },
  },
  gong: {
    // Gong's pages hold 100 records and take no page size; test/connectors/gong.test.ts follows records.cursor over smaller simulated pages.
    onePage: {
      calls: 'pages of 100, no page size param; the sandbox seeds 6 calls',
      users: 'pages of 100, no page size param; the sandbox seeds 4 users',
      call_transcripts: 'pages of 100, no page size param; the sandbox seeds 3 transcripts',
    },
  },
  salesforce: {
    // SOQL answers batches of 200 to 2,000 records (Sforce-Query-Options: batchSize), and the sandbox seeds a few of each
    // object: test/connectors/salesforce.test.ts follows nextRecordsUrl over 450 accounts.
    onePage: {
      accounts: 'batches of at least 200 records; the sandbox seeds 5 accounts',
      contacts: 'batches of at least 200 records; the sandbox seeds 6 contacts',
      leads: 'batches of at least 200 records; the sandbox seeds 5 leads',
      opportunities: 'batches of at least 200 records; the sandbox seeds 5 opportunities',
      cases: 'batches of at least 200 records; the sandbox seeds 4 cases',
      soql: "batches of at least 200 records; the example query reads the sandbox's 5 accounts",
    },
  },
  google_sheets: {
    // Values are named by a spreadsheet's id and an A1 range; spreadsheets have no list (Drive lists them) to take an id from, and the
    // simulator answers a range only under a spreadsheet it holds: test/connectors/google_sheets.test.ts appends, reads and writes under a created one.
    skip: {
      'values.create': 'written under a spreadsheet the suite cannot name (no list of spreadsheets); test/connectors/google_sheets.test.ts appends rows',
      'values.get': 'no list of values or spreadsheets to take a range from; test/connectors/google_sheets.test.ts reads the appended range',
      'values.get of an unknown id is upstream_not_found':
        'no spreadsheet to take an id from; test/connectors/google_sheets.test.ts reads under an unknown one',
      'values.update': 'written under a spreadsheet the suite cannot name; test/connectors/google_sheets.test.ts writes a range',
      'a refused credential is upstream_credentials_rejected':
        'Sheets has no identity endpoint and nothing to read without an id: no check (test/connectors/google_sheets.test.ts sends a refused token)',
    },
  },
  jira: { onePage: { comments: 'the sandbox seeds an issue with at most two comments' } },
  monday: {
    skip: { 'webhooks.create': "monday calls the webhook's URL to verify it before it answers; test/events/monday-webhooks.test.ts runs it with a receiver" },
  },
  notion: {
    // Databases and data sources have no list, and blocks, comments and a data source's pages are
    // listed only under a parent the suite cannot name from a param (block_id is a page's id, or a
    // block's): test/connectors/notion.test.ts reads each of them under the seeded parents.
    skip: {
      'databases.get': 'no list of databases to take an id from (test/connectors/notion.test.ts gets one)',
      'databases.get of an unknown id is upstream_not_found': 'no list of databases to take an id from',
      'data_sources.get': 'no list of data sources to take an id from (test/connectors/notion.test.ts gets one)',
      'data_sources.get of an unknown id is upstream_not_found': 'no list of data sources to take an id from',
      'data_source_pages.list': 'listed under a data source, which has no list (test/connectors/notion.test.ts queries one)',
      'blocks.list': "listed under a page's id as block_id, which the suite cannot resolve (test/connectors/notion.test.ts lists a page's blocks)",
      'blocks.get': 'no block listed, and block appends are not simulated (the created block is not kept)',
      'blocks.get of an unknown id is upstream_not_found': 'no block listed to take an id from (blocks.list is skipped)',
      'comments.get': 'no comment listed to take an id from (comments.list is skipped; test/connectors/notion.test.ts reads them)',
      // The suite's create of an entity listed under a parent first lists it (Subject.records), which with an empty list creates one: it waits on itself.
      'blocks.create':
        "block_id is a page's id the suite cannot resolve, and its empty list waits on this create (test/connectors/notion.test.ts appends nothing: appends are not simulated)",
      'comments.create': 'its parent page is named as block_id, which the suite cannot resolve, and its empty list waits on this create (as blocks.create)',
      'comments.get of an unknown id is upstream_not_found': 'no comment listed to take an id from (comments.list is skipped)',
      'comments.list': "listed under a page's id as block_id, which the suite cannot resolve (test/connectors/notion.test.ts lists a page's comments)",
    },
  },
  onedrive: {
    // A folder's children are listed under its id (root: the top folder); search needs a query.
    params: { 'drive_items.list': { folder_id: 'root' }, 'drive_item_search.list': { q: 'e' } },
    onePage: { drives: "the sandbox seeds one drive, the user's OneDrive (as a OneDrive for Business user has)" },
  },
  sharepoint: {
    skip: {
      'site_by_path.get': 'a site is named by its host and path, not by an id a list gives (test/connectors/sharepoint.test.ts gets one)',
      'site_by_path.get of an unknown id is upstream_not_found':
        'named by host and path, not by id (test/connectors/sharepoint.test.ts asks for an unknown path)',
    },
  },
  calendly: {
    // Lists are scoped by the organization's URI, which the simulator's records carry (the sandbox credentials' organization).
    params: {
      'organization_memberships.list': { organization: 'https://api.calendly.com/organizations/EBHAAFHDCAEQTSEZ' },
      'webhook_subscriptions.list': { organization: 'https://api.calendly.com/organizations/EBHAAFHDCAEQTSEZ', scope: 'organization' },
    },
    skip: {
      'users.get': "users have no list (an organization's users are its memberships, which embed them); test/connectors/calendly.test.ts gets one",
      'users.get of an unknown id is upstream_not_found': 'no list of users to take an id from (test/connectors/calendly.test.ts asks for an unknown one)',
    },
  },
  sendgrid: {
    // The upsert's `contacts` are contact objects to add or update by email, not ids of the contacts entity the name suggests.
    params: { 'contact_imports.create': { contacts: [{ email: 'ada.lovelace@example.com', first_name: 'Ada' }] } },
  },
  slack: {
    skip: {
      'conversation_topics.update':
        "a topic is a conversation's: the entity has no record of its own to list or create (test/connectors/slack.test.ts sets one)",
    },
  },
  todoist: {
    onePage: {
      comments:
        "listed by one of task_id or project_id (requires_any), which the suite samples rather than resolves: no seeded task's comments (test/connectors/todoist.test.ts pages a seeded task's)",
    },
  },
  trello: {
    skip: {
      'webhooks.get': "no list of webhooks to take an id from (Trello lists a token's webhooks under the token itself, /tokens/{token}/webhooks)",
      'webhooks.get of an unknown id is upstream_not_found': 'no list of webhooks to take an id from',
    },
  },
  zendesk: {
    onePage: { ticket_comments: 'the sandbox seeds no ticket comments: the list holds the one the suite creates' },
    skip: { 'a refused credential is upstream_credentials_rejected': "the zendesk simulator's sidecar lists no auth.tokens, so it accepts any API token" },
  },
};

/** Param names that set a list's page size, smallest page first. */
const PAGE_SIZE = /^(page_size|per_page|limit|first|max_results|pagesize|pagelen|count|top)$/;

/**
 * An id of the same shape as `id` that no record has: its digits changed (its letters too when it
 * has no digits, after any prefix), so patterns and types still accept it (hex stays hex, a number stays a number).
 */
export function unknownLike<T>(id: T): T {
  const text = String(id);
  const digits = /[0-9]/.test(text);
  const swap = (c: string): string => {
    if (/[0-9]/.test(c)) return String((Number(c) + 5) % 10);
    if (digits) return c;
    if (/[a-f]/.test(c)) return String.fromCharCode(97 + ((c.charCodeAt(0) - 97 + 3) % 6));
    if (/[A-F]/.test(c)) return String.fromCharCode(65 + ((c.charCodeAt(0) - 65 + 3) % 6));
    if (/[g-z]/.test(c)) return String.fromCharCode(103 + ((c.charCodeAt(0) - 103 + 10) % 20));
    if (/[G-Z]/.test(c)) return String.fromCharCode(71 + ((c.charCodeAt(0) - 71 + 10) % 20));
    return c;
  };
  // Without digits, a prefix (sk_test_, zd_) stays: patterns often require it.
  const cut = digits ? 0 : text.lastIndexOf('_') + 1;
  const out = text.slice(0, cut) + [...text.slice(cut)].map(swap).join('');
  return (typeof id === 'number' ? Number(out) : out) as T;
}

/** An English plural of a param's stem, to find the entity a param names (`contact_id` → contacts). */
const plurals = (stem: string): string[] => [stem, `${stem}s`, `${stem}es`, stem.replace(/y$/, 'ies')];
const stemOf = (name: string): string => name.replace(/^parent_/, '').replace(/(_id_or_key|_exposed_id|_ids|_id|_gid|_key|_number)$/, '');

/** What one connector's tests share: its runtime, and records found or made on the way, fetched once. */
class Subject {
  readonly listed = new Map<string, Promise<Rec[]>>();
  readonly created = new Map<string, Promise<Rec>>();
  seed = 1;
  constructor(
    readonly manifest: LoadedManifest,
    readonly quirks: Quirks,
    readonly sim: ConnectorSimulator,
  ) {}

  #runtime: ConnectorRuntime | undefined;

  /** The runtime with the sandbox's credentials (one, so its throttle keeps to the simulator's rate limit), or with others. */
  runtime(credentials?: Rec): ConnectorRuntime {
    const make = (c: Rec): ConnectorRuntime =>
      new ConnectorRuntime(this.manifest, c, { baseUrl: this.sim.baseUrl, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
    if (credentials !== undefined) return make(credentials);
    return (this.#runtime ??= make(this.sim.credentials));
  }

  list(entity: string, params: Rec): Promise<ListEnvelope> {
    return this.runtime().execute(entity, 'list', params) as Promise<ListEnvelope>;
  }

  readonly parents = new Map<string, Rec>();

  /**
   * The records of the entity's first page, fetched once. An entity listed under a parent (its
   * sync's for_each) is listed under the first of the parent's records that has any, and that
   * parent is the one its other actions use.
   */
  records(entity: string): Promise<Rec[]> {
    let p = this.listed.get(entity);
    if (p === undefined) {
      p = (async () => {
        const a = this.manifest.entities.get(entity)?.actions.get('list');
        if (a === undefined) {
          const made = this.created.get(entity);
          return made === undefined ? [] : [await made];
        }
        const candidates = await this.parentCandidates(entity);
        let data: Rec[] = [];
        for (const parent of candidates) {
          this.parents.set(entity, parent);
          data = (await this.list(entity, await this.params(a, 'list'))).data;
          if (data.length > 0) break;
        }
        // Nothing seeded under any parent: make one, as a caller would, and list again.
        if (data.length === 0 && this.manifest.entities.get(entity)!.actions.has('create')) {
          this.parents.set(entity, candidates[0]!);
          await this.make(entity);
          data = (await this.list(entity, await this.params(a, 'list'))).data;
        }
        return data;
      })();
      this.listed.set(entity, p);
    }
    return p;
  }

  /** Create a record of the entity (once), with sampled params. */
  make(entity: string): Promise<Rec> {
    let p = this.created.get(entity);
    if (p === undefined) {
      p = (async () => {
        const a = this.manifest.entities.get(entity)!.actions.get('create')!;
        const params = await this.params(a, 'create');
        expect(a.validateParams(params), JSON.stringify(a.validateParams.errors)).toBe(true);
        return ((await this.runtime().execute(entity, 'create', params)) as RecordEnvelope).data;
      })();
      this.created.set(entity, p);
    }
    return p;
  }

  /** A record of the entity to get or update: a listed one, else the one created (the created one first for an update, leaving seeded records as they are). */
  async target(entity: string, createdFirst = false): Promise<Rec | undefined> {
    const made = this.created.get(entity);
    if (createdFirst && made !== undefined) return await made;
    const listed = await this.records(entity);
    if (listed.length > 0) return listed[0];
    return made === undefined ? undefined : await made;
  }

  /** The params each of the first records of the parent (for_each of the entity's sync) gives; [{}] without a parent. */
  async parentCandidates(entity: string): Promise<Rec[]> {
    const fe = this.manifest.entities.get(entity)?.def.sync?.for_each;
    if (fe === undefined) return [{}];
    const templates: Record<string, string> = { [fe.param]: fe.value, ...((fe.also ?? {}) as Record<string, string>) };
    const out: Rec[] = [];
    for (const record of (await this.records(fe.entity)).slice(0, 5)) {
      const given = Object.fromEntries(Object.entries(templates).map(([k, t]) => [k, compileTemplate(String(t)).render({ record })]));
      if (Object.values(given).every((v) => v !== undefined && v !== '')) out.push(given);
    }
    return out.length > 0 ? out : [{}];
  }

  /** The parent params the entity's actions take. */
  async parentParams(entity: string): Promise<Rec> {
    if (!this.parents.has(entity)) await this.records(entity);
    return this.parents.get(entity) ?? {};
  }

  /** The entity a param's name refers to (`contact_id` → contacts), other than `self`. */
  referenced(name: string, self: string): string | undefined {
    const stem = stemOf(name);
    return plurals(stem).find((e) => e !== self && this.manifest.entities.has(e) && this.manifest.entities.get(e)!.actions.has('list'));
  }

  /** Params for one call of the action: quirks, parents, referenced records, the target's id, sampled values. */
  async params(a: CompiledAction, purpose: string, target?: Rec): Promise<Rec> {
    const defs = (a.def.params ?? {}) as Record<string, { required?: boolean; type?: unknown; minimum?: number }>;
    const required = Object.entries(defs)
      .filter(([, d]) => d.required === true)
      .map(([k]) => k);
    const names = [...required, ...a.requiresAny.map((group) => group[0]!).filter((n) => !required.includes(n))];
    // An update changes something: one optional text field when only ids are required.
    if (a.name === 'update') {
      const free = Object.entries(defs).filter(
        ([k, d]) => d.required !== true && d.type === 'string' && !/id$|cursor|^(ts|channel)$/.test(k) && !('enum' in d) && !('pattern' in d),
      );
      const extra = free.find(([k]) => /description|body|title|summary|text|note/.test(k)) ?? free[0];
      if (extra !== undefined) names.push(extra[0]);
    }
    const out: Rec = sampleParams(this.manifest, a, names, this.seed++);
    if (a.name === 'list') {
      const size = Object.entries(defs).find(([k, d]) => PAGE_SIZE.test(k) && (d.type === 'integer' || d.type === 'number'));
      if (size !== undefined) out[size[0]] = Math.max(size[1].minimum ?? 1, 2);
    }
    const parent = await this.parentParams(a.entity);
    for (const [k, v] of Object.entries(parent)) if (k in defs) out[k] = v;
    let selfParam: string | undefined;
    for (const name of required) {
      if (name in parent) continue;
      const other = this.referenced(name, a.entity);
      if (other !== undefined && !plurals(stemOf(name)).includes(a.entity)) {
        const rec = (await this.records(other))[0];
        if (rec !== undefined) {
          const pk = this.manifest.entities.get(other)!.def.primary_key ?? 'id';
          const v = rec[pk];
          out[name] = (defs[name]?.type === 'array' ? [v] : typeof v === 'number' && defs[name]?.type === 'string' ? String(v) : v) as unknown;
        }
        continue;
      }
      if (target !== undefined && selfParam === undefined && (plurals(stemOf(name)).includes(a.entity) || name === 'id' || ['get', 'update'].includes(a.name)))
        selfParam = name;
    }
    if (target !== undefined && selfParam !== undefined) {
      const pk = this.manifest.entities.get(a.entity)!.def.primary_key ?? 'id';
      const last = selfParam.split('_').at(-1)!;
      const v = target[selfParam] ?? (last !== 'id' ? target[last] : undefined) ?? target[pk];
      out[selfParam] = defs[selfParam]?.type === 'string' && typeof v === 'number' ? String(v) : v;
    }
    const given = this.quirks.params?.[`${a.entity}.${a.name}`];
    Object.assign(out, typeof given === 'function' ? given(target ?? {}) : (given ?? {}));
    void purpose;
    return out;
  }

  selfParam(a: CompiledAction, params: Rec, target: Rec): string | undefined {
    const pk = this.manifest.entities.get(a.entity)!.def.primary_key ?? 'id';
    return Object.keys(params).find(
      (k) => params[k] !== undefined && (params[k] === target[pk] || params[k] === String(target[pk]) || params[k] === target[k.split('_').at(-1)!]),
    );
  }
}

const registry = connectorRegistry();
const simulated = new Set(simulatedTypes());

for (const [type, manifest] of registry) {
  const quirks: Quirks = QUIRKS[type] ?? {};
  describe.skipIf(!simulated.has(type))(`${type}${simulated.has(type) ? '' : ' (skipped: no simulator)'}`, () => {
    let subject: Subject;
    const expectValid = recordChecker(manifest);
    beforeAll(async () => {
      const sim = await startConnectorSimulator(type);
      // Rate limits are each connector's quirk (test/connectors); here the runtime sends without
      // its throttle (limiter: null), so the simulator's own limit is lifted too.
      const setRateLimit = sim.sim['setRateLimit'];
      if (typeof setRateLimit === 'function') (setRateLimit as (l: false) => void)(false);
      subject = new Subject(manifest, quirks, sim);
    });
    afterAll(() => subject?.sim.close());

    /** `it`, or the quirk's named skip for this case. */
    const test = (name: string, fn: () => Promise<void>): void => {
      const reason = quirks.skip?.[name];
      if (reason !== undefined) it.skip(`${name} (skipped: ${reason})`, fn);
      else it(name, fn, 30_000);
    };

    for (const [entity, e] of manifest.entities) {
      for (const [action, a] of e.actions) {
        // Actions only a sync runs (incremental feeds, scrolls): the sync test below runs them.
        if (SYNC_ONLY_ACTIONS.has(action)) continue;
        const takesId = Object.values(a.def.params ?? {}).some((d) => (d as { required?: boolean }).required === true);
        if (action === 'list') {
          test(`${entity}.list`, async () => {
            const params = await subject.params(a, 'list');
            expect(a.validateParams(params), JSON.stringify(a.validateParams.errors)).toBe(true);
            const first = await subject.list(entity, params);
            expectValid(entity, first.data);
            if (a.def.pagination === undefined) return;
            const pages = subject.runtime().pages(entity, params);
            const seen: Rec[][] = [];
            for await (const page of pages) {
              seen.push(page.data);
              if (seen.length === 2) break;
            }
            expect(seen[0]!.map((r) => r[e.def.primary_key ?? 'id'])).toEqual(first.data.map((r) => r[e.def.primary_key ?? 'id']));
            if (seen.length === 2 && seen[1]!.length > 0) {
              expectValid(entity, seen[1]!);
              const firstIds = new Set(seen[0]!.map((r) => JSON.stringify(r[e.def.primary_key ?? 'id'])));
              expect(
                seen[1]!.some((r) => !firstIds.has(JSON.stringify(r[e.def.primary_key ?? 'id']))),
                'the second page has records the first did not',
              ).toBe(true);
            } else if (quirks.onePage?.[entity] === undefined) {
              throw new Error(
                `${entity}.list: one page only with page size ${JSON.stringify(params)}; give the simulator more records or name it in QUIRKS.onePage`,
              );
            }
          });
        } else if (action === 'create') {
          test(`${entity}.create`, async () => {
            expectValid(entity, [await subject.make(entity)]);
          });
        } else if (action === 'get' || action === 'update') {
          test(`${entity}.${action}`, async () => {
            const target = takesId ? await subject.target(entity, action === 'update') : {};
            if (target === undefined) throw new Error(`${entity}.${action}: no record listed or created to ${action}; name it in QUIRKS`);
            const params = await subject.params(a, action, target);
            expect(a.validateParams(params), JSON.stringify(a.validateParams.errors)).toBe(true);
            const got = ((await subject.runtime().execute(entity, action, params)) as RecordEnvelope).data;
            expectValid(entity, [got]);
            const pk = e.def.primary_key ?? 'id';
            if (target[pk] !== undefined) expect(String(got[pk])).toBe(String(target[pk]));
          });
          // A get of no id (the caller's own account) has no unknown id to ask for.
          if (action === 'get' && takesId) {
            test(`${entity}.get of an unknown id is upstream_not_found`, async () => {
              const target = await subject.target(entity);
              if (target === undefined) throw new Error(`${entity}.get: no record to take an id's shape from; name it in QUIRKS`);
              const params = await subject.params(a, 'get', target);
              const self = quirks.idParam?.[`${entity}.get`] ?? subject.selfParam(a, params, target);
              if (self === undefined) throw new Error(`${entity}.get: no param carries the record's id (${JSON.stringify(params)})`);
              params[self] = unknownLike(params[self]);
              const err = await failure(subject.runtime().execute(entity, 'get', params));
              expect(err.code, err.message).toBe('upstream_not_found');
            });
          }
        } else {
          test(`${entity}.${action}`, async () => {
            const params = await subject.params(a, action);
            expect(a.validateParams(params), JSON.stringify(a.validateParams.errors)).toBe(true);
            const out = await subject.runtime().execute(entity, action, params);
            if (Array.isArray(out.data)) {
              if (out.data.length > 0) expectValid(entity, out.data as Rec[]);
            } else expectValid(entity, [out.data]);
          });
        }
      }
    }

    test('a refused credential is upstream_credentials_rejected', async () => {
      const creds = subject.sim.credentials;
      const variant = manifest.auth.find((v) => Object.keys(creds).every((k) => k in v.def.fields));
      expect(variant, 'an auth variant takes the sandbox credentials').toBeDefined();
      const secrets = variant!.secretFields.filter((k) => typeof creds[k] === 'string');
      expect(secrets.length, 'the variant has a secret field').toBeGreaterThan(0);
      const bad: Rec = { ...creds };
      for (const k of secrets) bad[k] = unknownLike(String(creds[k]));
      const err = await failure(subject.runtime(bad).check());
      expect(err.code, err.message).toBe('upstream_credentials_rejected');
    });

    const synced = [...manifest.entities].filter(([, e]) => e.def.sync !== undefined).map(([n]) => n);
    if (synced.length > 0) {
      test('sync: a full run, then an incremental one, into the record store', async () => {
        const dir = mkdtempSync(join(tmpdir(), `conformance-${type}-`));
        const database: Database = openDatabase(join(dir, 'records.db'));
        await migrate(database, [searchMigrations, syncMigrations]);
        const store = new RecordStore(database, { cursorSecret: 'conformance' });
        const engine = new SyncEngine({ database, sink: store, fullRefreshEvery: 10, runtimeFor: async () => ({ manifest, runtime: subject.runtime() }) });
        try {
          await engine.register(type);
          const full = await engine.runOnce(type);
          expect(full.full).toBe(true);
          for (const entity of synced) {
            const n = full.entities[entity]?.records;
            expect(n, `${entity} synced`).toBeDefined();
            expect(await store.count(type, entity), entity).toBe(n);
            if (quirks.emptySync?.[entity] === undefined) expect(n, `${entity}: records synced`).toBeGreaterThan(0);
          }
          const again = await engine.runOnce(type);
          const incremental = synced.filter((en) => manifest.entities.get(en)!.def.sync!.incremental !== undefined);
          expect(again.full).toBe(incremental.length === 0);
          for (const entity of synced) expect(await store.count(type, entity), `${entity} after the second run`).toBe(full.entities[entity]!.records);
        } finally {
          await engine.stop();
          await database.close();
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });
}
