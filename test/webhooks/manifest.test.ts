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
import { topicRule } from '../../src/manifest/webhooks.ts';

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
    const monday = loadManifestText(
      readFileSync(new URL('../../connectors/monday/connector.yaml', import.meta.url).pathname, 'utf8'),
      new URL('../../connectors/monday/connector.yaml', import.meta.url).pathname,
    );
    expect(monday.webhooks?.signature).toMatchObject({ scheme: 'jwt', maxAgeSeconds: 300, audience: 'ingress_url' });
    expect(monday.webhooks?.deliveryId).toBeUndefined();
    expect(monday.webhooks?.attribution).toMatchObject({ by: 'url', info: 'account_id' });
    expect(monday.webhooks?.subscribe).toEqual({ entity: 'webhooks', action: 'create', urlParam: 'url' });
  });

  it.each([
    [
      'an unknown entity',
      (w: Record<string, unknown>) => ((w['topics'] as Record<string, unknown>[])[0]!['entity'] = 'people'),
      'webhooks.topics.0.entity: unknown entity "people"',
    ],
    [
      'an entity without sync',
      (w: Record<string, unknown>) => ((w['topics'] as Record<string, unknown>[])[0]!['entity'] = 'internal_articles'),
      'has no sync section',
    ],
    [
      'a template reading credentials',
      (w: Record<string, unknown>) => (w['topic'] = '{{credentials.access_token}}'),
      'webhooks.topic: unknown variable "credentials"',
    ],
    [
      'attribution by payload without info',
      (w: Record<string, unknown>) => (w['attribution'] = { by: 'payload', value: '{{body.app_id}}' }),
      'attribution by payload needs value',
    ],
    [
      'hmac keys on a jwt scheme',
      (w: Record<string, unknown>) => ((w['signature'] as Record<string, unknown>)['scheme'] = 'jwt'),
      'algorithm, prefix, signed_prefix and encoding are for scheme hmac',
    ],
    ['an unknown key', (w: Record<string, unknown>) => (w['secret'] = 'x'), 'secret'],
    // Issue 37, item 1: a jwt delivery's replay key is never the unsigned body; jwt-only keys on hmac; a subscribe action that does not exist.
    [
      'a body delivery_id on a jwt scheme',
      (w: Record<string, unknown>) => (w['signature'] = { scheme: 'jwt', header: 'Authorization', secret: 'webhook_secret' }),
      "the replay key is the token's jti",
    ],
    [
      'jwt keys on an hmac scheme',
      (w: Record<string, unknown>) => ((w['signature'] as Record<string, unknown>)['audience'] = 'ingress_url'),
      'max_age_seconds and audience are for scheme jwt',
    ],
    [
      'attribution by url with value but no info',
      (w: Record<string, unknown>) => (w['attribution'] = { by: 'url', value: '{{body.app_id}}' }),
      'attribution by url takes value and info together',
    ],
    [
      'a subscribe action that does not exist',
      (w: Record<string, unknown>) => (w['subscribe'] = { entity: 'contacts', action: 'subscribe', url_param: 'url' }),
      'no action contacts.subscribe',
    ],
    [
      'a subscribe url_param the action does not have',
      (w: Record<string, unknown>) => (w['subscribe'] = { entity: 'contacts', action: 'create', url_param: 'webhook_url' }),
      'has no param "webhook_url"',
    ],
  ])('refuses %s', (_n, edit, message) => {
    expect(problems(withWebhooks(edit)).join('\n')).toContain(message);
  });
});
