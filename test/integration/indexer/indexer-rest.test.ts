import { getAddress } from 'viem';
import test from 'ava';
import { indexerApi, indexerNotFound } from '../../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../../lib/indexer/catalog.js';
import { encodeCursor } from '../../../lib/indexer/read/cursor.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import {
  ALL_LABELS, SENDER, SPECS, requestBytes, RELAYER_A_LOWER, D, H, NOW, RELAYER_A, RELAYER_B, SHARED_REQUEST_HASH, block, byIdDesc, labelOf, labels, loadFixtures, txHash, txid,
} from '../../fixtures/indexer/bridges.js';
import { EXPECTED } from '../../fixtures/indexer/expected.js';
import { chain, get, serve, type AppKind, type Running } from '../../fixtures/indexer/server.js';

/** The API serves every address EIP-55 checksummed, whatever case the tables hold. */
const cs = (address: string) => getAddress(address);

let pg: TestDatabase;
const apps = {} as Record<AppKind, Running>;
let clock = NOW;
let moving: Running;
let floored: Running;

test.before(async () => {
  pg = await startTestDatabase();
  await loadFixtures(pg.db);
  apps.connect = await serve(indexerApi(pg.db, { now: () => NOW }), 'connect');
  apps.express = await serve(indexerApi(pg.db, { now: () => NOW }), 'express');
  moving = await serve(indexerApi(pg.db, { now: () => clock }));
  floored = await serve(indexerApi(pg.db, { now: () => NOW, lookbackFloor: NOW - 30 * D }));
});

test.after.always(async () => {
  await Promise.all([apps.connect?.close(), apps.express?.close(), moving?.close(), floored?.close()]);
  await pg?.close();
});

for (const kind of ['connect', 'express'] as const) {
  for (const route of LIST_ROUTES) {
    for (const path of route.paths) {
      test(`${kind}: GET ${path} returns exactly ${EXPECTED[route.query].join(', ')} in order`, async (t) => {
        const res = await get(`${apps[kind].base}${path}`);
        t.is(res.status, 200);
        t.is(res.headers.get('content-type'), 'application/json; charset=utf-8');
        t.deepEqual(labels(res.body), EXPECTED[route.query]);
        t.is(res.headers.get('x-next-cursor'), null);
        t.is(res.headers.get('link'), null);
      });
    }
  }

  test(`${kind}: paths outside the indexer reach next()`, async (t) => {
    for (const path of ['/health', '/rpc/1', '/apix', '/graphqlx', '/']) {
      const res = await get(`${apps[kind].base}${path}`);
      t.is(res.status, 299, path);
      t.is(res.text, 'fell through');
    }
  });
}

test('an empty list is [] with 200, not a message object', async (t) => {
  const res = await get(`${apps.connect.base}/api/disputes?originChainId=1`);
  t.is(res.status, 200);
  t.deepEqual(res.body, []);
  t.is(res.text, '[]');
});

test('missing-claim items have the reference nested shape with exact types', async (t) => {
  const res = await get<Record<string, unknown>[]>(`${apps.connect.base}/api/pending-transactions/missing-claim?originChainId=8453`);
  t.is(res.status, 200);
  t.deepEqual(res.body, [{
    ageSeconds: 5 * H - 1200,
    Bridge: {
      transactionId: txid('proven'),
      originChain: 'base',
      destChain: 'ethereum',
      originChainId: 8453,
      destChainId: 1,
      originToken: cs('0xaf88d065e77c8cc2239327c5edb3a432268e5831'),
      destToken: cs('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'),
      originAmountFormatted: '100.5',
      destAmountFormatted: '100.4',
      sender: cs('0x5e4de00000000000000000000000000000000004'),
      request: requestBytes('proven', SPECS.get('proven')!),
      sendChainGas: false,
      originAmount: '100500000',
      destAmount: '100400000',
      decodedRequest: {
        version: 2, originChainId: 8453, destChainId: 1, originSender: cs(SENDER), destRecipient: cs(SENDER),
        originToken: cs('0xaf88d065e77c8cc2239327c5edb3a432268e5831'), destToken: cs('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'),
        originAmount: '100500000', destAmount: '100400000', originFeeAmount: '10050', deadline: String(NOW - 5 * H + 3600),
        nonce: String(ALL_LABELS.indexOf('proven')), sendChainGas: null, exclusivityRelayer: cs(RELAYER_A_LOWER),
        exclusivityEndTime: String(NOW - 5 * H + 60), zapNative: '0', zapData: '0x',
      },
    },
    BridgeRequest: { blockNumber: block(8453, NOW - 5 * H), blockTimestamp: NOW - 5 * H, transactionHash: txHash('proven', 'request') },
    BridgeRelay: {
      blockNumber: block(1, NOW - 5 * H + 30), blockTimestamp: NOW - 5 * H + 30, transactionHash: txHash('proven', 'relay'),
      relayer: cs(RELAYER_A), to: cs('0x5e4de00000000000000000000000000000000004'),
    },
    BridgeProof: { blockNumber: block(8453, NOW - 5 * H + 1200), blockTimestamp: NOW - 5 * H + 1200, transactionHash: txHash('proven', 'proof'), relayer: cs(RELAYER_A) },
  }]);
});

test('sendChainGas is a JSON boolean and block numbers above 2^53 stay exact strings', async (t) => {
  const relay = await get<{ Bridge: { sendChainGas: unknown } }[]>(`${apps.connect.base}/api/pending-transactions/missing-relay?originChainId=42161`);
  t.is(relay.body[0]?.Bridge.sendChainGas, true);
  const conflict = await get(`${apps.connect.base}/api/conflicting-proofs`);
  const expected = block(999, NOW - 4 * H + 40);
  t.true(BigInt(expected) > 2n ** 53n);
  t.true(conflict.text.includes(`"blockNumber":"${expected}"`));
  t.is((conflict.body as { BridgeRelay: { blockNumber: string } }[])[0]?.BridgeRelay.blockNumber, expected);
  t.is((conflict.body as { BridgeProof: { relayer: string } }[])[0]?.BridgeProof.relayer, cs(RELAYER_B));
});

test('disputes and invalid-relays keep the reference shapes', async (t) => {
  const disputes = await get(`${apps.connect.base}/api/disputes`);
  t.deepEqual(disputes.body, [{
    ageSeconds: 6 * H - 1800,
    Bridge: { transactionId: txid('proven-disputed') },
    BridgeDispute: {
      blockNumber: block(10, NOW - 6 * H + 1800), blockTimestamp: NOW - 6 * H + 1800, transactionHash: txHash('proven-disputed', 'dispute'),
      originChainId: 10, originChain: 'optimism', relayer: cs('0x6a4d000000000000000000000000000000000003'),
    },
  }]);
  const invalid = await get<Record<string, unknown>[]>(`${apps.connect.base}/api/invalid-relays`);
  t.deepEqual(Object.keys(invalid.body[0] ?? {}), [
    'ageSeconds', 'transactionId', 'blockNumber', 'blockTimestamp', 'transactionHash', 'originChain', 'destChain', 'originChainId',
    'destChainId', 'originToken', 'destToken', 'originAmountFormatted', 'destAmountFormatted', 'to', 'relayer',
  ]);
  t.like(invalid.body[0], { ageSeconds: D, transactionId: txid('invalid-relay'), originChainId: 130, destChainId: 56, originChain: 'unichain', destChain: 'bnb' });
});

const FILTERS: [string, string[]][] = [
  ['/api/pending-transactions/missing-relay?originChainId=10', ['requested-fresh-b']],
  ['/api/pending-transactions/missing-relay?destChainId=42161', ['requested-fresh-tie']],
  ['/api/pending-transactions/missing-relay?since=' + (NOW - 3 * D) + '&until=' + (NOW - D), byIdDesc('requested-fresh-b', 'requested-fresh-tie')],
  ['/api/pending-transactions/missing-relay?since=' + (NOW - H), ['requested-fresh-a']],
  ['/api/pending-transactions/missing-relay?until=' + (NOW - H), byIdDesc('requested-fresh-b', 'requested-fresh-tie')],
  ['/api/pending-transactions-missing-claim?originChainId=999', ['conflicting-case']],
  ['/api/pending-transactions-missing-claim?originChainId=8453&destChainId=1', ['proven']],
  ['/api/pending-transactions-missing-proof?destChainId=42161', ['proven-disputed']],
  ['/api/pending-transactions-missing-proof?destChainId=130', []], // refunded-relayed: refunded, no longer provable
  ['/api/disputes?originChainId=10', ['proven-disputed']],
  ['/api/disputes?destChainId=42161', ['proven-disputed']],
  ['/api/invalid-relays?originChainId=130&destChainId=56', ['invalid-relay']],
  ['/api/invalid-relays?destChainId=1', []],
  ['/api/refunded-and-relayed?since=' + (NOW - D), ['refunded-relayed']],
  ['/api/refunded-and-relayed?until=' + (NOW - D), []],
];

for (const [path, expected] of FILTERS) {
  test(`filters: ${path.replace(String(NOW), 'NOW')} → [${expected.join(', ')}]`, async (t) => {
    const res = await get(`${apps.express.base}${path}`);
    t.is(res.status, 200);
    t.deepEqual(labels(res.body), expected);
  });
}

function nextLink(link: string | null): string | undefined {
  return link?.match(/^<([^>]+)>; rel="next"$/)?.[1];
}

for (const limit of [1, 2, 3]) {
  test(`pagination with limit=${limit} walks every missing-claim row once, following Link`, async (t) => {
    const seen: string[] = [];
    let path: string | undefined = `/api/pending-transactions/missing-claim?limit=${limit}`;
    let pages = 0;
    while (path) {
      const res = await get(`${apps.connect.base}${path}`);
      t.is(res.status, 200);
      const page = labels(res.body);
      t.true(page.length <= limit);
      seen.push(...page);
      pages += 1;
      const link = nextLink(res.headers.get('link'));
      const cursor = res.headers.get('x-next-cursor');
      if (link) t.true(link.endsWith(`cursor=${cursor}`));
      else t.is(cursor, null);
      path = link;
    }
    t.deepEqual(seen, EXPECTED.missingClaim);
    t.is(pages, Math.ceil(EXPECTED.missingClaim.length / limit));
  });
}

test('the next link keeps the filters and works with a tie on the sort timestamp', async (t) => {
  const first = await get(`${apps.connect.base}/api/pending-transactions-missing-relay?limit=2&until=${NOW - H}`);
  t.deepEqual(labels(first.body), byIdDesc('requested-fresh-b', 'requested-fresh-tie'));
  t.is(first.headers.get('link'), null);
  const a = await get(`${apps.connect.base}/api/pending-transactions-missing-relay?limit=1&since=${NOW - 3 * D}`);
  const link = nextLink(a.headers.get('link'));
  t.truthy(link);
  t.regex(link!, /^\/api\/pending-transactions-missing-relay\?limit=1&since=\d+&cursor=/);
  const b = await get(`${apps.connect.base}${link}`);
  const c = await get(`${apps.connect.base}${nextLink(b.headers.get('link'))}`);
  t.deepEqual([...labels(a.body), ...labels(b.body), ...labels(c.body)], EXPECTED.missingRelay);
  t.is(c.headers.get('link'), null);
});

const BAD: [string, string][] = [
  ['limit=0', 'limit'],
  ['limit=abc', 'limit'],
  ['limit=1001', 'limit'],
  ['limit=-1', 'limit'],
  ['limit=1.5', 'limit'],
  ['limit=', 'limit'],
  ['cursor=not*base64', 'cursor'],
  [`cursor=${Buffer.from('["x",1]').toString('base64url')}`, 'cursor'],
  // Well-formed but tampered: a timestamp beyond the integer columns, a NUL PostgreSQL text cannot hold.
  [`cursor=${Buffer.from('[2147483648,"0x"]').toString('base64url')}`, 'cursor'],
  [`cursor=${Buffer.from('[1760000000,"0x\\u0000"]').toString('base64url')}`, 'cursor'],
  ['originChainId=eth', 'originChainId'],
  ['originChainId=99999999999', 'originChainId'],
  ['destChainId=0', 'destChainId'],
  ['since=-5', 'since'],
  ['until=soon', 'until'],
  ['since=100&until=50', 'until'],
  ['originChainID=1', 'originChainID'],
  ['limit=1&limit=2', 'limit'],
];

for (const [query, parameter] of BAD) {
  test(`400 problem+json naming "${parameter}" for ?${query}`, async (t) => {
    const res = await get<Record<string, unknown>>(`${apps.connect.base}/api/pending-transactions/missing-proof?${query}`);
    t.is(res.status, 400);
    t.is(res.headers.get('content-type'), 'application/problem+json');
    t.like(res.body, {
      type: 'urn:omnigate:problem:invalid-parameter', title: 'Invalid parameter', status: 400, code: 'INVALID_PARAMETER',
      parameter, instance: '/api/pending-transactions/missing-proof',
    });
    t.is((res.body.invalidParams as { name: string }[])[0]?.name, parameter);
    t.true(String(res.body.detail).includes(parameter));
  });
}

test('a valid cursor from another position simply resumes after it', async (t) => {
  const cursor = encodeCursor({ ts: NOW - 5 * H + 1200, id: txid('proven') });
  const res = await get(`${apps.connect.base}/api/pending-transactions/missing-claim?cursor=${cursor}`);
  t.deepEqual(labels(res.body), ['disputed-reproven', 'conflicting-case']);
});

test('unknown routes under /api go to the host app; behind indexerNotFound() they are 404 problem+json; other methods are 405 with Allow', async (t) => {
  const withNotFound = await serve(chain(indexerApi(pg.db, { now: () => NOW }), indexerNotFound()), 'express');
  t.teardown(() => withNotFound.close());
  for (const path of ['/api', '/api/', '/api/nope', '/api/pending-transactions', '/api/transaction-id/', `/api/transaction-id/${txid('claimed')}/extra`]) {
    for (const kind of ['connect', 'express'] as const) {
      const passed = await get(`${apps[kind].base}${path}`);
      t.is(passed.status, 299, `${kind} ${path}`);
      t.is(passed.text, 'fell through');
    }
    const res = await get<Record<string, unknown>>(`${withNotFound.base}${path}`);
    t.is(res.status, 404, path);
    t.is(res.headers.get('content-type'), 'application/problem+json');
    t.like(res.body, { status: 404, code: 'NOT_FOUND', title: 'Not found', instance: path });
  }
  t.is((await get(`${withNotFound.base}/other`)).status, 299, 'indexerNotFound() leaves paths outside /api alone');
  const post = await get<Record<string, unknown>>(`${apps.express.base}/api/disputes`, { method: 'POST' });
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
  t.like(post.body, { status: 405, code: 'METHOD_NOT_ALLOWED' });
});

test('HEAD answers the headers without a body; one trailing slash is tolerated', async (t) => {
  const head = await fetch(`${apps.connect.base}/api/pending-transactions/missing-claim?limit=1`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.truthy(head.headers.get('x-next-cursor'));
  t.is(await head.text(), '');
  const slash = await get(`${apps.connect.base}/api/disputes/`);
  t.deepEqual(labels(slash.body), ['proven-disputed']);
});

test('transaction-id returns every phase that happened, and nothing else', async (t) => {
  const res = await get<Record<string, unknown>>(`${apps.connect.base}/api/transaction-id/${txid('claimed')}`);
  t.is(res.status, 200);
  t.deepEqual(Object.keys(res.body), ['Bridge', 'BridgeRequest', 'BridgeRelay', 'BridgeProof', 'BridgeClaim']);
  t.like(res.body, {
    Bridge: { transactionId: txid('claimed'), sendChainGas: true, originChainId: 42161, destChain: 'scroll' },
    BridgeClaim: {
      blockNumber: block(42161, NOW - 30 * H + 4000), blockTimestamp: NOW - 30 * H + 4000, transactionHash: txHash('claimed', 'claim'),
      to: cs(RELAYER_A), relayer: cs(RELAYER_A), amountFormatted: '100.5', token: cs('0xaf88d065e77c8cc2239327c5edb3a432268e5831'), amount: '100500000',
    },
  });
});

const PHASES: [string, string[]][] = [
  ['requested-fresh-a', ['Bridge', 'BridgeRequest']],
  ['proven-disputed', ['Bridge', 'BridgeRequest', 'BridgeRelay', 'BridgeProof', 'BridgeDispute']],
  ['disputed-reproven', ['Bridge', 'BridgeRequest', 'BridgeRelay', 'BridgeProof']],
  ['refunded', ['Bridge', 'BridgeRequest', 'BridgeRefund']],
  ['refunded-relayed', ['Bridge', 'BridgeRequest', 'BridgeRelay', 'BridgeRefund']],
  ['requested-ancient', ['Bridge', 'BridgeRequest']],
];

for (const [label, keys] of PHASES) {
  test(`transaction-id of ${label} has ${keys.slice(2).join(', ') || 'only the request'}`, async (t) => {
    const res = await get<Record<string, unknown>>(`${apps.express.base}/api/transaction-id/${txid(label)}`);
    t.is(res.status, 200);
    t.deepEqual(Object.keys(res.body), keys);
  });
}

test('transaction-id also finds a bridge by its origin transaction hash, case-insensitively', async (t) => {
  const byHash = await get<{ Bridge: { transactionId: string } }>(`${apps.connect.base}/api/transaction-id/${txHash('claimed', 'request')}`);
  t.is(labelOf(byHash.body.Bridge.transactionId), 'claimed');
  const upper = await get<{ Bridge: { transactionId: string } }>(`${apps.connect.base}/api/transaction-id/0x${txid('claimed').slice(2).toUpperCase()}`);
  t.is(labelOf(upper.body.Bridge.transactionId), 'claimed');
});

test('with two requests in one origin transaction, an exact id wins, then the highest id', async (t) => {
  const shared = await get<{ Bridge: { transactionId: string } }>(`${apps.connect.base}/api/transaction-id/${SHARED_REQUEST_HASH}`);
  t.is(labelOf(shared.body.Bridge.transactionId), byIdDesc('batch-a', 'batch-b')[0]!);
  for (const label of ['batch-a', 'batch-b']) {
    const exact = await get<{ Bridge: { transactionId: string } }>(`${apps.connect.base}/api/transaction-id/${txid(label)}`);
    t.is(labelOf(exact.body.Bridge.transactionId), label);
  }
});

test('transaction-id: unknown is 404, malformed is 400 naming the path parameter, query params are rejected', async (t) => {
  const unknown = await get<Record<string, unknown>>(`${apps.connect.base}/api/transaction-id/0x${'ab'.repeat(32)}`);
  t.is(unknown.status, 404);
  t.is(unknown.headers.get('content-type'), 'application/problem+json');
  t.like(unknown.body, { code: 'NOT_FOUND', status: 404 });
  const relayOnly = await get(`${apps.connect.base}/api/transaction-id/${txid('invalid-relay')}`);
  t.is(relayOnly.status, 404);
  for (const bad of ['0x1234', 'hello', `${txid('claimed')}00`, '%E0%A4%A']) {
    const res = await get<Record<string, unknown>>(`${apps.connect.base}/api/transaction-id/${bad}`);
    t.is(res.status, 400, bad);
    t.is(res.body.parameter, 'transactionIdOrOriginTxHash');
  }
  const withQuery = await get<Record<string, unknown>>(`${apps.connect.base}/api/transaction-id/${txid('claimed')}?limit=1`);
  t.is(withQuery.status, 400);
  t.is(withQuery.body.parameter, 'limit');
});

test('time windows are computed per request, not at start-up', async (t) => {
  clock = NOW;
  const before = await get(`${moving.base}/api/pending-transactions/missing-relay`);
  t.deepEqual(labels(before.body), EXPECTED.missingRelay);
  clock = NOW + 1; // fresh-a is past its on-chain deadline (NOW)
  const passed = await get(`${moving.base}/api/pending-transactions/missing-relay`);
  t.deepEqual(labels(passed.body), byIdDesc('requested-fresh-b', 'requested-fresh-tie'));
  const passedExceeded = await get(`${moving.base}/api/pending-transactions/exceed-deadline`);
  t.deepEqual(labels(passedExceeded.body), ['requested-fresh-a', 'requested-stale', 'requested-ancient']);
  clock = NOW + 6 * D; // fresh-b and fresh-tie are now 8 days old (and past their deadlines)
  const after = await get(`${moving.base}/api/pending-transactions/missing-relay`);
  t.deepEqual(labels(after.body), []);
  const exceeded = await get(`${moving.base}/api/pending-transactions/exceed-deadline`);
  t.deepEqual(labels(exceeded.body), ['requested-fresh-a', ...byIdDesc('requested-fresh-b', 'requested-fresh-tie'), 'requested-stale', 'requested-ancient']);
  clock = NOW + 14 * D; // the invalid relay leaves the 14-day window
  const invalid = await get(`${moving.base}/api/invalid-relays`);
  t.deepEqual(invalid.body, []);
  clock = NOW;
});

test('no lookback floor by default; the optional floor drops older requests', async (t) => {
  const all = await get(`${apps.connect.base}/api/pending-transactions/exceed-deadline`);
  t.deepEqual(labels(all.body), ['requested-stale', 'requested-ancient']);
  const floor = await get(`${floored.base}/api/pending-transactions/exceed-deadline`);
  t.deepEqual(labels(floor.body), ['requested-stale']);
  const lookup = await get(`${floored.base}/api/transaction-id/${txid('requested-ancient')}`);
  t.is(lookup.status, 200, 'the floor does not hide a transaction from a direct lookup');
});
