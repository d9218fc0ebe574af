/**
 * The indexes the API needs, without a database: each named once, on columns the API reads, the
 * same names the migrations create, and the statement that creates one in either layout.
 */
import { readdirSync, readFileSync } from 'node:fs';
import test from 'ava';
import { createIndexSql, REQUIRED_INDEXES } from '../../../../../lib/indexer/db/indexes.js';
import { COLUMNS, PONDER_04_LAYOUT, type Layout } from '../../../../../lib/indexer/db/layout.js';
import { urlFromRoot } from '../../../../support/paths.js';

const migrations = urlFromRoot('config/migrations/');
const sql = readdirSync(migrations).filter((f) => f.endsWith('.sql')).map((f) => readFileSync(new URL(f, migrations), 'utf8')).join('\n');

test('should name each index once, on columns the API reads from its table', (t) => {
  const names = REQUIRED_INDEXES.map((i) => i.name);
  t.is(new Set(names).size, names.length);
  for (const spec of REQUIRED_INDEXES) {
    for (const c of [...spec.columns, ...(spec.include ?? [])]) t.true(COLUMNS[spec.table].includes(c), `${spec.name}: ${c}`);
    t.true(spec.method === 'btree' || spec.include === undefined, `${spec.name}: INCLUDE needs btree`);
  }
});

test('should use the names the migrations create, so an embedded database\'s indexes count as present', (t) => {
  for (const spec of REQUIRED_INDEXES) t.true(sql.includes(spec.name), spec.name);
});

test('createIndexSql should quote names, take the layout\'s column case, and add INCLUDE', (t) => {
  const stats = REQUIRED_INDEXES.find((i) => i.name === 'omnigate_request_stats')!;
  t.is(
    createIndexSql(PONDER_04_LAYOUT, { schema: 'public', table: 'BridgeRequestEvents' }, stats),
    'CREATE INDEX CONCURRENTLY IF NOT EXISTS "omnigate_request_stats" ON "public"."BridgeRequestEvents" USING btree ("transactionId") INCLUDE ("blockTimestamp", "originChainId", "destChainId")',
  );
  const snake: Layout = { ...PONDER_04_LAYOUT, kind: 'ponder-0.7', columnCase: 'snake' };
  const hash = REQUIRED_INDEXES.find((i) => i.name === 'omnigate_hash_relay_tx_id')!;
  t.is(createIndexSql(snake, { schema: 'my "app"', table: 'bridge_relayed_events' }, hash), 'CREATE INDEX CONCURRENTLY IF NOT EXISTS "omnigate_hash_relay_tx_id" ON "my ""app"""."bridge_relayed_events" USING hash ("transaction_id")');
});
