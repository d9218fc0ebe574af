/**
 * The same API over the tables as Ponder 0.4–0.6 and as Ponder 0.7+ write them (hand-written
 * DDL from Ponder's source, test/fixtures/indexer/ponder/ponder-new.ts): every list under filters
 * and pages, the lookup and GraphQL answer the same items, letter for letter (Ponder 0.7+ stores hex
 * in lower case; the API serves addresses checksummed and other hex lower case on both), whether the new tables are read directly (`indexer.schema`), through 0.11's views schema,
 * or named in snake_case. Then: the indexes are created on the new layout's tables (through the
 * views), come back after a redeploy, and a missing column is a 500 that names it.
 */
import test from 'ava';
import { indexerApi } from '../../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../../lib/indexer/catalog.js';
import { ensureIndexes, REQUIRED_INDEXES, watchIndexes } from '../../../lib/indexer/db/indexes.js';
import { detectLayout, LayoutResolver, TABLES } from '../../../lib/indexer/db/layout.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { D, NOW, labels, loadFixtures, txid } from '../../fixtures/indexer/bridges.js';
import { EXPECTED } from '../../fixtures/indexer/expected.js';
import { copyIntoNewLayout } from '../../fixtures/indexer/ponder/ponder-new.js';
import { get, graphql, serve, type Running } from '../../fixtures/indexer/server.js';

let pg: TestDatabase;
const apps: Record<string, Running> = {};
const SCHEMAS = { direct: 'rfq', views: 'rfq_views', snake: 'rfq_snake' } as const;

test.before(async () => {
  pg = await startTestDatabase();
  await loadFixtures(pg.db);
  await copyIntoNewLayout(pg.db, SCHEMAS.direct, 'pascal', SCHEMAS.views);
  await copyIntoNewLayout(pg.db, SCHEMAS.snake, 'snake');
  apps.old = await serve(indexerApi(pg.db, { now: () => NOW }));
  for (const [name, schema] of Object.entries(SCHEMAS)) apps[name] = await serve(indexerApi(pg.db, { now: () => NOW, schema }));
});

test.after.always(async () => {
  await Promise.all(Object.values(apps).map((a) => a.close()));
  await pg?.close();
});

test('the layout is detected from the catalog: Ponder 0.4 in the search path, Ponder 0.7+ in the named schema', async (t) => {
  t.like(await detectLayout(pg.db), { kind: 'ponder-0.4', columnCase: 'camel', booleans: 'integer' });
  t.is((await detectLayout(pg.db)).schema, undefined);
  t.like(await detectLayout(pg.db, { schema: 'rfq' }), { kind: 'ponder-0.7', schema: 'rfq', columnCase: 'snake', booleans: 'boolean' });
  t.like((await detectLayout(pg.db, { schema: 'rfq_snake' })).tables, { request: 'bridge_request_events', refund: 'bridge_deposit_refunded_events' });
  const nowhere = await t.throwsAsync(detectLayout(pg.db, { schema: 'nothing_here' }));
  t.like(nowhere, { status: 503, code: 'INDEX_NOT_READY' });
  t.regex(nowhere!.message, /schema "nothing_here": looked for BridgeRequestEvents \(or bridge_request_events\)/);
});

const filters = ['', '?limit=2', `?originChainId=1`, `?destChainId=10`, `?since=${NOW - 10 * D}&limit=3`];
for (const layout of Object.keys(SCHEMAS)) {
  test(`${layout}: every list, filter and page answers what the Ponder 0.4 tables answer`, async (t) => {
    for (const route of LIST_ROUTES) {
      const path = route.paths[0]!;
      const plain = await get(`${apps[layout]!.base}${path}`);
      t.is(plain.status, 200, path);
      t.deepEqual(labels(plain.body), EXPECTED[route.query], path);
      for (const f of filters) {
        const [a, b] = await Promise.all([get(`${apps.old!.base}${path}${f}`), get(`${apps[layout]!.base}${path}${f}`)]);
        t.is(b.status, 200, `${path}${f}`);
        t.deepEqual(b.body, a.body, `${path}${f}`);
        t.is(b.headers.get('x-next-cursor'), a.headers.get('x-next-cursor'), `${path}${f}`);
      }
    }
  });

  test(`${layout}: the transaction lookup and GraphQL answer the same`, async (t) => {
    for (const label of ['requested-fresh-a', 'claimed', 'refunded-relayed', 'proven-disputed', 'conflicting-case']) {
      const [a, b] = await Promise.all([get(`${apps.old!.base}/api/transaction-id/${txid(label)}`), get(`${apps[layout]!.base}/api/transaction-id/${txid(label)}`)]);
      t.is(a.status, 200, label);
      t.is(b.status, 200, label);
      t.deepEqual(b.body, a.body, label);
    }
    const query = `{ ${LIST_ROUTES.map((r) => `${r.graphqlField}(limit: 5) { __typename }`).join(' ')} }`;
    const [a, b] = await Promise.all([graphql(apps.old!.base, query), graphql(apps[layout]!.base, query)]);
    t.is(b.status, 200);
    t.deepEqual(b.body, a.body);
    const one = `{ transaction(id: "${txid('claimed')}") { Bridge { transactionId sendChainGas originAmount } BridgeClaim { to } } }`;
    const [c, d] = await Promise.all([graphql(apps.old!.base, one), graphql(apps[layout]!.base, one)]);
    t.is(d.status, 200);
    t.deepEqual(d.body, c.body);
  });
}

test.serial('indexes: created on the new layout\'s tables through the views, and back after a redeploy drops the tables', async (t) => {
  const names = async () => (await pg.db.any<{ indexname: string }>(
    "SELECT indexname FROM pg_indexes WHERE schemaname = 'rfq' AND indexname LIKE 'omnigate%' ORDER BY 1")).map((r) => r.indexname);
  const viewsLayout = await detectLayout(pg.db, { schema: 'rfq_views' });
  const first = await ensureIndexes(pg.db, viewsLayout);
  t.deepEqual(first.created.sort(), REQUIRED_INDEXES.map((i) => i.name).sort());
  t.deepEqual(await names(), REQUIRED_INDEXES.map((i) => i.name).sort());
  const def = await pg.db.one<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE schemaname = 'rfq' AND indexname = 'omnigate_request_time'");
  t.regex(def.indexdef, /ON rfq\."BridgeRequestEvents" USING btree \(block_timestamp, transaction_id\)/);
  t.deepEqual((await ensureIndexes(pg.db, viewsLayout)).created, []);

  const resolver = new LayoutResolver(pg.db, { schema: 'rfq_views' });
  const watch = watchIndexes(pg.db, resolver, { intervalMs: 3_600_000 });
  t.teardown(() => watch.stop());
  await watch.start();
  // A redeploy: the relay table is dropped and re-created (with its view), without our indexes.
  await pg.db.multi(`DROP VIEW rfq_views."BridgeRelayedEvents";
    ALTER TABLE rfq."BridgeRelayedEvents" RENAME TO old_relays;
    CREATE TABLE rfq."BridgeRelayedEvents" (LIKE rfq.old_relays INCLUDING ALL);
    INSERT INTO rfq."BridgeRelayedEvents" SELECT * FROM rfq.old_relays;
    DROP TABLE rfq.old_relays;
    CREATE VIEW rfq_views."BridgeRelayedEvents" AS SELECT * FROM rfq."BridgeRelayedEvents";`);
  t.false((await names()).includes('omnigate_relay_time'));
  await watch.check();
  t.deepEqual(await names(), REQUIRED_INDEXES.map((i) => i.name).sort());
  const after = await get(`${apps.views!.base}/api/invalid-relays`);
  t.is(after.status, 200);
});

test.serial('a column the API reads that the new layout lacks is a 500 SCHEMA_MISMATCH naming it, not INTERNAL', async (t) => {
  await copyIntoNewLayout(pg.db, 'rfq_broken', 'snake');
  const app = await serve(indexerApi(pg.db, { now: () => NOW, schema: 'rfq_broken' }));
  t.is((await get(`${app.base}/api/disputes`)).status, 200);
  await pg.db.none('ALTER TABLE rfq_broken.bridge_proof_disputed_events RENAME COLUMN relayer TO relayer_address');
  t.teardown(() => app.close());
  const res = await get<Record<string, unknown>>(`${app.base}/api/disputes`);
  t.is(res.status, 500);
  t.is(res.headers.get('content-type'), 'application/problem+json');
  t.like(res.body, { code: 'SCHEMA_MISMATCH' });
  t.regex(String(res.body.detail), /schema "rfq_broken" do not have the columns the API reads \(snake_case, as Ponder 0\.7 and later writes them\): "bridge_proof_disputed_events" lacks "relayer"\.$/);
  // A new server detects the same at its first request.
  const fresh = await serve(indexerApi(pg.db, { now: () => NOW, schema: 'rfq_broken' }));
  t.teardown(() => fresh.close());
  const again = await get<Record<string, unknown>>(`${fresh.base}/api/transaction-id/${txid('claimed')}`);
  t.is(again.status, 500);
  t.like(again.body, { code: 'SCHEMA_MISMATCH' });
});

test.serial('Ponder 0.4 publishing views over a per-deployment schema: read through the views, indexes on the deployment\'s tables', async (t) => {
  const tablesSql = Object.values(TABLES).map((n) => `CREATE TABLE deploy_1a2b3c4d."${n}" (LIKE public."${n}");
    INSERT INTO deploy_1a2b3c4d."${n}" SELECT * FROM public."${n}";
    CREATE VIEW pub04."${n}" AS SELECT * FROM deploy_1a2b3c4d."${n}";`).join('\n');
  await pg.db.multi(`CREATE SCHEMA deploy_1a2b3c4d; CREATE SCHEMA pub04; ${tablesSql}`);
  const layout = await detectLayout(pg.db, { schema: 'pub04' });
  t.like(layout, { kind: 'ponder-0.4', schema: 'pub04', columnCase: 'camel', booleans: 'integer' });
  const result = await ensureIndexes(pg.db, layout);
  t.is(result.created.length, REQUIRED_INDEXES.length);
  const def = await pg.db.one<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE schemaname = 'deploy_1a2b3c4d' AND indexname = 'omnigate_hash_request_tx_id'");
  t.regex(def.indexdef, /ON deploy_1a2b3c4d\."BridgeRequestEvents" USING hash \("transactionId"\)/);
  const app = await serve(indexerApi(pg.db, { now: () => NOW, schema: 'pub04' }));
  t.teardown(() => app.close());
  const [a, b] = await Promise.all([get(`${apps.old!.base}/api/pending-transactions/missing-claim`), get(`${app.base}/api/pending-transactions/missing-claim`)]);
  t.is(b.status, 200);
  t.deepEqual(b.body, a.body);
});
