/**
 * omnigate serving what real Ponder releases wrote (issue 19): test/fixtures/ponder/<version>/
 * holds the DDL and rows Ponder 0.4.43 and the newest Ponder created while indexing FastBridgeV2
 * on anvil (test/ponder/regenerate.ts). Each fixture is loaded into an embedded PostgreSQL as
 * Ponder left it (its schemas, the newest Ponder's views schema, triggers off while loading), the
 * real CLI serves it, and on the wire: the layout found, the lists, the lookup, GraphQL,
 * /api/status and /api/stats, against the ground truth the script recorded from the chains
 * (expected.json), and the same answers on both versions.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { getAddress } from 'viem';
import { REQUIRED_INDEXES } from '../../../lib/indexer/db/indexes.js';
import { listeningPort, logLines, runCli, type Run, configFile } from '../../support/cli.js';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { send } from '../../support/gateway.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import type { Bridge, DriveResult } from '../../ponder/drive.js';
import { fromRoot } from '../../support/paths.js';

const fixtures = fromRoot('test/fixtures/ponder/');
const expected = JSON.parse(readFileSync(path.join(fixtures, 'expected.json'), 'utf8')) as DriveResult;
const byName = (name: string) => expected.bridges.find((b) => b.name === name)!;

interface Fixture {
  key: '0.4' | 'latest';
  /** indexer.schema for omnigate; undefined: the search path (Ponder 0.4's `public`). */
  schema?: string;
  layout: 'ponder-0.4' | 'ponder-0.7';
}
const FIXTURES: Fixture[] = [
  { key: '0.4', layout: 'ponder-0.4' },
  { key: 'latest', schema: 'rfq_views', layout: 'ponder-0.7' },
];

/** rows.json keeps one row per line as PostgreSQL printed it: read it as text (exact numerics). */
function rowsByTable(key: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of readFileSync(path.join(fixtures, key, 'rows.json'), 'utf8').split('\n')) {
    const header = /^ {2}"([^"]+)": \[/.exec(line);
    if (header) tables.set(header[1]!, (current = []));
    else if (line.startsWith('    {')) current!.push(line.trim().replace(/,$/, ''));
  }
  return tables;
}

async function loadFixture(pg: TestDatabase, key: string): Promise<void> {
  await pg.db.multi(readFileSync(path.join(fixtures, key, 'schema.sql'), 'utf8'));
  // Ponder's triggers (its reorg log, live-query notifications) stay off while the rows go in.
  await pg.db.tx(async (tx) => {
    await tx.none('SET LOCAL session_replication_role = replica');
    for (const [table, rows] of rowsByTable(key)) {
      if (rows.length === 0) continue;
      const [schema, name] = [table.slice(0, table.indexOf('.')), table.slice(table.indexOf('.') + 1)];
      const ref = `"${schema}"."${name}"`;
      await tx.none(`INSERT INTO ${ref} SELECT * FROM json_populate_recordset(NULL::${ref}, $1::json)`, [`[${rows.join(',')}]`]);
    }
  });
}

interface Served {
  base: string;
  run: Run;
  pg: TestDatabase;
}

/** Resolves when a log line satisfying `match` has been printed (on output, not on a timer). */
async function logged(run: Run, match: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const line = logLines(run).find(match);
    if (line) return line;
    await Promise.race([once(run.child.stdout!, 'data'), run.exited.then(() => { throw new Error(`exited: ${run.err.join('')}`); })]);
  }
}

async function serve(t: ExecutionContext, fixture: Fixture): Promise<Served> {
  const pg = await startTestDatabase({ migrate: false });
  t.teardown(() => pg.close());
  await loadFixture(pg, fixture.key);
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const indexer = fixture.schema === undefined ? '' : `indexer:\n  schema: ${fixture.schema}\n`;
  const file = await configFile(t, `refreshInterval: 60\n${indexer}chains:\n  1337:\n    rpcs: [${fake.url}]\n`, 'omnigate-ponder-fixture-');
  const run = runCli(['serve', '--config', file, '--port', '0'], { DATABASE_URL: pg.url, LOG_LEVEL: 'info' }, { t });
  return { base: `http://127.0.0.1:${await listeningPort(run)}`, run, pg };
}

const get = async (t: ExecutionContext, s: Served, route: string) => {
  const res = await send(s.base, 'GET', route);
  t.is(res.status, 200, `${route}: ${res.text.slice(0, 300)}`);
  return res.body as unknown;
};
const graphql = async (t: ExecutionContext, s: Served, query: string) => {
  const res = await send(s.base, 'POST', '/graphql', JSON.stringify({ query }), { 'content-type': 'application/json' });
  t.is(res.status, 200, res.text.slice(0, 300));
  t.is(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data as Record<string, unknown>;
};

/** The API's form of an address of the ground truth (recorded in lower case): EIP-55, on every layout. */
const cs = (v: string) => getAddress(v);
const phase = (p: { blockNumber: string; blockTimestamp: number; transactionHash: string }) =>
  ({ blockNumber: p.blockNumber, blockTimestamp: p.blockTimestamp, transactionHash: p.transactionHash });

/** What the lists say about a bridge, from the chains' ground truth (addresses compared exactly, checksummed). */
function checkItem(t: ExecutionContext, item: Record<string, Record<string, unknown>>, b: Bridge, parts: string[]): void {
  const bridge = item.Bridge!;
  t.is(bridge.transactionId, b.transactionId);
  t.like(bridge, {
    originChainId: b.originChainId, destChainId: b.destChainId, originChain: 'arbitrum', destChain: 'base',
    sender: cs(b.sender), originToken: cs(b.originToken), destToken: cs(b.destToken),
    originAmountFormatted: b.originAmountFormatted, destAmountFormatted: b.destAmountFormatted, sendChainGas: b.sendChainGas, request: b.request,
  });
  t.like(bridge.decodedRequest, { originSender: cs(b.sender), destRecipient: cs(b.to), originToken: cs(b.originToken), destToken: cs(b.destToken) });
  if (parts.includes('request')) t.like(item.BridgeRequest, phase(b.request_!));
  if (parts.includes('relay')) t.like(item.BridgeRelay, { ...phase(b.relay!), relayer: cs(b.relay!.relayer), to: cs(b.relay!.to) });
  if (parts.includes('proof')) t.like(item.BridgeProof, { ...phase(b.proof!), relayer: cs(b.proof!.relayer) });
  if (parts.includes('refund')) t.like(item.BridgeRefund, { ...phase(b.refund!), to: cs(b.refund!.to), amountFormatted: b.refund!.amountFormatted });
}

type Item = Record<string, Record<string, unknown>>;
const ids = (items: unknown) => (items as Item[]).map((i) => i.Bridge!.transactionId);
/** Newest first by a phase's time. */
const newestFirst = (names: string[], key: 'request_' | 'relay' | 'proof' | 'refund') =>
  names.map(byName).sort((a, b) => b[key]!.blockTimestamp - a[key]!.blockTimestamp).map((b) => b.transactionId);

/** Everything but the values relative to the moment of the request. */
function timeless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(timeless);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !['ageSeconds', 'generatedAt', 'oldestAgeSeconds'].includes(k)).map(([k, v]) => [k, timeless(v)]));
  }
  return value;
}

const LISTS = [
  '/api/pending-transactions/missing-relay', '/api/pending-transactions/exceed-deadline', '/api/pending-transactions/missing-proof',
  '/api/pending-transactions/missing-claim', '/api/refunded-and-relayed', '/api/conflicting-proofs', '/api/disputes', '/api/invalid-relays',
];

const answers = new Map<string, Record<string, unknown>>();

for (const fixture of FIXTURES) {
  test.serial(`Ponder ${fixture.key} fixture: layout, lists, lookup and GraphQL match what was driven on the chains`, async (t) => {
    const s = await serve(t, fixture);
    const now = Math.floor(Date.now() / 1000);
    const recorded: Record<string, unknown> = {};
    for (const route of LISTS) recorded[route] = await get(t, s, route);
    const found = logLines(s.run).find((l) => l.msg === 'indexer tables found');
    t.like(found, { layout: fixture.layout, schema: fixture.schema ?? '(search path)' });

    // Every request is older than the missing-relay window (7 days): the pending one is past it.
    t.true(byName('requested').request_!.blockTimestamp < now - 14 * 86_400, 'the fixture predates the windows this test assumes');
    t.deepEqual(recorded['/api/pending-transactions/missing-relay'], []);
    t.deepEqual(ids(recorded['/api/pending-transactions/exceed-deadline']), [byName('requested').transactionId]);
    checkItem(t, (recorded['/api/pending-transactions/exceed-deadline'] as Item[])[0]!, byName('requested'), ['request']);

    // refundedRelayed is refunded: proving it would revert; it is in refunded-and-relayed only.
    const missingProof = ['relayed', 'disputed'];
    t.deepEqual(ids(recorded['/api/pending-transactions/missing-proof']), newestFirst(missingProof, 'relay'));
    for (const item of recorded['/api/pending-transactions/missing-proof'] as Item[]) {
      checkItem(t, item, expected.bridges.find((b) => b.transactionId === item.Bridge!.transactionId)!, ['request', 'relay']);
    }
    const missingClaim = ['proven', 'reproven', 'conflicting'];
    t.deepEqual(ids(recorded['/api/pending-transactions/missing-claim']), newestFirst(missingClaim, 'proof'));
    for (const item of recorded['/api/pending-transactions/missing-claim'] as Item[]) {
      checkItem(t, item, expected.bridges.find((b) => b.transactionId === item.Bridge!.transactionId)!, ['request', 'relay', 'proof']);
    }
    t.deepEqual(ids(recorded['/api/refunded-and-relayed']), [byName('refundedRelayed').transactionId]);
    checkItem(t, (recorded['/api/refunded-and-relayed'] as Item[])[0]!, byName('refundedRelayed'), ['request', 'relay', 'refund']);
    t.deepEqual(ids(recorded['/api/conflicting-proofs']), [byName('conflicting').transactionId]);
    checkItem(t, (recorded['/api/conflicting-proofs'] as Item[])[0]!, byName('conflicting'), ['request', 'relay', 'proof']);
    t.deepEqual(ids(recorded['/api/disputes']), [byName('disputed').transactionId]);
    t.like((recorded['/api/disputes'] as Item[])[0]!.BridgeDispute, { ...phase(byName('disputed').dispute!), originChainId: 42161, originChain: 'arbitrum' });
    // The relay of a request no origin emitted is older than the 14-day window.
    t.deepEqual(recorded['/api/invalid-relays'], []);

    // The lookup, by id and by the origin transaction's hash.
    const claimed = byName('claimed');
    const one = await get(t, s, `/api/transaction-id/${claimed.transactionId}`) as Item;
    t.deepEqual(await get(t, s, `/api/transaction-id/${claimed.request_!.transactionHash}`), one);
    // Whatever case the client sends (the layouts store hashes and ids in lower case; the key is
    // lower-cased before the query, so the lookup stays an index probe).
    const upper = (h: string) => `0x${h.slice(2).toUpperCase()}`;
    t.deepEqual(await get(t, s, `/api/transaction-id/${upper(claimed.transactionId)}`), one);
    t.deepEqual(await get(t, s, `/api/transaction-id/${upper(claimed.request_!.transactionHash)}`), one);
    checkItem(t, one, claimed, ['request', 'relay', 'proof']);
    t.like(one.BridgeClaim, {
      ...phase(claimed.claim!), to: cs(claimed.claim!.to), relayer: cs(claimed.claim!.relayer), amountFormatted: claimed.claim!.amountFormatted,
    });
    t.is(one.Bridge!.sendChainGas, true, 'bridgeV2 with a zap: sendChainGas');
    recorded.lookup = one;
    const reproven = await get(t, s, `/api/transaction-id/${byName('reproven').transactionId}`) as Item;
    t.like(reproven.BridgeProof, phase(byName('reproven').proof!));
    t.is(reproven.BridgeDispute, undefined, 'a dispute followed by a later proof is not shown');

    // GraphQL answers the same as REST.
    const data = await graphql(t, s, `{ pendingTransactionsMissingClaim { Bridge { transactionId originAmountFormatted } BridgeProof { blockNumber transactionHash } }
      transaction(id: "${claimed.transactionId}") { Bridge { transactionId destAmountFormatted } BridgeClaim { blockNumber transactionHash amountFormatted } } }`);
    t.deepEqual((data.pendingTransactionsMissingClaim as Item[]).map((i) => i.Bridge!.transactionId), newestFirst(missingClaim, 'proof'));
    t.like(data.transaction, {
      Bridge: { transactionId: claimed.transactionId, destAmountFormatted: claimed.destAmountFormatted },
      BridgeClaim: { blockNumber: claimed.claim!.blockNumber, transactionHash: claimed.claim!.transactionHash, amountFormatted: claimed.claim!.amountFormatted },
    });
    recorded.graphql = data;
    // The API's indexes, on the tables Ponder wrote (through the views for the newest Ponder).
    const created = await logged(s.run, (l) => l.msg === 'indexer indexes created (they were missing from the catalog)');
    t.deepEqual((created.indexes as string[]).sort(), REQUIRED_INDEXES.map((i) => i.name).sort());
    const indexes = await s.pg.db.any<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE $2',
      [fixture.key === 'latest' ? 'rfq' : 'public', 'omnigate%']);
    t.is(indexes.length, REQUIRED_INDEXES.length);
    t.deepEqual(logLines(s.run).filter((l) => l.level === 'error'), []);
    answers.set(fixture.key, recorded);
  });
}

test.serial('Ponder 0.4 and the newest Ponder: the same answers, field for field, letter for letter', (t) => {
  const [a, b] = [answers.get('0.4'), answers.get('latest')];
  t.truthy(a, 'the 0.4 fixture test ran');
  t.truthy(b, 'the newest fixture test ran');
  // Ponder 0.4 stored checksummed addresses and 0.17 lower-case ones: the API serves one form.
  t.deepEqual(timeless(b), timeless(a));
});

for (const fixture of FIXTURES) {
  test.serial(`Ponder ${fixture.key} fixture: /api/status and /api/stats`, async (t) => {
    const s = await serve(t, fixture);
    const status = await get(t, s, '/api/status') as { generatedAt: number; source: string; chains: Array<Record<string, unknown>> };
    const stats = await get(t, s, '/api/stats') as { generatedAt: number; stages: Array<Record<string, unknown>> };
    t.deepEqual(status.chains.map((c) => [c.chainId, c.chain]).sort((x, y) => Number(x[0]) - Number(y[0])), [[8453, 'base'], [42161, 'arbitrum']]);
    for (const head of expected.heads) {
      const chain = status.chains.find((c) => c.chainId === head.chainId)!;
      // Between the newest bridge event on the chain and the chain's head, whatever Ponder records.
      const events = expected.bridges.flatMap((b) => [b.request_, b.proof, b.dispute, b.claim, b.refund, b.relay].filter((p) => p !== null))
        .concat(expected.invalidRelay.relay!)
        .filter((p) => (head.chainId === 8453) === expected.bridges.concat(expected.invalidRelay).some((b) => b.relay?.transactionHash === p!.transactionHash));
      const newest = Math.max(...events.map((p) => Number(p!.blockNumber)));
      t.true(Number(chain.latestBlock) >= newest && Number(chain.latestBlock) <= Number(head.blockNumber), `${head.chain}: ${String(chain.latestBlock)} in [${newest}, ${head.blockNumber}]`);
      t.is(chain.ageSeconds, status.generatedAt - (chain.latestTimestamp as number));
      // Both fixtures were captured once Ponder's own bookkeeping had reached the heads.
      if (status.source !== 'events') t.is(chain.latestBlock, head.blockNumber, `${status.source} records the last block indexed`);
    }
    if (fixture.key === 'latest') t.is(status.source, 'ponder_checkpoint');
    if (fixture.key === '0.4') {
      // Ponder 0.4.42 added the `status` row of `_ponder_meta` (with its /status endpoint): 0.4.43
      // keeps a position per chain, so the newest events are not the source.
      t.is(status.source, 'ponder_meta');
      // The finalized position is the app-wide checkpoint of ponder.namespace_lock: its time on
      // every chain, its block on the chain it names.
      const lock = JSON.parse(rowsByTable('0.4').get('ponder.namespace_lock')![0]!) as { finalized_checkpoint: string };
      const cp = lock.finalized_checkpoint;
      const [ts, chainId, block] = [Number(cp.slice(0, 10)), Number(cp.slice(10, 26)), BigInt(cp.slice(26, 42)).toString()];
      for (const c of status.chains) t.like(c, { ready: true, finalizedTimestamp: ts, finalizedBlock: c.chainId === chainId ? block : null });
    }
    const stage = (name: string) => stats.stages.filter((x) => x.stage === name).map((x) => ({ ...x, oldestAgeSeconds: undefined }));
    const pair = { originChainId: 42161, destChainId: 8453, oldestAgeSeconds: undefined };
    t.deepEqual(stage('missingRelay'), []);
    t.deepEqual(stage('exceedDeadline'), [{ stage: 'exceedDeadline', ...pair, count: 1 }]);
    t.deepEqual(stage('missingProof'), [{ stage: 'missingProof', ...pair, count: 2 }]);
    t.deepEqual(stage('missingClaim'), [{ stage: 'missingClaim', ...pair, count: 3 }]);
    t.deepEqual(stage('disputed'), [{ stage: 'disputed', ...pair, count: 1 }]);
    const oldest = (name: string) => stats.stages.find((x) => x.stage === name)!.oldestAgeSeconds;
    t.is(oldest('exceedDeadline'), stats.generatedAt - byName('requested').request_!.blockTimestamp);
    t.is(oldest('missingProof'), stats.generatedAt - Math.min(...['relayed', 'disputed'].map((n) => byName(n).relay!.blockTimestamp)));
    t.is(oldest('missingClaim'), stats.generatedAt - Math.min(...['proven', 'reproven', 'conflicting'].map((n) => byName(n).proof!.blockTimestamp)));
    t.is(oldest('disputed'), stats.generatedAt - byName('disputed').dispute!.blockTimestamp);
  });
}
