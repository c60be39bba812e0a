/**
 * The manifest's per-subscription webhook secrets at load time (`signature.secret: subscription`
 * with `subscription_secret`): the shipped Asana (handshake), Attio (response) and Airtable
 * (response, a base64 key) sections compile; the two keys come together, with attribution by url
 * and a subscribe action, and each form names what it reads (and nothing else).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';

const fileOf = (type: string): string => new URL(`../../connectors/${type}/connector.yaml`, import.meta.url).pathname;
const load = (type: string) => loadManifestText(readFileSync(fileOf(type), 'utf8'), fileOf(type));

/** The Asana manifest with its webhooks section changed by `edit`. */
function asanaWith(edit: (w: Record<string, any>) => void): string {
  const doc = parseDocument(readFileSync(fileOf('asana'), 'utf8'));
  const w = (doc.toJS() as { webhooks: Record<string, unknown> }).webhooks;
  edit(w);
  doc.set('webhooks', doc.createNode(w));
  return doc.toString();
}

function problems(text: string): string {
  try {
    loadManifestText(text, fileOf('asana'));
  } catch (e) {
    if (e instanceof ManifestError) return e.problems.map((p) => `${p.location}: ${p.message}`).join('\n');
    throw e;
  }
  return '';
}

describe('per-subscription webhook secrets in the manifest', () => {
  it('the shipped sections compile', () => {
    expect(load('asana').webhooks).toMatchObject({
      signature: { scheme: 'hmac', header: 'x-hook-signature', secret: 'subscription' },
      subscriptionSecret: { from: 'handshake', header: 'x-hook-secret' },
      subscribe: { entity: 'webhooks', action: 'create', urlParam: 'target' },
    });
    expect(load('attio').webhooks).toMatchObject({ subscriptionSecret: { from: 'response', field: 'secret' }, signature: { header: 'attio-signature' } });
    expect(load('airtable').webhooks).toMatchObject({
      subscriptionSecret: { from: 'response', field: 'macSecretBase64' },
      signature: { keyEncoding: 'base64', prefix: 'hmac-sha256=' },
    });
  });

  it.each([
    ['a subscription secret with no rule', (w: Record<string, any>) => delete w['subscription_secret'], 'needs subscription_secret'],
    [
      'a rule with another secret',
      (w: Record<string, any>) => (w['signature']['secret'] = 'webhook_secret'),
      'subscription_secret is for signature.secret: subscription',
    ],
    [
      'attribution by payload',
      (w: Record<string, any>) => (w['attribution'] = { by: 'payload', value: '{{body.x}}', info: 'user_gid' }),
      'deliveries must come to its URL (attribution by url)',
    ],
    ['no subscribe action', (w: Record<string, any>) => delete w['subscribe'], 'name it'],
    ['a handshake with no header', (w: Record<string, any>) => (w['subscription_secret'] = { from: 'handshake' }), 'from handshake needs the header'],
    [
      'a handshake reading a field',
      (w: Record<string, any>) => (w['subscription_secret'] = { from: 'handshake', header: 'X-Hook-Secret', field: 'secret' }),
      'from handshake takes no field',
    ],
    ['a response with no field', (w: Record<string, any>) => (w['subscription_secret'] = { from: 'response' }), 'from response needs the dotted field'],
    [
      'a generated secret in a param the action lacks',
      (w: Record<string, any>) => (w['subscription_secret'] = { from: 'generated', param: 'secret' }),
      'webhooks.create has no param "secret"',
    ],
    ['an unknown form', (w: Record<string, any>) => (w['subscription_secret'] = { from: 'env' }), 'subscription_secret'],
  ])('refuses %s', (_n, edit, message) => {
    expect(problems(asanaWith(edit))).toContain(message);
  });
});
