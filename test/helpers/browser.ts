/**
 * Headless Chromium for browser tests, driven by playwright-core: Debian's `chromium` package
 * at /usr/bin/chromium (or SWITCHBOARD_CHROMIUM), a fresh user-data-dir per launch, and a
 * screenshot of the page under test-results/ when a test fails. When the browser is absent,
 * HAVE_CHROMIUM is false and suites skip with CHROMIUM_SKIP_REASON in their title.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env['SWITCHBOARD_CHROMIUM']?.trim() || '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM_PATH);
export const CHROMIUM_SKIP_REASON = HAVE_CHROMIUM ? '' : ` (skipped: no Chromium at ${CHROMIUM_PATH}; apt-get install -y chromium)`;

/** Where failure screenshots go (gitignored). */
export const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserSession {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launch Chromium with a fresh profile. */
export async function launchBrowser(): Promise<BrowserSession> {
  const profile = mkdtempSync(join(tmpdir(), 'switchboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 800, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Run `fn` with a new page; on failure, save a screenshot named after the test and rethrow.
 * Console errors of every page (CSP violations among them) fail the test too.
 */
export async function withPage<T>(session: BrowserSession, name: string, fn: (page: Page) => Promise<T>): Promise<T> {
  await session.context.clearCookies();
  const consoleErrors: string[] = [];
  const watch = (p: Page): void => {
    p.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(`${p.url()}: ${m.text()}`);
    });
    p.on('pageerror', (e) => consoleErrors.push(`${p.url()}: ${e.message}`));
  };
  session.context.on('page', watch);
  const page = await session.context.newPage();
  // Fail (with a screenshot) well before the test's own timeout.
  session.context.setDefaultTimeout(10_000);
  try {
    const out = await fn(page);
    // Expected refusals (4xx pages) are logged by Chromium as failed loads; anything else is a bug.
    const unexpected = consoleErrors.filter((m) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(m));
    if (unexpected.length > 0) throw new Error(`console errors:\n${unexpected.join('\n')}`);
    return out;
  } catch (e) {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `${name.replace(/[^A-Za-z0-9_-]+/g, '-')}.png`);
    for (const p of session.context.pages()) {
      await p
        .screenshot({ path: p === page ? file : file.replace(/\.png$/, `-${session.context.pages().indexOf(p)}.png`), fullPage: true })
        .catch(() => undefined);
    }
    throw new Error(`${(e as Error).message}\n(screenshot: ${file})`, { cause: e });
  } finally {
    session.context.off('page', watch);
    for (const p of session.context.pages()) await p.close().catch(() => undefined);
  }
}
