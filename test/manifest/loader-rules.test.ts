/** The manifest loader's error rules, search without sync, and logos (more in loader.test.ts). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { describeManifest } from '../../src/manifest/describe.ts';
import { getConnector, loadManifestText } from '../../src/manifest/index.ts';
import { mutate, problems } from '../helpers/manifest.ts';

describe('manifest loader: error rules and search without sync', () => {
  const withRule = (rule: Record<string, unknown>, key = 'in_body') => mutate((m) => (m.errors[key] = [rule]));

  it('a match rule loads: a dotted path with * and its values; its templates may read matched', () => {
    const text = withRule({
      match: { path: 'body.errors.*.code', in: ['A', 'B'] },
      code: 'upstream_rejected',
      message: '{{matched.message}}',
      not_executed: true,
    });
    expect(problems(text)).toEqual([]);
    const m = loadManifestText(text, 'test.yaml');
    expect(m.bodyErrors[0]!.test({ body: { errors: [{ code: 'X' }, { code: 'B', message: 'second' }] } })).toEqual({
      matched: { code: 'B', message: 'second' },
    });
    expect(m.bodyErrors[0]!.test({ body: { errors: [{ code: 'X' }] } })).toBeNull();
    expect(m.bodyErrors[0]!.test({ body: { errors: 'B' } })).toBeNull();
    expect(m.bodyErrors[0]!.notExecuted).toBe(true);
  });

  it('on_status rules with status, and a match on status itself', () => {
    const text = withRule({ match: { path: 'status', in: [429] }, status: [429], code: 'upstream_rate_limited' }, 'on_status');
    const m = loadManifestText(text, 'test.yaml');
    expect(m.statusErrors[0]!.test({ status: 429, body: {} })).toEqual({ matched: null });
    expect(m.statusErrors[0]!.test({ status: 503, body: {} })).toBeNull();
  });

  it.each([
    ['both when and match', { when: '{{body.errors}}', match: { path: 'body.x', in: [1] }, code: 'upstream_error' }, /exactly one of when .* or match/],
    ['neither when nor match', { code: 'upstream_error' }, /exactly one of when .* or match/],
    ['a path outside body, headers, status', { match: { path: 'params.x', in: [1] }, code: 'upstream_error' }, /match\.path: must match pattern/],
    ['an empty value list', { match: { path: 'body.x', in: [] }, code: 'upstream_error' }, /match\.in: must NOT have fewer than 1 items/],
    ['matched in a when rule', { when: '{{body.errors}}', code: 'upstream_error', message: '{{matched.message}}' }, /unknown variable "matched\.message"/],
  ])('refuses %s', (_name, rule, want) => {
    expect(problems(withRule(rule)).join('\n')).toMatch(want);
  });

  it('errors.list entries are read with entry', () => {
    expect(problems(mutate((m) => (m.errors.list = { items: '{{body.errors}}', path: '{{entry.field}}', message: '{{entry.message}}' })))).toEqual([]);
    expect(problems(mutate((m) => (m.errors.list = { items: '{{body.errors}}', message: '{{body.message}}' }))).join()).toMatch(
      /unknown variable "body\.message"/,
    );
  });

  it('sync.incremental.format: raw passes the cursor field’s value as it came (Slack’s ts); other names are refused', () => {
    expect(problems(mutate((m) => (m.entities.notes.sync.incremental.format = 'raw')))).toEqual([]);
    expect(problems(mutate((m) => (m.entities.notes.sync.incremental.format = 'verbatim'))).join()).toMatch(
      /entities\.notes\.sync\.incremental\.format.*(iso8601|allowed)/,
    );
  });

  it('sync.removals: checks the source list, its params and that the sync is incremental', () => {
    // Loaded as connectors/monday/connector.yaml: its vendor_description is the file beside it.
    const file = 'connectors/monday/connector.yaml';
    const monday = readFileSync(file, 'utf8');
    const change = (f: (m: Record<string, any>) => void): string => {
      const m = parse(monday) as Record<string, any>;
      f(m);
      return stringify(m);
    };
    expect(problems(monday, file)).toEqual([]);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.entity = 'nope')),
        file,
      ).join(),
    ).toMatch(/"nope" is not an entity with a list action/);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.since_param = 'since')),
        file,
      ).join(),
    ).toMatch(/"since" is not a param of activity_logs\.list/);
    expect(
      problems(
        change((m) => delete m.entities.items.sync.incremental),
        file,
      ).join(),
    ).toMatch(/removals need incremental/);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.id = '{{params.x}}')),
        file,
      ).join(),
    ).toMatch(/unknown variable "params\.x"/);
    // Without since_param the removals list is read whole (HubSpot's archived=true listing); a
    // format other than the four is refused.
    expect(
      problems(
        change((m) => delete m.entities.items.sync.removals.since_param),
        file,
      ),
    ).toEqual([]);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.format = 'unix_ms')),
        file,
      ),
    ).toEqual([]);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.format = 'unix_minutes')),
        file,
      ).join(),
    ).toMatch(/format/);
  });

  it('OAuth URLs may name pattern-declared credential fields of their variant, nothing else', () => {
    const file = 'connectors/zendesk/connector.yaml';
    const zendesk = readFileSync(file, 'utf8');
    const change = (f: (m: Record<string, any>) => void): string => {
      const m = parse(zendesk) as Record<string, any>;
      f(m);
      return stringify(m);
    };
    const oauth = (m: Record<string, any>) => m.auth.find((v: { type: string }) => v.type === 'oauth2');
    expect(problems(zendesk, file)).toEqual([]);
    expect(
      problems(
        change((m) => (oauth(m).token_url = 'https://{{credentials.region}}.zendesk.com/oauth/tokens')),
        file,
      ).join(),
    ).toMatch(/auth\.1\.token_url: "credentials\.region" is not a credential field/);
    expect(
      problems(
        change((m) => delete oauth(m).fields.subdomain.pattern),
        file,
      ).join(),
    ).toMatch(/credentials\.subdomain is a variable of the base URL, so its field needs a pattern/);
    expect(
      problems(
        change((m) => (oauth(m).authorize_url = 'https://{{credentials.subdomain}}/oauth')),
        file,
      ).join(),
    ).toMatch(/not the whole host/);
  });

  it('sync.deleted_when: a template over the record only', () => {
    expect(problems(mutate((m) => (m.entities.notes.sync.deleted_when = "{{eq record.status 'deleted'}}")))).toEqual([]);
    expect(problems(mutate((m) => (m.entities.notes.sync.deleted_when = '{{params.page_size}}'))).join()).toMatch(
      /entities\.notes\.sync\.deleted_when: .*unknown variable "params\.page_size"/,
    );
    expect(problems(mutate((m) => (m.entities.notes.sync.deleted_when = '{{#if record.x}'))).join()).toMatch(/entities\.notes\.sync\.deleted_when/);
  });

  it('refuses search fields on an entity without sync, saying why', () => {
    const text = mutate((m) => delete m.entities.notes.sync);
    expect(problems(text)).toEqual([
      expect.stringMatching(
        /entities\.notes\.search: search fields need a sync: search reads only records the hosted service has synced, so without a sync block this entity's search would always return \[\]/,
      ),
    ]);
  });
});

/** The Granola manifest with `logo` set. */
const withLogo = (logo: unknown): string => mutate((m) => (m.logo = logo));

// A manifest's optional `logo`: an https URL or a data:image URI (svg+xml, png, jpeg, gif, webp)
// of at most 16 kB, nothing else (no javascript:, no http:, nothing that could break out of an
// HTML attribute); the shipped connectors each carry one, shown by `describe`.
describe('manifest logo', () => {
  it('takes an https URL or a data:image URI', () => {
    for (const ok of [
      'https://cdn.example.com/granola.svg',
      'data:image/png;base64,iVBORw0KGgo=',
      'data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E',
    ]) {
      expect(problems(withLogo(ok)), ok).toEqual([]);
    }
  });

  it('refuses anything else, naming the field', () => {
    for (const bad of [
      'javascript:alert(1)',
      'http://cdn.example.com/x.png',
      'data:text/html,<script>',
      'https://x.example/a b.png',
      'https://x.example/"onerror="x',
      `data:image/png;base64,${'A'.repeat(17_000)}`,
      42,
    ]) {
      const p = problems(withLogo(bad));
      expect(p.length, String(bad)).toBeGreaterThan(0);
      expect(p.join('\n')).toMatch(/logo/);
    }
  });

  it('every shipped connector has one, and describe reports it', () => {
    for (const type of ['granola', 'intercom', 'monday']) {
      const logo = getConnector(type).manifest.logo;
      expect(logo).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(logo!.split(',')[1]!, 'base64').toString()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(describeManifest(getConnector(type)).logo).toBe(logo);
    }
  });
});
