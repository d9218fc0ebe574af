/**
 * The lists as the server runs them: unfiltered lists as named prepared statements with a plan
 * PostgreSQL reuses, filtered ones unnamed. Both must give exactly the rows of the plain
 * statement, on every list, page size and filter, also after the plan cache has settled (it
 * changes its choice after five runs). Plus migration 0003 (hash indexes), including over views.
 */
import test from 'ava';
import { decodeCursor } from '../../../lib/indexer/read/cursor.js';
import { rows, type IndexerDb } from '../../../lib/indexer/db/pool.js';
import { loadMigrations, migrate } from '../../../lib/indexer/db/migrate.js';
import type { ListFilter } from '../../../lib/indexer/read/params.js';
import { LIST_QUERY_NAMES, listStatement, runList, WINDOW_DEFAULTS, type QueryContext } from '../../../lib/indexer/read/queries.js';
import type { Row } from '../../../lib/indexer/read/shape.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { D, H, NOW, labels, loadFixtures, txid } from '../../fixtures/indexer/bridges.js';
import { EXPECTED } from '../../fixtures/indexer/expected.js';

let pg: TestDatabase;
/** A pool of one connection, so every run below meets the statements prepared by the previous ones. */
let one: IndexerDb;
const ctx: QueryContext = { now: NOW, ...WINDOW_DEFAULTS };

test.before(async () => {
  pg = await startTestDatabase();
  await loadFixtures(pg.db);
  one = pg.pool({ poolSize: 1 });
});

test.after.always(async () => {
  await pg?.close();
});

const FILTERS: [string, Omit<ListFilter, 'limit'>][] = [
  ['none', {}],
  ['originChainId', { originChainId: 42161 }],
  ['destChainId', { destChainId: 8453 }],
  ['both chains, matching nothing', { originChainId: 999999, destChainId: 1 }],
  ['since/until', { since: NOW - 3 * D, until: NOW - 2 * H }],
  ['cursor', { cursor: { ts: NOW - 5 * H + 1200, id: txid('proven') } }],
  ['everything', { originChainId: 8453, destChainId: 1, since: NOW - 10 * D, until: NOW, cursor: { ts: NOW, id: '0xf' } }],
];

for (const name of LIST_QUERY_NAMES) {
  test(`${name}: the server's statements give the rows of the plain statement under every filter and page size`, async (t) => {
    for (const [label, filter] of FILTERS) {
      for (const limit of [1, 2, 100]) {
        const st = listStatement(name, { limit, ...filter }, ctx);
        const expected = await rows<Row>(pg.db, st);
        // Seven runs on one connection: past the five custom plans after which PostgreSQL
        // decides whether to keep a generic plan.
        for (let run = 0; run < 7; run += 1) {
          t.deepEqual(await rows<Row>(one, st, { prepare: true }), expected, `${label}, limit ${limit}, run ${run + 1}`);
        }
      }
    }
  });

  test(`${name}: paging one row at a time through the server's path walks the expected list`, async (t) => {
    const seen: string[] = [];
    let cursor: ListFilter['cursor'];
    for (let page = 0; page < 10; page += 1) {
      const result = await runList(one, name, { limit: 1, ...(cursor ? { cursor } : {}) }, ctx);
      seen.push(...labels(result.items));
      if (!result.nextCursor) break;
      t.deepEqual(result.cursors, [result.nextCursor]);
      cursor = decodeCursor(result.nextCursor);
    }
    t.deepEqual(seen, EXPECTED[name]);
  });
}

test('an unfiltered list is one prepared statement per connection, planned once', async (t) => {
  const stats = await one.task(async (task) => {
    for (let run = 0; run < 8; run += 1) {
      for (const name of ['missingRelay', 'missingProof', 'missingClaim'] as const) {
        await rows(task, listStatement(name, { limit: 100 }, ctx), { prepare: true });
      }
    }
    return task.any<{ statement: string; generic_plans: string; custom_plans: string }>(
      'SELECT statement, generic_plans::text, custom_plans::text FROM pg_prepared_statements',
    );
  });
  const find = (name: 'missingProof' | 'missingClaim') => stats.find((s) => s.statement === listStatement(name, { limit: 100 }, ctx).text);
  for (const name of ['missingProof', 'missingClaim'] as const) {
    const s = find(name);
    t.truthy(s, `${name} is prepared`);
    t.is(s?.custom_plans, '0', `${name} is never re-planned`);
    t.true(Number(s?.generic_plans) >= 8);
  }
  // missing-relay binds its window's edge: it runs unnamed, planned for that value each time.
  t.false(stats.some((s) => s.statement === listStatement('missingRelay', { limit: 100 }, ctx).text));
});

test('migration 0003 puts a hash index on transactionId in each table, in place of the single-column btrees', async (t) => {
  const names = (await loadMigrations()).map((m) => m.name);
  t.is(names[2], '0003_transaction_id_hash_indexes');
  const indexes = await pg.db.any<{ tablename: string; indexname: string; indexdef: string }>(
    "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE 'omnigate\\_%' ORDER BY indexname",
  );
  const hash = indexes.filter((i) => i.indexname.startsWith('omnigate_hash_'));
  t.deepEqual(hash.map((i) => i.tablename).sort(), [
    'BridgeDepositClaimedEvents', 'BridgeDepositRefundedEvents', 'BridgeProofDisputedEvents', 'BridgeProofProvidedEvents',
    'BridgeRelayedEvents', 'BridgeRequestEvents',
  ]);
  for (const i of hash) t.regex(i.indexdef, /USING hash \("transactionId"\)$/);
  const names0002 = indexes.map((i) => i.indexname).filter((n) => !n.startsWith('omnigate_hash_') && !n.endsWith('_stats') && !n.endsWith('_chain_block') && n !== 'omnigate_migrations_pkey');
  t.deepEqual(names0002, [
    'omnigate_dispute_time', 'omnigate_dispute_tx_block', 'omnigate_proof_time', 'omnigate_proof_tx_block',
    'omnigate_refund_time', 'omnigate_relay_time', 'omnigate_request_time', 'omnigate_request_tx_hash',
  ]);
});

test('over a Ponder schema published as views, the migrations apply and skip the indexes', async (t) => {
  const fresh = await startTestDatabase({ migrate: false });
  const { db } = fresh;
  try {
    const [tables] = await loadMigrations();
    // Ponder's layout: tables in its own schema, views of them in public.
    await db.tx(async (tx) => {
      await tx.none('CREATE SCHEMA ponder_live');
      await tx.none('SET LOCAL search_path TO ponder_live');
      await tx.multi(tables!.sql);
    });
    for (const table of ['BridgeRequestEvents', 'BridgeRelayedEvents', 'BridgeProofProvidedEvents', 'BridgeProofDisputedEvents',
      'BridgeDepositClaimedEvents', 'BridgeDepositRefundedEvents']) {
      await db.none(`CREATE VIEW public."${table}" AS SELECT * FROM ponder_live."${table}"`);
    }
    t.deepEqual(await migrate(db), ['0001_ponder_tables', '0002_query_indexes', '0003_transaction_id_hash_indexes', '0004_stats_indexes', '0005_status_indexes']);
    const ours = await db.any("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'omnigate\\_%' AND tablename <> 'omnigate_migrations'");
    t.deepEqual(ours, []);
    // The lists still answer (through the views), prepared or not.
    t.deepEqual(await rows(db, listStatement('missingClaim', { limit: 10 }, ctx), { prepare: true }), []);
  } finally {
    await fresh.close();
  }
});
