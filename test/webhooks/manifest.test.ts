/**
 * The manifest's webhooks section at load time: the shipped Intercom and monday sections
 * compile; mistakes are refused with their location — an unknown entity, an entity without
 * sync, a hydrated topic on an entity without get, a template reading outside the delivery,
 * attribution by payload without value/info, hmac-only keys on a jwt scheme, unknown keys.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';
import { topicRule } from '../../src/webhooks/manifest.ts';

const INTERCOM_FILE = new URL('../../connectors/intercom/connector.yaml', import.meta.url).pathname;
const INTERCOM = readFileSync(INTERCOM_FILE, 'utf8');

/** The Intercom manifest with its webhooks section changed by `edit`. */
function withWebhooks(edit: (w: Record<string, unknown>) => void): string {
  const doc = parseDocument(INTERCOM);
  const w = (doc.toJS() as { webhooks: Record<string, unknown> }).webhooks;
  edit(w);
  doc.set('webhooks', doc.createNode(w));
  return doc.toString();
}

function problems(text: string): string[] {
  try {
    loadManifestText(text, INTERCOM_FILE);
  } catch (e) {
    if (e instanceof ManifestError) return e.problems.map((p) => `${p.location}: ${p.message}`);
    throw e;
  }
  return [];
}

describe('manifest webhooks section', () => {
  it('the shipped sections compile; topic rules match exactly or by prefix, first match wins', () => {
    const m = loadManifestText(INTERCOM, INTERCOM_FILE);
    expect(m.webhooks?.signature).toMatchObject({ scheme: 'hmac', algorithm: 'sha1', header: 'x-hub-signature', prefix: 'sha1=' });
    expect(topicRule(m.webhooks!, 'contact.deleted')).toMatchObject({ entity: 'contacts', delete: true });
    expect(topicRule(m.webhooks!, 'contact.user.updated')).toMatchObject({ entity: 'contacts', delete: false });
    expect(topicRule(m.webhooks!, 'conversation.admin.replied')?.record).toBeUndefined();
    expect(topicRule(m.webhooks!, 'ping')).toBeUndefined();
  });

  it.each([
    ['an unknown entity', (w: Record<string, unknown>) => ((w['topics'] as Record<string, unknown>[])[0]!['entity'] = 'people'), 'webhooks.topics.0.entity: unknown entity "people"'],
    ['an entity without sync', (w: Record<string, unknown>) => ((w['topics'] as Record<string, unknown>[])[0]!['entity'] = 'internal_articles'), 'has no sync section'],
    ['a template reading credentials', (w: Record<string, unknown>) => (w['topic'] = '{{credentials.access_token}}'), 'webhooks.topic: unknown variable "credentials"'],
    ['attribution by payload without info', (w: Record<string, unknown>) => (w['attribution'] = { by: 'payload', value: '{{body.app_id}}' }), 'attribution by payload needs value'],
    ['hmac keys on a jwt scheme', (w: Record<string, unknown>) => ((w['signature'] as Record<string, unknown>)['scheme'] = 'jwt'), 'algorithm, prefix and encoding are for scheme hmac'],
    ['an unknown key', (w: Record<string, unknown>) => (w['secret'] = 'x'), 'secret'],
  ])('refuses %s', (_n, edit, message) => {
    expect(problems(withWebhooks(edit)).join('\n')).toContain(message);
  });
});
