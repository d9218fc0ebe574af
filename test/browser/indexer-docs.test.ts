/**
 * Headless Debian Chromium loads the docs and GraphiQL from a local server with every request to
 * another host blocked (as on a machine with no internet), and finds the operations and a working
 * GraphiQL editor. CI installs /usr/bin/chromium (apt package `chromium`).
 *
 * The browser is /usr/bin/chromium, or the executable OMNIGATE_CHROMIUM names. Where it is
 * missing, these tests are not registered and one test says so loudly instead (and passes, so
 * `npm test` works on a fresh machine), unless OMNIGATE_REQUIRE_BROWSER=1 (set by .ci/run), where
 * a missing browser fails the run.
 */
import { accessSync, constants } from 'node:fs';
import test from 'ava';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { indexerApi } from '../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../lib/indexer/catalog.js';
import { startTestDatabase, type TestDatabase } from '../support/pg.js';
import { NOW, loadFixtures, txid } from '../fixtures/indexer/bridges.js';
import { serve, type Running } from '../fixtures/indexer/server.js';

const CHROMIUM = process.env.OMNIGATE_CHROMIUM?.trim() || '/usr/bin/chromium';
const REQUIRED = process.env.OMNIGATE_REQUIRE_BROWSER === '1';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

let pg: TestDatabase;
let app: Running;
let browser: Browser;

/** A context in which only the local server is reachable; returns what was blocked and page errors. */
async function offlineContext(): Promise<{ context: BrowserContext; blocked: string[]; errors: string[] }> {
  const context = await browser.newContext();
  const blocked: string[] = [];
  const errors: string[] = [];
  const local = new URL(app.base).host;
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.host === local) return route.continue();
    blocked.push(url.href);
    return route.abort('internetdisconnected');
  });
  context.on('weberror', (e) => errors.push(e.error().message));
  return { context, blocked, errors };
}

function registerBrowserTests(): void {
  test.before(async () => {
    pg = await startTestDatabase();
    await loadFixtures(pg.db);
    app = await serve(indexerApi(pg.db, { now: () => NOW }));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  test.after.always(async () => {
    await browser?.close();
    await app?.close();
    await pg?.close();
  });

  test('Redoc renders every operation at /api-docs without the internet', async (t) => {
    const { context, blocked, errors } = await offlineContext();
    try {
      const page = await context.newPage();
      await page.goto(`${app.base}/api-docs`);
      await page.waitForSelector('[data-section-id="operation/missingRelay"]', { timeout: 30_000 });
      for (const route of LIST_ROUTES) {
        t.is(await page.locator(`[data-section-id="operation/${route.query}"]`).count(), 1, route.query);
        t.is(await page.locator(`[data-section-id="operation/${route.query}Alias"]`).count(), route.paths.length - 1, `${route.query} alias`);
      }
      t.is(await page.locator('[data-section-id="operation/transactionById"]').count(), 1);
      const heading = page.locator('[data-section-id="operation/missingClaim"] h2');
      await heading.scrollIntoViewIfNeeded();
      t.true(await heading.isVisible());
      t.is(await heading.innerText(), 'Pending transactions missing a claim');
      t.deepEqual(blocked, []);
      t.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('GraphiQL at /graphql loads offline, runs the default query and shows results', async (t) => {
    const { context, blocked, errors } = await offlineContext();
    try {
      const page = await context.newPage();
      await page.goto(`${app.base}/graphql`);
      await page.waitForSelector('.graphiql-container .CodeMirror', { timeout: 30_000 });
      t.true(await page.locator('.query-editor .CodeMirror').isVisible());
      t.regex(await page.locator('.query-editor').innerText(), /pendingTransactionsMissingRelay/);
      await page.locator('.execute-button').click();
      await page.waitForFunction(
        (id) => document.querySelector('.result-window')?.textContent?.includes(id) ?? false,
        txid('requested-fresh-a'), { timeout: 15_000 },
      );
      t.regex(await page.locator('.result-window').innerText(), /"originChain": "arbitrum"/);
      // The documentation explorer is fed by introspection, which the depth limit lets through.
      await page.locator('.docExplorerShow').click();
      await t.notThrowsAsync(page.locator('.doc-explorer-contents').getByText('Query').first().waitFor({ timeout: 10_000 }));
      t.deepEqual(blocked, []);
      t.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
}

if (executable(CHROMIUM)) {
  registerBrowserTests();
} else {
  test(`browser tests need Chromium at ${CHROMIUM}`, (t) => {
    const what = 'the browser tests of /api-docs (Redoc) and /graphql (GraphiQL)';
    const fix = 'install it (apt-get install chromium) or set OMNIGATE_CHROMIUM to a Chromium or Chrome executable';
    if (REQUIRED) {
      t.fail(`OMNIGATE_REQUIRE_BROWSER=1 but there is no executable browser at ${CHROMIUM}: ${what} cannot run; ${fix}`);
      return;
    }
    const message = `SKIPPED ${what}: no executable browser at ${CHROMIUM}; ${fix}`;
    console.warn(`\n*** ${message} ***\n`);
    t.log(message);
    t.pass();
  });
}
