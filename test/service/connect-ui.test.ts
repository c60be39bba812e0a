/**
 * The Connect UI in a real browser (headless Chromium through playwright-core): an end user
 * connects Granola with a key from the sandbox and Intercom through the simulated OAuth consent
 * (in a popup that reports back to its opener), a wrong key, an expired link, and a connection
 * made with the keyboard alone. The connectors the page creates are then executed over the API.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type HostedClient } from '../../src/client/hosted.ts';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { defaultServiceConfig, type CreatedApplication } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { CHROMIUM_SKIP_REASON, HAVE_CHROMIUM, launchBrowser, RESULTS_DIR, withPage, type BrowserSession } from '../helpers/browser.ts';
import { startHarness, testRegistry, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

// Browser globals used inside page.evaluate callbacks (the project compiles without the DOM lib).
declare const document: any;
declare const window: any;
declare function getComputedStyle(el: unknown): { outlineStyle: string };
type HTMLElement = any;
type Element = any;

/** The product embedding the page: a page that opens it in a popup, and the redirect target. */
async function startProductApp(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Product</title><h1>${req.url?.startsWith('/done') ? 'Back in the product' : 'Product settings'}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe.skipIf(!HAVE_CHROMIUM)(`Connect UI in headless Chromium${CHROMIUM_SKIP_REASON}`, () => {
  let sandbox: Sandbox;
  let h: Harness;
  let app: CreatedApplication;
  let token: string;
  let browser: BrowserSession;
  let product: { url: string; close(): Promise<void> };
  let customerSeq = 0;

  beforeAll(async () => {
    sandbox = await startSandbox();
    const registry = testRegistry();
    h = await startHarness('sqlite', { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes }, registry });
    app = await h.createApp('connect-ui');
    token = await h.token(app);
    product = await startProductApp();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await product?.close();
    await h?.close();
    await sandbox?.close();
  });

  /** A new customer and an SDK client acting for it. */
  function customer(): { name: string; client: HostedClient } {
    const name = `cust-${++customerSeq}`;
    return { name, client: createClient({ baseUrl: h.url, customerName: name, clientId: app.client_id, clientSecret: app.client_secret }) };
  }

  const connectorsOf = async (name: string): Promise<{ id: string; connector_type: string; auth_variant: string }[]> => {
    const r = await h.request('GET', `${CONNECTORS}?customer_name=${encodeURIComponent(name)}`, { token });
    expect(r.status, r.text).toBe(200);
    return r.body.data;
  };

  const granolaKey = () => sandbox.connectors['granola']!.credentials['api_key']!;

  it('connects Granola with a key from the sandbox, redirects back with the connector id, and the connector executes', async () => {
    const c = customer();
    const session = await c.client.connect.createSession({
      allowed_connector_types: ['granola', 'intercom'],
      redirect_url: `${product.url}/done?from=connect`,
    });
    expect(session.url).toBe(`${h.url}/connect#session=${session.token}`);
    await withPage(browser, 'connect-granola', async (page) => {
      await page.goto(session.url);
      await page.getByRole('heading', { level: 1, name: 'Connect an account' }).waitFor();
      // The fragment token is gone from the address bar once exchanged.
      expect(page.url()).toBe(`${h.url}/connect`);
      await expect(page.getByRole('heading', { level: 2 }).allTextContents()).resolves.toEqual(['Granola', 'Intercom']);
      await page.getByRole('link', { name: 'Connect Granola' }).click();
      await page.getByRole('heading', { level: 1, name: 'Connect Granola' }).waitFor();
      const key = page.getByLabel('Granola API key');
      expect(await key.getAttribute('type')).toBe('password');
      // The description says where to find the key.
      await expect(page.getByText('Settings → API').isVisible()).resolves.toBe(true);
      await key.fill(granolaKey());
      await page.getByRole('button', { name: 'Connect Granola' }).click();
      await page.waitForURL((u) => u.pathname === '/done');
      const back = new URL(page.url());
      expect(back.searchParams.get('from')).toBe('connect');
      expect(back.searchParams.get('connector_type')).toBe('granola');
      const id = back.searchParams.get('connector_id');
      expect(await connectorsOf(c.name)).toEqual([expect.objectContaining({ id, connector_type: 'granola', auth_variant: 'api_key' })]);
      const exec = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes', action: 'list', params: { page_size: 2 } } });
      expect(exec.status, exec.text).toBe(200);
      expect(exec.body.data.length).toBe(2);
      // The link is used now: opening the page again says so, in words.
      await page.goto(`${h.url}/connect`);
      await page.getByRole('heading', { level: 1, name: 'This link has already been used' }).waitFor();
    });
    // Neither the session token nor the key reached a log line.
    const logs = h.logs.join('\n');
    expect(logs).not.toContain(session.token);
    expect(logs).not.toContain(granolaKey());
  });

  it('reloading the success page shows it again, without posting the form again', async () => {
    const c = customer();
    const session = await c.client.connect.createSession({ allowed_connector_types: ['granola'] });
    await withPage(browser, 'reload-success', async (page) => {
      await page.goto(session.url);
      await page.getByRole('link', { name: 'Connect Granola' }).click();
      await page.getByLabel('Granola API key').fill(granolaKey());
      await page.getByRole('button', { name: 'Connect Granola' }).click();
      await page.getByRole('heading', { level: 1, name: 'Granola is connected' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/connect/done');
      for (let i = 0; i < 2; i++) {
        // A POST answer would make Chromium ask to resend the form; a GET reloads quietly.
        await page.reload();
        await page.getByRole('heading', { level: 1, name: 'Granola is connected' }).waitFor();
        expect(await page.getByText('This link has already been used').count()).toBe(0);
      }
    });
    expect(await connectorsOf(c.name)).toEqual([expect.objectContaining({ connector_type: 'granola' })]);
  });

  it("at 390 px the card keeps a margin on both sides, with each app's logo beside it", async () => {
    const c = customer();
    const session = await c.client.connect.createSession({ allowed_connector_types: ['granola', 'intercom', 'monday'] });
    await withPage(browser, 'phone-390', async (page) => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(session.url);
      await page.getByRole('heading', { level: 1, name: 'Connect an account' }).waitFor();
      const card = await page.locator('main.card').boundingBox();
      expect(card).not.toBeNull();
      expect(card!.x).toBeGreaterThanOrEqual(8);
      expect(390 - (card!.x + card!.width)).toBeGreaterThanOrEqual(8);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      const logos = await page
        .locator('img.app-logo')
        .evaluateAll((imgs: any[]) => imgs.map((i) => ({ loaded: i.complete && i.naturalWidth > 0, width: i.getBoundingClientRect().width })));
      expect(logos).toEqual([0, 1, 2].map(() => ({ loaded: true, width: 36 })));
      mkdirSync(RESULTS_DIR, { recursive: true });
      await page.screenshot({ path: join(RESULTS_DIR, 'connect-ui-390.png'), fullPage: true });
    });
  });

  it("a wrong key shows the upstream's message and stores nothing", async () => {
    const c = customer();
    const session = await c.client.connect.createSession({ allowed_connector_types: ['granola'] });
    await withPage(browser, 'wrong-key', async (page) => {
      await page.goto(session.url);
      await page.getByRole('link', { name: 'Connect Granola' }).click();
      await page.getByLabel('Granola API key').fill('grn_not_the_right_key');
      await page.getByRole('button', { name: 'Connect Granola' }).click();
      // Either outcome ends the wait, so a connection that wrongly succeeds fails at once.
      await page.locator('#error, #done-heading').first().waitFor();
      // Until the credential check on create (issue 13) is merged, Granola's simulator refuses a
      // wrong key only when the connector is used, so the page would report a connection.
      expect(await page.locator('#done-heading').count(), 'the wrong key was accepted (create does not check credentials)').toBe(0);
      const alert = page.locator('#error');
      // The Granola simulator's own words for a wrong key.
      expect(await alert.textContent()).toContain('Invalid API key');
      // Focus lands on the message; the key is not written back into the form.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('error');
      expect(await page.getByLabel('Granola API key').inputValue()).toBe('');
      expect(await page.content()).not.toContain('grn_not_the_right_key');
    });
    expect(await connectorsOf(c.name)).toEqual([]);
  });

  it('connects Intercom through the simulated OAuth consent in a popup, which tells its opener', async () => {
    const c = customer();
    const session = await c.client.connect.createSession({ allowed_connector_types: ['intercom'], redirect_url: `${product.url}/done` });
    await withPage(browser, 'connect-intercom-oauth', async (page) => {
      await page.goto(`${product.url}/settings`);
      await page.evaluate(() => {
        window.messages = [];
        window.addEventListener('message', (e: { origin: string; data: unknown }) => window.messages.push({ origin: e.origin, data: e.data }));
      });
      const [popup] = await Promise.all([
        page.context().waitForEvent('page'),
        page.evaluate((url) => void window.open(url, 'switchboard-connect', 'popup,width=600,height=800'), session.url),
      ]);
      await popup.getByRole('link', { name: 'Connect Intercom' }).click();
      // Two ways in: a private app's access token, or OAuth (the sandbox configures the OAuth app).
      await popup.getByLabel('Intercom access token').waitFor();
      await popup.getByRole('button', { name: 'Continue with Intercom' }).click();
      await popup.waitForURL((u) => u.pathname === '/done');
      const id = new URL(popup.url()).searchParams.get('connector_id');
      await page.waitForFunction(() => window.messages.length > 0);
      const messages = await page.evaluate(() => window.messages);
      expect(messages).toEqual([{ origin: h.url, data: { type: 'switchboard:connected', connector_id: id, connector_type: 'intercom' } }]);
      expect(await connectorsOf(c.name)).toEqual([expect.objectContaining({ id, connector_type: 'intercom', auth_variant: 'oauth' })]);
      const exec = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'contacts', action: 'list', params: {} } });
      expect(exec.status, exec.text).toBe(200);
      expect(exec.body.data.length).toBeGreaterThan(0);
    });
  });

  it('an expired link shows a clear page, and so does a form submitted after expiry', async () => {
    const c = customer();
    const stale = await c.client.connect.createSession({ allowed_connector_types: ['granola'] });
    const open = await c.client.connect.createSession({ allowed_connector_types: ['granola'] });
    await withPage(browser, 'expired-session', async (page) => {
      await page.goto(open.url);
      await page.getByRole('link', { name: 'Connect Granola' }).click();
      await page.getByLabel('Granola API key').fill(granolaKey());
      h.clock.offsetMs += 31 * 60 * 1000;
      try {
        await page.getByRole('button', { name: 'Connect Granola' }).click();
        await page.getByRole('heading', { level: 1, name: 'This link has expired' }).waitFor();
        expect(await page.getByRole('alert').textContent()).toContain('start again');
        await page.goto(stale.url);
        await page.getByRole('heading', { level: 1, name: 'This link has expired' }).waitFor();
        expect(await page.content()).not.toMatch(/at .*\.ts:\d+|stack/i);
      } finally {
        h.clock.offsetMs -= 31 * 60 * 1000;
      }
    });
    expect(await connectorsOf(c.name)).toEqual([]);
  });

  /** Press Tab until the focused element matches, at most `max` times; returns how many presses. */
  async function tabTo(page: Page, test: (el: { tag: string; text: string; label: string }) => boolean, max = 20): Promise<number> {
    for (let i = 1; i <= max; i++) {
      await page.keyboard.press('Tab');
      const el = await page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null;
        const id = a?.id ?? '';
        const label = id !== '' ? (document.querySelector(`label[for="${id}"]`)?.textContent ?? '') : '';
        return { tag: a?.tagName ?? '', text: (a?.textContent ?? '').trim(), label: label.trim() };
      });
      if (test(el)) return i;
    }
    throw new Error('the element was not reached with Tab');
  }

  it('can be completed with the keyboard alone, with a visible focus ring', async () => {
    const c = customer();
    const session = await c.client.connect.createSession({ allowed_connector_types: ['granola'] });
    await withPage(browser, 'keyboard-only', async (page) => {
      await page.goto(session.url);
      await page.getByRole('heading', { level: 1, name: 'Connect an account' }).waitFor();
      await tabTo(page, (el) => el.tag === 'A' && el.text === 'Connect Granola');
      const ring = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
      expect(ring).toBe('solid');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Connect Granola' }).waitFor();
      await tabTo(page, (el) => el.tag === 'INPUT' && el.label === 'Granola API key');
      await page.keyboard.type(granolaKey());
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Granola is connected' }).waitFor();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('done-heading');
    });
    expect(await connectorsOf(c.name)).toEqual([expect.objectContaining({ connector_type: 'granola' })]);
  });
});
