import test from 'ava';
import { indexerApi } from '../../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../../lib/indexer/catalog.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { D, NOW, byIdDesc, labelOf, labels, loadFixtures, txHash, txid } from '../../fixtures/indexer/bridges.js';
import { EXPECTED } from '../../fixtures/indexer/expected.js';
import { get, graphql, serve, type AppKind, type Running } from '../../fixtures/indexer/server.js';

let pg: TestDatabase;
const apps = {} as Record<AppKind, Running>;
let shallow: Running;

test.before(async () => {
  pg = await startTestDatabase();
  await loadFixtures(pg.db);
  apps.connect = await serve(indexerApi(pg.db, { now: () => NOW }), 'connect');
  apps.express = await serve(indexerApi(pg.db, { now: () => NOW }), 'express');
  shallow = await serve(indexerApi(pg.db, { now: () => NOW, graphqlMaxDepth: 2 }));
});

test.after.always(async () => {
  await Promise.all([apps.connect?.close(), apps.express?.close(), shallow?.close()]);
  await pg?.close();
});

const ITEM_FIELDS: Record<string, string> = {
  PendingTransactionMissingRelay: `cursor ageSeconds Bridge { ...bridge } BridgeRequest { ...event }`,
  PendingTransactionMissingProof: `cursor ageSeconds Bridge { ...bridge } BridgeRequest { ...event } BridgeRelay { ...event relayer to }`,
  PendingTransactionMissingClaim: `cursor ageSeconds Bridge { ...bridge } BridgeRequest { ...event } BridgeRelay { ...event relayer to } BridgeProof { ...event relayer }`,
  ConflictingProof: `cursor ageSeconds Bridge { ...bridge } BridgeRequest { ...event } BridgeRelay { ...event relayer to } BridgeProof { ...event relayer }`,
  RefundedAndRelayedTransaction: `cursor ageSeconds Bridge { ...bridge } BridgeRequest { ...event } BridgeRelay { ...event relayer to }
    BridgeRefund { ...event to amountFormatted token amount }`,
  ActiveDispute: `cursor ageSeconds Bridge { transactionId } BridgeDispute { ...event originChainId originChain relayer }`,
  InvalidRelay: `cursor ageSeconds transactionId blockNumber blockTimestamp transactionHash originChain destChain originChainId destChainId
    originToken destToken originAmountFormatted destAmountFormatted to relayer`,
};
const FRAGMENTS = `
fragment bridge on Transaction { transactionId originChain destChain originChainId destChainId originToken destToken
  originAmountFormatted destAmountFormatted sender request sendChainGas originAmount destAmount decodedRequest { ...decoded } }
fragment decoded on DecodedRequest { version originChainId destChainId originSender destRecipient originToken destToken originAmount
  destAmount originFeeAmount deadline nonce sendChainGas exclusivityRelayer exclusivityEndTime zapNative zapData }
fragment event on Deposit { blockNumber blockTimestamp transactionHash }`;

/** Every phase type shares the event fields; GraphQL needs the fragment per type. */
function query(field: string, itemType: string, args = ''): string {
  const fields = ITEM_FIELDS[itemType]!
    .replace('BridgeRelay { ...event', 'BridgeRelay { ... on Relay { blockNumber blockTimestamp transactionHash }')
    .replace('BridgeProof { ...event', 'BridgeProof { ... on Proof { blockNumber blockTimestamp transactionHash }')
    .replace('BridgeRefund { ...event', 'BridgeRefund { ... on Refund { blockNumber blockTimestamp transactionHash }')
    .replace('BridgeDispute { ...event', 'BridgeDispute { ... on Dispute { blockNumber blockTimestamp transactionHash }');
  const usesBridge = fields.includes('...bridge');
  const usesEvent = fields.includes('...event');
  return `{ ${field}${args ? `(${args})` : ''} { ${fields} } }
${usesBridge ? FRAGMENTS.split('\n').slice(1, 5).join('\n') : ''}
${usesEvent ? FRAGMENTS.split('\n')[5]! : ''}`;
}

type Gql = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

for (const kind of ['connect', 'express'] as const) {
  for (const route of LIST_ROUTES) {
    test(`${kind}: ${route.graphqlField} returns the same items as GET ${route.paths[1] ?? route.paths[0]}`, async (t) => {
      const res = await graphql<Gql>(apps[kind].base, query(route.graphqlField, route.itemType));
      t.is(res.status, 200, JSON.stringify(res.body.errors));
      const items = res.body.data?.[route.graphqlField] as Record<string, unknown>[];
      t.deepEqual(labels(items), EXPECTED[route.query]);
      const rest = await get(`${apps[kind].base}${route.paths[route.paths.length - 1]}`);
      t.deepEqual(items.map(({ cursor, ...item }) => { t.is(typeof cursor, 'string'); return item; }), rest.body as unknown[]);
    });
  }
}

test('GraphQL lists take the REST arguments', async (t) => {
  const cases: [string, string, string[]][] = [
    ['pendingTransactionsMissingRelay', 'originChainId: 10', ['requested-fresh-b']],
    ['pendingTransactionsMissingRelay', `since: ${NOW - 3 * D}, until: ${NOW - D}`, byIdDesc('requested-fresh-b', 'requested-fresh-tie')],
    ['pendingTransactionsMissingClaim', 'destChainId: 80094', ['conflicting-case']],
    ['disputes', 'destChainId: 1', []],
    ['recentInvalidRelays', 'originChainId: 130', ['invalid-relay']],
  ];
  for (const [field, args, expected] of cases) {
    const isFlat = field === 'recentInvalidRelays';
    const res = await graphql<Gql>(apps.connect.base, `{ ${field}(${args}) { ${isFlat ? 'transactionId' : 'Bridge { transactionId }'} } }`);
    t.deepEqual(labels(res.body.data?.[field]), expected, `${field}(${args})`);
  }
});

test('pagination over GraphQL: each item cursor resumes after it, every row once', async (t) => {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 10; guard += 1) {
    const res: { body: Gql } = await graphql<Gql>(apps.connect.base,
      'query Page($cursor: String) { pendingTransactionsMissingClaim(limit: 1, cursor: $cursor) { cursor Bridge { transactionId } } }', { cursor });
    const items = res.body.data?.pendingTransactionsMissingClaim as { cursor: string; Bridge: { transactionId: string } }[];
    if (items.length === 0) break;
    seen.push(...labels(items));
    cursor = items[items.length - 1]!.cursor;
  }
  t.deepEqual(seen, EXPECTED.missingClaim);
});

test('transaction(id) finds by id or origin tx hash; unknown is null; transactionById is a 0/1 list', async (t) => {
  const q = `query T($id: String!) { transaction(id: $id) { Bridge { transactionId sendChainGas } BridgeRequest { blockNumber }
    BridgeRelay { relayer } BridgeProof { relayer } BridgeClaim { amount } BridgeRefund { amount } BridgeDispute { relayer } } }`;
  const byId = await graphql<Gql>(apps.connect.base, q, { id: txid('proven-disputed') });
  const found = byId.body.data?.transaction as Record<string, unknown>;
  t.is(labelOf((found.Bridge as { transactionId: string }).transactionId), 'proven-disputed');
  t.truthy(found.BridgeProof);
  t.truthy(found.BridgeDispute);
  t.is(found.BridgeClaim, null);
  t.is(found.BridgeRefund, null);
  const byHash = await graphql<Gql>(apps.connect.base, q, { id: txHash('claimed', 'request') });
  t.like(byHash.body.data?.transaction, { Bridge: { transactionId: txid('claimed'), sendChainGas: true }, BridgeClaim: { amount: '100500000' } });
  const unknown = await graphql<Gql>(apps.connect.base, q, { id: `0x${'cd'.repeat(32)}` });
  t.is(unknown.status, 200);
  t.is(unknown.body.data?.transaction, null);
  const legacy = await graphql<Gql>(apps.connect.base, `{ a: transactionById(transactionId: "${txid('claimed')}") { Bridge { transactionId } }
    b: transactionById(transactionId: "0x${'cd'.repeat(32)}") { Bridge { transactionId } } }`);
  t.deepEqual(labels(legacy.body.data?.a), ['claimed']);
  t.deepEqual(legacy.body.data?.b, []);
});

test('invalid arguments are 400 with BAD_USER_INPUT naming the parameter', async (t) => {
  const cases: [string, string][] = [
    ['pendingTransactionsMissingProof(limit: 0)', 'limit'],
    ['pendingTransactionsMissingProof(limit: 5000)', 'limit'],
    ['pendingTransactionsMissingProof(cursor: "nope!")', 'cursor'],
    ['pendingTransactionsMissingProof(originChainId: -1)', 'originChainId'],
    ['pendingTransactionsMissingProof(since: 10, until: 5)', 'until'],
  ];
  for (const [call, parameter] of cases) {
    const res = await graphql<Gql>(apps.connect.base, `{ ${call} { Bridge { transactionId } } }`);
    t.is(res.status, 400, call);
    t.is(res.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', call);
    t.is(res.body.errors?.[0]?.extensions?.parameter, parameter, call);
  }
  const badId = await graphql<Gql>(apps.connect.base, '{ transaction(id: "0x12") { Bridge { transactionId } } }');
  t.is(badId.body.errors?.[0]?.extensions?.parameter, 'id');
  const syntax = await graphql<Gql>(apps.connect.base, '{ disputes { ');
  t.is(syntax.status, 400);
  const unknownField = await graphql<Gql>(apps.connect.base, '{ events { id } }');
  t.is(unknownField.status, 400);
});

test('malformed requests are 4xx with GraphQL\'s own message, not 500 or a masked internal error', async (t) => {
  const post = (body: string, contentType = 'application/json') => get<Gql>(`${apps.connect.base}/graphql`, {
    method: 'POST', headers: { 'content-type': contentType, accept: 'application/json' }, body,
  });
  const cases: [string, string, number, RegExp][] = [
    ['a variable of the wrong type', JSON.stringify({ query: 'query Q($n: Int) { disputes(limit: $n) { cursor } }', variables: { n: 'x' } }), 400, /Variable "\$n" got invalid value/],
    ['a variable beyond Int', JSON.stringify({ query: 'query Q($n: Int) { disputes(limit: $n) { cursor } }', variables: { n: 1e10 } }), 400, /non 32-bit signed integer/],
    ['a missing required variable', JSON.stringify({ query: 'query T($id: String!) { transaction(id: $id) { Bridge { transactionId } } }' }), 400, /Variable "\$id" of required type/],
    ['an unknown operation name', JSON.stringify({ query: 'query A { stats { generatedAt } }', operationName: 'B' }), 400, /Unknown operation named "B"/],
    ['two operations and no name', JSON.stringify({ query: 'query A { stats { generatedAt } } query B { status { source } }' }), 400, /Must provide operation name/],
    ['a mutation', JSON.stringify({ query: 'mutation { stats }' }), 400, /not configured to execute mutation/],
    ['no query', JSON.stringify({}), 400, /Must provide query string/],
    ['a body that is not JSON', '{', 400, /invalid JSON/],
    ['an unsupported charset', JSON.stringify({ query: '{ stats { generatedAt } }' }), 415, /Unsupported charset/],
  ];
  for (const [name, body, status, message] of cases) {
    const res = await post(body, name === 'an unsupported charset' ? 'application/json; charset=latin1' : 'application/json');
    t.is(res.status, status, name);
    t.regex(res.body.errors?.[0]?.message ?? '', message, name);
    t.not(res.body.errors?.[0]?.extensions?.code, 'INTERNAL', name);
  }
  const put = await get<Gql>(`${apps.connect.base}/graphql`, { method: 'PUT', headers: { accept: 'application/json' } });
  t.is(put.status, 405);
  t.regex(put.body.errors?.[0]?.message ?? '', /only supports GET and POST/);
  const badId = await graphql<Gql>(apps.connect.base, '{ transaction(id: "0x12") { Bridge { transactionId } } }');
  t.is(badId.status, 400, 'an invalid argument of a nullable field is a 400 too');
  t.is(badId.body.errors?.[0]?.extensions?.parameter, 'id');
  const badCursor = await graphql<Gql>(apps.connect.base, 'query Q($c: String) { disputes(cursor: $c) { cursor } }',
    { c: Buffer.from('[2147483648,"0x"]').toString('base64url') });
  t.is(badCursor.status, 400);
  t.is(badCursor.body.errors?.[0]?.extensions?.parameter, 'cursor');
});

test('depth is limited (fragments followed, introspection exempt)', async (t) => {
  const deep = await graphql<Gql>(shallow.base, '{ disputes { ...d } } fragment d on ActiveDispute { Bridge { transactionId } }');
  t.is(deep.status, 400);
  t.is(deep.body.errors?.[0]?.extensions?.code, 'QUERY_TOO_DEEP');
  const flat = await graphql<Gql>(shallow.base, '{ recentInvalidRelays { transactionId } }');
  t.is(flat.status, 200);
  const introspection = await graphql<Gql>(shallow.base, '{ __schema { types { name fields { name type { ofType { ofType { name } } } } } } }');
  t.is(introspection.status, 200);
});

test('cost is limited: the sum of list limits, variables included', async (t) => {
  const tooMuch = await graphql<Gql>(apps.connect.base,
    `{ a: disputes(limit: 1000) { cursor } b: disputes(limit: 1000) { cursor } c: disputes(limit: 1000) { cursor }
       d: disputes(limit: 1000) { cursor } e: disputes(limit: 1000) { cursor } f: disputes(limit: 1) { cursor } }`);
  t.is(tooMuch.status, 400);
  t.is(tooMuch.body.errors?.[0]?.extensions?.code, 'QUERY_TOO_COSTLY');
  t.is(tooMuch.body.errors?.[0]?.extensions?.cost, 5001);
  const viaVariables = await graphql<Gql>(apps.connect.base,
    'query Q($n: Int = 1000) { a: disputes(limit: $n) { cursor } b: disputes(limit: $n) { cursor } c: disputes(limit: $n) { cursor } d: disputes(limit: $n) { cursor } e: disputes(limit: $n) { cursor } f: disputes { cursor } }');
  t.is(viaVariables.body.errors?.[0]?.extensions?.code, 'QUERY_TOO_COSTLY');
  const fine = await graphql<Gql>(apps.connect.base,
    'query Q($n: Int) { a: disputes(limit: $n) { cursor } b: disputes(limit: $n) { cursor } }', { n: 2000 / 2 });
  t.is(fine.status, 200);
});

test('GET /graphql from a browser serves a self-contained GraphiQL page', async (t) => {
  for (const kind of ['connect', 'express'] as const) {
    const res = await get(`${apps[kind].base}/graphql`, { headers: { accept: 'text/html' } });
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
    t.true(res.text.includes('GraphiQL'));
    t.true(res.text.includes('pendingTransactionsMissingRelay'), 'default query shown');
    t.notRegex(res.text, /<(?:script|link|img)[^>]+(?:src|href)=["']?(?:https?:)?\/\//i, 'no asset loaded from another origin');
  }
  const getQuery = await get<Gql>(`${apps.connect.base}/graphql?query=${encodeURIComponent('{ disputes { Bridge { transactionId } } }')}`,
    { headers: { accept: 'application/json' } });
  t.deepEqual(labels(getQuery.body.data?.disputes), ['proven-disputed']);
});
