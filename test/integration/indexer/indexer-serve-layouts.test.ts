/**
 * `omnigate serve` next to an external database that a Ponder 0.7+ indexer fills (issue 19),
 * through the real CLI: before the tables exist the lists answer 503 INDEX_NOT_READY with
 * Retry-After and one warn line (not one per request, not error level); once the tables appear
 * in `indexer.schema` the same server answers and creates the API's indexes on them, logged once.
 */
import { once } from 'node:events';
import test from 'ava';
import { REQUIRED_INDEXES } from '../../../lib/indexer/db/indexes.js';
import { listeningPort, logLines, runCli, type Run, configFile } from '../../support/cli.js';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { send } from '../../support/gateway.js';
import { startTestDatabase } from '../../support/pg.js';
import { ponderNewDdl } from '../../fixtures/indexer/ponder/ponder-new.js';

/** Resolves when a log line satisfying `match` has been printed (on output, not on a timer). */
async function logged(run: Run, match: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const line = logLines(run).find(match);
    if (line) return line;
    await Promise.race([once(run.child.stdout!, 'data'), run.exited.then(() => { throw new Error(`exited: ${run.err.join('')}`); })]);
  }
}

test('serve: 503 before Ponder creates its tables, then the lists and the indexes on the new layout', async (t) => {
  const pg = await startTestDatabase({ migrate: false });
  t.teardown(() => pg.close());
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const file = await configFile(t, `refreshInterval: 60\nindexer:\n  schema: rfq\nchains:\n  1337:\n    rpcs: [${fake.url}]\n`, 'omnigate-layouts-');
  const run = runCli(['serve', '--config', file, '--port', '0'], { DATABASE_URL: pg.url, LOG_LEVEL: 'info' }, { t });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;

  for (let i = 0; i < 3; i++) {
    const res = await send(base, 'GET', '/api/pending-transactions/missing-relay');
    t.is(res.status, 503);
    t.regex(res.headers['content-type'] as string, /^application\/problem\+json/);
    t.is(res.headers['retry-after'], '10');
    t.is(res.body.code, 'INDEX_NOT_READY');
    t.regex(res.body.detail, /schema "rfq": looked for BridgeRequestEvents \(or bridge_request_events\)/);
  }
  const warned = logLines(run).filter((l) => l.level === 'warn' && /tables/.test(String(l.msg)));
  t.is(warned.length, 1, JSON.stringify(warned));
  t.is(warned[0]!.code, 'INDEX_NOT_READY');
  t.deepEqual(logLines(run).filter((l) => l.level === 'error'), []);

  // Ponder starts and creates its tables (no omnigate table is in its way).
  await pg.db.multi(ponderNewDdl('rfq', 'pascal'));
  const ok = await send(base, 'GET', '/api/pending-transactions/missing-relay');
  t.is(ok.status, 200);
  t.deepEqual(ok.body, []);
  const found = await logged(run, (l) => l.msg === 'indexer tables found');
  t.like(found, { level: 'info', layout: 'ponder-0.7', schema: 'rfq' });
  const created = await logged(run, (l) => l.msg === 'indexer indexes created (they were missing from the catalog)');
  t.deepEqual((created.indexes as string[]).sort(), REQUIRED_INDEXES.map((i) => i.name).sort());
  const indexes = await pg.db.any<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE schemaname = 'rfq' AND indexname LIKE 'omnigate%'");
  t.is(indexes.length, REQUIRED_INDEXES.length);
  t.is(logLines(run).filter((l) => l.msg === 'indexer indexes created (they were missing from the catalog)').length, 1);
});
