/**
 * Takes docs/connect-ui.png: the Connect UI of a service on the sandbox simulators, for a
 * customer who already connected Granola, in headless Chromium (playwright-core, Debian's
 * chromium at /usr/bin/chromium or SWITCHBOARD_CHROMIUM). Run: node --import tsx scripts/screenshot-connect-ui.ts [page]
 * where page is `home` (default) or `granola` (the credential form).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { connectorRegistry } from '../src/manifest/index.ts';
import { startSandbox } from '../src/simulator/sandbox.ts';
import { createApplication, createServiceLogger, defaultServiceConfig, startService } from '../src/service/index.ts';
import { createConnectSession } from '../src/service/connect/index.ts';
import { createConnector } from '../src/service/connectors/connectors.ts';
import { withSandbox } from '../src/service/data/sandbox-wiring.ts';
import { generateKeySpec } from '../src/store/index.ts';

const which = process.argv[2] ?? 'home';
const out = process.argv[3] ?? 'docs/connect-ui.png';
const dir = mkdtempSync(join(tmpdir(), 'switchboard-shot-'));
const sandbox = await startSandbox();
const registry = connectorRegistry();
const config = withSandbox(
  defaultServiceConfig({ databaseUrl: join(dir, 'sb.db'), encryptionKey: generateKeySpec(), port: 0, syncScheduler: false }),
  sandbox,
  registry,
);
const service = await startService({ config, registry, logger: createServiceLogger('silent') });
const profile = mkdtempSync(join(tmpdir(), 'switchboard-chromium-'));
try {
  const app = await createApplication(service.ctx.store, { orgName: 'acme-saas' });
  const appRow = await service.ctx.store.findApplicationByClientId(app.client_id);
  const customer = 'customer-42';
  await createConnector(service.ctx, app.organization_id, {
    customer_name: customer,
    connector_type: 'granola',
    name: 'Granola',
    credentials: sandbox.connectors['granola']!.credentials,
  });
  const session = await createConnectSession(
    service.ctx,
    { applicationId: appRow!.id, organizationId: app.organization_id },
    { customer_name: customer, allowed_connector_types: ['granola', 'intercom', 'monday'] },
  );
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env['SWITCHBOARD_CHROMIUM'] ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 720, height: 640 },
  });
  const page = await context.newPage();
  await page.goto(session.url);
  await page.getByRole('heading', { level: 1, name: 'Connect an account' }).waitFor();
  if (which === 'granola') {
    await page.getByRole('link', { name: 'Connect Granola' }).click();
    await page.getByLabel('Granola API key').fill('grn_example_key');
  }
  await page.screenshot({ path: out, fullPage: true });
  await context.close();
  process.stdout.write(`wrote ${out}\n`);
} finally {
  await service.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
}
