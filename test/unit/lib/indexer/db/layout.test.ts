/**
 * The tables' layout, without a database: names in snake case, SQL in the 0.4 spelling
 * translated for a 0.7 layout (tables, qualified columns, a boolean read as 0/1, aliases left
 * alone), and withLayout re-detecting once when a table or column went missing.
 */
import test from 'ava';
import {
  aliasSelect, col, fixedLayout, isIdentity, isLayoutError, PONDER_04_LAYOUT, snake, tableRef, tables, translate, withLayout,
  type Layout, type LayoutSource,
} from '../../../../../lib/indexer/db/layout.js';

const v07: Layout = {
  kind: 'ponder-0.7',
  schema: 'ponder "live"',
  tables: { request: 'bridge_request_events', relay: 'bridge_relayed_events', proof: 'bridge_proof_provided_events', dispute: 'bridge_proof_disputed_events', claim: 'bridge_deposit_claimed_events', refund: 'bridge_deposit_refunded_events' },
  columnCase: 'snake',
  booleans: 'boolean',
};

test('snake should spell names as Drizzle\'s snake_case does', (t) => {
  t.is(snake('transactionId'), 'transaction_id');
  t.is(snake('BridgeRequestEvents'), 'bridge_request_events');
  t.is(snake('originAmountFormatted'), 'origin_amount_formatted');
  t.is(snake('blockNumber'), 'block_number');
  t.is(snake('ABCThing'), 'abc_thing');
  t.is(snake('id'), 'id');
});

test('col, tableRef and tables should name columns and quoted, schema-qualified tables', (t) => {
  t.is(col(v07, 'sendChainGas'), 'send_chain_gas');
  t.is(col(PONDER_04_LAYOUT, 'sendChainGas'), 'sendChainGas');
  t.is(tableRef(PONDER_04_LAYOUT, 'request'), '"BridgeRequestEvents"');
  t.is(tableRef(v07, 'claim'), '"ponder ""live"""."bridge_deposit_claimed_events"');
  t.is(tables(v07).refund, '"ponder ""live"""."bridge_deposit_refunded_events"');
  t.deepEqual(Object.keys(tables(PONDER_04_LAYOUT)), ['request', 'relay', 'proof', 'dispute', 'claim', 'refund']);
});

test('translate should leave SQL unchanged on the 0.4 layout in the search path', (t) => {
  const sql = 'SELECT r."transactionId" FROM "BridgeRequestEvents" r';
  t.true(isIdentity(PONDER_04_LAYOUT));
  t.is(translate(sql, PONDER_04_LAYOUT), sql);
  t.false(isIdentity({ ...PONDER_04_LAYOUT, schema: 'x' }));
});

test('translate should rewrite tables, qualified columns and a boolean for a 0.7 layout, and nothing else', (t) => {
  const sql = 'SELECT r."transactionId", r."sendChainGas", r."blockNumber" AS "request_blockNumber", r."unknownCol" FROM "BridgeRequestEvents" r JOIN "BridgeRelayedEvents" l ON l."transactionId" = r."transactionId" WHERE "NotATable" = 1';
  t.is(
    translate(sql, v07),
    'SELECT r."transaction_id", r."send_chain_gas"::int, r."block_number" AS "request_blockNumber", r."unknownCol" FROM "ponder ""live"""."bridge_request_events" r JOIN "ponder ""live"""."bridge_relayed_events" l ON l."transaction_id" = r."transaction_id" WHERE "NotATable" = 1',
  );
  t.is(translate('SELECT r."sendChainGas" FROM "BridgeRequestEvents" r', { ...v07, booleans: 'integer' }), 'SELECT r."send_chain_gas" FROM "ponder ""live"""."bridge_request_events" r');
});

test('aliasSelect should alias each bare known column under its camelCase name', (t) => {
  t.is(aliasSelect('r."transactionId", r."blockNumber" AS "x", r."other"'), 'r."transactionId" AS "transactionId", r."blockNumber" AS "x", r."other"');
});

test('isLayoutError should be true for undefined_table and undefined_column only', (t) => {
  t.true(isLayoutError({ code: '42P01' }));
  t.true(isLayoutError({ code: '42703' }));
  t.false(isLayoutError({ code: '57014' }));
  t.false(isLayoutError(new Error('x')));
  t.false(isLayoutError(null));
});

test('withLayout should run on the source\'s layout, and on a missing table re-detect once and retry', async (t) => {
  t.is(await withLayout(undefined, async (l) => l.kind), 'ponder-0.4');
  t.is(await withLayout(fixedLayout(v07), async (l) => l.kind), 'ponder-0.7');
  let detections = 0;
  let invalidated = 0;
  const source: LayoutSource = { get: async () => ((detections += 1), detections === 1 ? PONDER_04_LAYOUT : v07), invalidate: () => (invalidated += 1) };
  const seen: string[] = [];
  const result = await withLayout(source, async (l) => {
    seen.push(l.kind);
    if (l.kind === 'ponder-0.4') throw Object.assign(new Error('relation does not exist'), { code: '42P01' });
    return 'rows';
  });
  t.is(result, 'rows');
  t.deepEqual(seen, ['ponder-0.4', 'ponder-0.7']);
  t.is(invalidated, 1);
  const other = Object.assign(new Error('timeout'), { code: '57014' });
  await t.throwsAsync(withLayout(fixedLayout(v07), async () => { throw other; }), { is: other });
});
