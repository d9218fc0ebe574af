import test from 'ava';
import type { IndexerDb } from '../../../../../lib/indexer/db/pool.js';
import { causeOf, watchDatabase } from '../../../../../lib/indexer/db/readiness.js';
import type { Logger } from '../../../../../lib/log.js';

/** A database stand-in: `SELECT 1` fails while `down` holds, and each query is counted. */
function fakeDb(state: { down: boolean; queries: number }): IndexerDb {
  return {
    one: async () => {
      state.queries += 1;
      if (state.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' });
      return { ok: 1 };
    },
  } as unknown as IndexerDb;
}

function recordingLogger() {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (level: string) => (obj: unknown, msg?: string) => lines.push({ level, obj: obj as Record<string, unknown>, ...(msg === undefined ? {} : { msg }) });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger } as unknown as Logger;
  return { logger, lines };
}

test('should log an outage once at error level, and the recovery once at info level', async (t) => {
  const state = { down: true, queries: 0 };
  const { logger, lines } = recordingLogger();
  const watch = watchDatabase(fakeDb(state), { logger, database: 'postgres://u:hunter2@db:5432/x', maxAgeMs: 0 });
  for (let i = 0; i < 3; i++) t.false((await watch.check()).ready);
  t.like(await watch.check(), { ready: false, status: 'unreachable', database: 'postgres://u:***@db:5432/x', reason: 'database: unreachable (connect ECONNREFUSED 127.0.0.1:5999)' });
  state.down = false;
  for (let i = 0; i < 3; i++) t.true((await watch.check()).ready);
  t.deepEqual(lines.map((l) => [l.level, l.msg]), [
    ['error', 'indexer database unreachable'],
    ['info', 'indexer database answers again: /api and /ready recovered'],
  ]);
  t.like(lines[0]!.obj, { database: 'postgres://u:***@db:5432/x', cause: 'connect ECONNREFUSED 127.0.0.1:5999' });
  t.false(JSON.stringify(lines).includes('hunter2'));
});

test('should share one query among concurrent checks and reuse a result for maxAgeMs', async (t) => {
  const state = { down: false, queries: 0 };
  const watch = watchDatabase(fakeDb(state), { maxAgeMs: 60_000 });
  const results = await Promise.all(Array.from({ length: 50 }, () => watch.check()));
  t.true(results.every((r) => r.ready));
  await watch.check();
  t.is(state.queries, 1);
});

test('should name the cause of an error without credentials', (t) => {
  t.is(causeOf(Object.assign(new Error('password authentication failed for user "u"'), { code: '28P01' })), '28P01: password authentication failed for user "u"');
  t.is(causeOf(new Error('connect to postgres://u:secret@h/x failed')), 'connect to postgres://u:***@h/x failed');
  const both = Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], ''), { code: 'ECONNREFUSED' });
  t.is(causeOf(both), 'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432');
});
