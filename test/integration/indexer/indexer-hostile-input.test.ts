/**
 * Attacks on the indexer API through a real server and a real PostgreSQL: answers that disagree
 * with the rows, and requests meant to hang, crash or leak. Each was a bug or covers a path no
 * other test does; the rows are inserted here, so every expectation reads off them.
 */
import test from 'ava';
import { indexerApi } from '../../../lib/indexer/api.js';
import { insertRows, type DemoRow } from '../../../lib/indexer/seed.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { get, graphql, serve, type Running } from '../../fixtures/indexer/server.js';
import { createHash } from 'node:crypto';

const NOW = 1_760_000_000;
const h = (text: string) => `0x${createHash('sha256').update(`red:${text}`).digest('hex')}`;
const A = '0xa11ce00000000000000000000000000000000001';
const B = '0xb0b0000000000000000000000000000000000002';
const TOKEN = '0xaf88d065e77c8cc2239327c5edb3a432268e5831';

const WAITING: [string, number][] = [['w1', 100], ['w2', 200], ['w3', 300], ['w4', 300], ['w5', 400], ['w6', 500], ['w7', 600], ['w8', 700]];

let pg: TestDatabase;
let app: Running;

function request(label: string, ts: number, extra: Partial<DemoRow> = {}): DemoRow {
  return {
    id: h(`${label}/request/row`), transactionId: h(label), sender: A, request: '0x00', originToken: TOKEN, destToken: TOKEN,
    originAmount: '1', originAmountFormatted: '1', destAmount: '1', destAmountFormatted: '1',
    originChainId: 10, originChain: 'optimism', destChainId: 1, destChain: 'ethereum', sendChainGas: 0,
    blockNumber: String(ts), blockTimestamp: ts, transactionHash: h(`${label}/request`), ...extra,
  };
}
function relay(label: string, ts: number, extra: Partial<DemoRow> = {}): DemoRow {
  return {
    id: h(`${label}/relay/row`), transactionId: h(label), relayer: A, to: A, originToken: TOKEN, destToken: TOKEN,
    originAmount: '1', originAmountFormatted: '1', destAmount: '1', destAmountFormatted: '1',
    originChainId: 10, originChain: 'optimism', destChainId: 1, destChain: 'ethereum',
    blockNumber: String(ts), blockTimestamp: ts, transactionHash: h(`${label}/relay`), ...extra,
  };
}
function proof(label: string, block: number, relayer: string, n = 0): DemoRow {
  return {
    id: h(`${label}/proof/${n}`), transactionId: h(label), relayer, originChainId: 10, originChain: 'optimism',
    blockNumber: String(block), blockTimestamp: block, transactionHash: h(`${label}/proof/${n}`),
  };
}
function dispute(label: string, block: number, n = 0): DemoRow {
  return {
    id: h(`${label}/dispute/${n}`), transactionId: h(label), relayer: B, originChainId: 10, originChain: 'optimism',
    blockNumber: String(block), blockTimestamp: block, transactionHash: h(`${label}/dispute/${n}`),
  };
}

test.before(async () => {
  pg = await startTestDatabase();
  await insertRows(pg.db, 'BridgeRequestEvents', [request('reproven', NOW - 3600)]);
  await insertRows(pg.db, 'BridgeRelayedEvents', [relay('reproven', NOW - 3500)]);
  // proof by A, disputed, then proven again by B: the active proof is B's.
  await insertRows(pg.db, 'BridgeProofProvidedEvents', [proof('reproven', NOW - 3400, A, 0), proof('reproven', NOW - 3000, B, 1)]);
  await insertRows(pg.db, 'BridgeProofDisputedEvents', [dispute('reproven', NOW - 3200)]);
  // Eight bridges waiting for a relay, two of them in the same second (the tie-breaker decides).
  await insertRows(pg.db, 'BridgeRequestEvents', WAITING.map(([label, age]) => request(label, NOW - age)));
  app = await serve(indexerApi(pg.db, { now: () => NOW }));
});

test.after.always(async () => {
  await app?.close();
  await pg?.close();
});

type Gql = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
type Detail = { BridgeProof?: { relayer: string; blockNumber: string }; BridgeDispute?: { blockNumber: string } };

test('the lookup of a bridge proven, disputed and proven again shows the later proof, over REST and GraphQL', async (t) => {
  // Rows: proof by A at NOW-3400, dispute at NOW-3200, proof by B at NOW-3000. The dispute has a
  // later proof (so it is not shown); the proof to show is B's, not the disputed one.
  const rest = await get<Detail>(`${app.base}/api/transaction-id/${h('reproven')}`);
  t.is(rest.status, 200);
  t.like(rest.body.BridgeProof, { relayer: B, blockNumber: String(NOW - 3000) });
  t.is(rest.body.BridgeDispute, undefined);
  const gql = await graphql<Gql>(app.base, `{ transaction(id: "${h('reproven')}") { BridgeProof { relayer blockNumber } BridgeDispute { blockNumber } } }`);
  t.is(gql.status, 200);
  t.deepEqual(gql.body.data?.transaction, { BridgeProof: { relayer: B, blockNumber: String(NOW - 3000) }, BridgeDispute: null });
  // The list agrees: the active proof of the bridge waiting for its claim is B's.
  const claim = await get<Detail[]>(`${app.base}/api/pending-transactions/missing-claim`);
  t.deepEqual(claim.body.map((item) => item.BridgeProof?.relayer), [B]);
});

test('fragments that each spread the next twice are refused at once, not walked 2^n times', async (t) => {
  // 60 fragments: the operation names 2^60 status fields. Walked spread by spread, the depth rule
  // and the cost check would hold the event loop for ever (and every other request with it).
  const frags: string[] = [];
  for (let i = 0; i < 60; i++) frags.push(`fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  frags.push('fragment F60 on Query { status { source } }');
  const res = await graphql<Gql>(app.base, `query { ...F0 }\n${frags.join('\n')}`);
  t.is(res.status, 400);
  t.is(res.body.errors?.[0]?.extensions?.code, 'QUERY_TOO_COSTLY');
  t.is(res.body.errors?.[0]?.extensions?.cost, 2 ** 60);
});

test('a query nested deeper than the parser can descend is a 400, not a 500', async (t) => {
  const queries = [
    `{ disputes(limit: ${'['.repeat(20000)}1${']'.repeat(20000)}) { cursor } }`,
    `{ ${'status { '.repeat(5000)} source ${'} '.repeat(5000)} }`,
    `{ transaction(id: ${'{a: '.repeat(10000)}1${'}'.repeat(10000)}) { Bridge { transactionId } } }`,
  ];
  for (const query of queries) {
    const post = await graphql<Gql>(app.base, query);
    t.is(post.status, 400, query.slice(0, 40));
    t.is(post.headers.get('content-type'), 'application/json; charset=utf-8');
    t.is(post.body.errors?.[0]?.extensions?.code, 'QUERY_TOO_DEEP');
    t.regex(post.body.errors?.[0]?.message ?? '', /^Syntax Error: the query is nested too deeply/);
  }
});

test('an operation may run at most 20 database queries: hundreds of aliased lookups are a 400, not a drained pool', async (t) => {
  const lookups = (n: number) => `query($i: String!) { ${Array.from({ length: n }, (_, i) => `a${i}: transaction(id: $i) { __typename }`).join(' ')} }`;
  // 14 kB of query, cost 400 (under the cost limit) and some 4,800 tokens (under that limit): before the
  // limit, each lookup a query queued on the pool at once (a thousand of them ended in a 503, every
  // other client waiting behind them).
  const bomb = await graphql<Gql>(app.base, lookups(400), { i: h('reproven') });
  t.is(bomb.status, 400);
  t.like(bomb.body.errors?.[0]?.extensions, { code: 'TOO_MANY_QUERIES', queries: 400, maxQueries: 20 });
  t.is(bomb.body.data, undefined);
  // Lists count too, through fragments and inline fragments; stats, status and __typename do not.
  const lists = `{ ...L ... on Query { ...L } stats { generatedAt } status { source } __typename }
fragment L on Query { ${Array.from({ length: 8 }, (_, i) => `d${i}: disputes(limit: 1) { cursor }`).join(' ')} missingClaim: pendingTransactionsMissingClaim(limit: 1) { cursor } x: transactionById(transactionId: "${h('reproven')}") { __typename } t: transaction(id: "${h('reproven')}") { __typename } }`;
  const over = await graphql<Gql>(app.base, lists);
  t.is(over.status, 400);
  t.like(over.body.errors?.[0]?.extensions, { code: 'TOO_MANY_QUERIES', queries: 22 });
  const atMost = await graphql<Gql>(app.base, lookups(20), { i: h('reproven') });
  t.is(atMost.status, 200);
  t.is(Object.keys(atMost.body.data ?? {}).length, 20);
  t.deepEqual(atMost.body.data?.a19, { __typename: 'CompleteTransaction' });
});

type Item = { Bridge: { transactionId: string } };
const labelOf = (id: string) => [...WAITING.map(([l]) => l), 'reproven', 'late-new', 'late-old'].find((l) => h(l) === id) ?? id;

test.serial('rows indexed between two pages neither skip nor repeat a row: the newer waits for a new walk, the older comes in order', async (t) => {
  const path = `${app.base}/api/pending-transactions/missing-relay?limit=3`;
  const walked: string[] = [];
  let url = path;
  let page = 0;
  for (;;) {
    const res = await get<Item[]>(url);
    t.is(res.status, 200);
    walked.push(...res.body.map((item) => labelOf(item.Bridge.transactionId)));
    if (page++ === 0) {
      // A chain that was behind catches up between the client's pages: one request newer than
      // every row seen, one older than the cursor.
      await insertRows(pg.db, 'BridgeRequestEvents', [request('late-new', NOW - 50), request('late-old', NOW - 650)]);
    }
    const next = res.headers.get('x-next-cursor');
    if (!next) break;
    t.is(res.headers.get('link'), `</api/pending-transactions/missing-relay?limit=3&cursor=${next}>; rel="next"`);
    url = `${path}&cursor=${next}`;
  }
  const tie = h('w3') > h('w4') ? ['w3', 'w4'] : ['w4', 'w3'];
  t.deepEqual(walked, ['w1', 'w2', ...tie, 'w5', 'w6', 'w7', 'late-old', 'w8']);
  const fresh = await get<Item[]>(`${app.base}/api/pending-transactions/missing-relay?limit=1`);
  t.deepEqual(fresh.body.map((item) => labelOf(item.Bridge.transactionId)), ['late-new']);
  await pg.db.none('DELETE FROM "BridgeRequestEvents" WHERE "transactionId" IN ($1, $2)', [h('late-new'), h('late-old')]);
});

test.serial('SQL in every list parameter and lookup argument is a 400 or a bound value, never SQL', async (t) => {
  const list = `${app.base}/api/pending-transactions/missing-relay`;
  const sql = ["1 OR 1=1", "1; DROP TABLE \"BridgeRequestEvents\" --", "1) UNION SELECT 1 --", "'", '1/**/', '0x1'];
  for (const parameter of ['limit', 'originChainId', 'destChainId', 'since', 'until', 'cursor']) {
    for (const value of sql) {
      const res = await get<{ code: string; parameter: string }>(`${list}?${parameter}=${encodeURIComponent(value)}`);
      t.is(res.status, 400, `${parameter}=${value}`);
      t.like(res.body, { code: 'INVALID_PARAMETER', parameter });
    }
  }
  // A well-formed cursor carrying SQL in its id is a bound text value: the rows strictly after the
  // key (NOW-350, that text), i.e. those older than 350 seconds.
  const forged = Buffer.from(JSON.stringify([NOW - 350, "0x') OR TRUE --"])).toString('base64url');
  const page = await get<Item[]>(`${list}?cursor=${forged}`);
  t.is(page.status, 200);
  t.deepEqual(page.body.map((item) => labelOf(item.Bridge.transactionId)), ['w5', 'w6', 'w7', 'w8']);
  const lookup = await get(`${app.base}/api/transaction-id/${encodeURIComponent("0x' OR '1'='1")}`);
  t.is(lookup.status, 400);
  for (const query of [
    `{ transaction(id: "${h('w1')}' OR '1'='1") { __typename } }`,
    `{ pendingTransactionsMissingRelay(cursor: "' OR 1=1 --") { cursor } }`,
    '{ pendingTransactionsMissingRelay(originChainId: 0) { cursor } }',
  ]) {
    const res = await graphql<Gql>(app.base, query);
    t.is(res.status, 400, query);
    t.is(res.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT');
  }
  const count = await pg.db.one<{ n: string }>('SELECT count(*) AS n FROM "BridgeRequestEvents"');
  t.is(Number(count.n), WAITING.length + 1);
});
