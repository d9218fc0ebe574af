/**
 * lib/prove's pure parts: which calls have a proof route and what they pin, the book of agreed
 * headers (final ones only, by number and hash, at N or more, least recent out first), and each
 * chain's verify mode from its config and the quirk table.
 */
import test from 'ava';
import { HeaderBook, type AgreedHeader } from '../../../../lib/prove/book.js';
import { describeProofMode, initProofMode, proves, provesSomewhere } from '../../../../lib/prove/mode.js';
import { applySelfCheck, awaitsSelfCheck } from '../../../../lib/prove/self-check.js';
import { maxLogsRange, maxSendersRecovered, NotProvableHere, pinOf, proofRoute, provesAt } from '../../../../lib/prove/provers.js';
import { parseAnswer } from '../../../../lib/prove/job.js';
import { chainQuirks, quirkBlocks, type BlockMark } from '../../../../lib/proof/quirks.js';
import type { ProvenHeader } from '../../../../lib/proof/header.js';
import { silentLogger } from '../../../../lib/log.js';
import { testChain, testUpstream } from '../../../support/stage.js';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const call = (method: string, params: unknown[]) => ({ id: 1, method, params });

test('a full block or a block\'s receipts of more than maxSendersRecovered transactions goes by agreement before any material is asked', async (t) => {
  const listed = (n: number) => ({ header: { number: 7n, hash: hash(7) }, block: { transactions: Array.from({ length: n }, (_, i) => hash(i)) }, members: [], required: 2 }) as never;
  for (const c of [call('eth_getBlockReceipts', ['0x7']), call('eth_getBlockByNumber', ['0x7', true])]) {
    const route = proofRoute(c)!;
    // (no job nor upstream: nothing may be asked of them)
    await t.throwsAsync(route.prove(undefined as never, undefined as never, listed(maxSendersRecovered + 1)), { instanceOf: NotProvableHere }, c.method);
    await t.throwsAsync(route.prove(undefined as never, undefined as never, listed(maxSendersRecovered)), { instanceOf: TypeError }, `${c.method}: at the limit, the material is asked`);
  }
});

test('pinOf reads a block number, a block hash and EIP-1898 objects; tags pin nothing', (t) => {
  t.deepEqual(pinOf('0x10'), { number: 16n });
  t.deepEqual(pinOf('0x0'), { number: 0n });
  t.deepEqual(pinOf(hash(0xab).toUpperCase().replace('0X', '0x')), { hash: hash(0xab) });
  t.deepEqual(pinOf({ blockHash: hash(1) }), { hash: hash(1) });
  t.deepEqual(pinOf({ blockNumber: '0x2a' }), { number: 42n });
  t.deepEqual(pinOf({ blockHash: hash(1), requireCanonical: false }), { hash: hash(1) });
  t.is(pinOf({ blockHash: hash(1), requireCanonical: true }), undefined, 'a canonical block required: the nodes check it, by agreement');
  t.is(proofRoute(call('eth_getBalance', [`0x${'11'.repeat(20)}`, { blockHash: hash(1), requireCanonical: true }])), undefined);
  // A 32-byte hex where the method takes a number is a (too large) number to the nodes, not a hash.
  t.is(proofRoute(call('eth_getBlockByNumber', [hash(1), true])), undefined);
  t.is(proofRoute(call('eth_getTransactionByBlockNumberAndIndex', [hash(1), '0x0'])), undefined);
  t.deepEqual(proofRoute(call('eth_getBlockByHash', [hash(1), true]))?.pin, { hash: hash(1) });
  t.deepEqual(proofRoute(call('eth_getTransactionByBlockNumberAndIndex', ['0x7', '0x0']))?.pin, { number: 7n });
  for (const tag of ['latest', 'finalized', 'safe', 'pending', 'earliest', '0x', '0x01', 12, null]) t.is(pinOf(tag), undefined, String(tag));
});

test('proofRoute: the provable methods, pinned; everything else by agreement', (t) => {
  const address = `0x${'11'.repeat(20)}`;
  t.deepEqual(proofRoute(call('eth_getBalance', [address, '0x5']))?.pin, { number: 5n });
  t.deepEqual(proofRoute(call('eth_getStorageAt', [address, '0x0', { blockHash: hash(3) }]))?.scopes, ['state']);
  // (Receipts are bound to their transactions, proven by the block's transactions root: the header's scope too.)
  t.deepEqual(proofRoute(call('eth_getBlockReceipts', ['0x7']))?.scopes, ['receipts', 'header']);
  t.deepEqual(proofRoute(call('eth_getTransactionReceipt', [hash(9)]))?.scopes, ['receipts', 'header']);
  t.is(proofRoute(call('eth_getTransactionReceipt', [hash(9)]))?.pin, undefined, 'a receipt pins its block itself');
  t.deepEqual(proofRoute(call('eth_getBlockByNumber', ['0x7', true]))?.scopes, ['header']);
  t.deepEqual(proofRoute(call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x9' }]))?.pin, { number: 9n }, 'a range: its top');
  t.deepEqual(proofRoute(call('eth_getLogs', [{ blockHash: hash(4) }]))?.scopes, ['receipts', 'bloom', 'log-index', 'header']);
  for (const c of [
    call('eth_call', [{ to: address }, '0x5']),
    call('eth_getBalance', [address, 'latest']),
    call('eth_getBlockByNumber', ['0x7', false]),
    call('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]),
    call('eth_getLogs', [{ fromBlock: '0x0', toBlock: `0x${maxLogsRange.toString(16)}` }]),
    call('eth_getLogs', [{ fromBlock: '0x9', toBlock: '0x1' }]),
    call('eth_blockNumber', []),
  ]) t.is(proofRoute(c), undefined, JSON.stringify(c));
});

const header = (n: number): ProvenHeader => ({ hash: hash(1000 + n), number: BigInt(n), timestamp: 0n, parentHash: hash(999 + n), stateRoot: hash(1), transactionsRoot: hash(2), receiptsRoot: hash(3), logsBloom: `0x${'00'.repeat(256)}`, layout: 'cancun' });
const agreed = (n: number, required: number): AgreedHeader => ({ header: header(n), block: {}, members: [], required });

test('the header book keeps final headers only, by number and hash, for requests of N or less, least recent out first', (t) => {
  const u = testUpstream(0, { health: { finalized: 10n, head: 20n } });
  const chain = testChain([u]);
  const book = new HeaderBook(4);
  const byNumber = (n: number) => ({ number: BigInt(n) });
  book.keep(chain, agreed(11, 2), byNumber(11));
  t.is(book.get(chain, { number: 11n }, 1), undefined, 'above the finalized head: not kept');
  book.keep(chain, agreed(10, 2), byNumber(10));
  t.is(book.get(chain, { number: 10n }, 2)?.header.hash, hash(1010));
  t.is(book.get(chain, { hash: hash(1010) }, 1)?.header.number, 10n);
  t.is(book.get(chain, { number: 10n }, 3), undefined, 'agreed by 2: not for N=3');
  book.keep(chain, agreed(9, 2), byNumber(9));
  book.get(chain, { number: 10n }, 1); // 10 is now the most recent
  book.keep(chain, agreed(8, 2), byNumber(8));
  t.is(book.size, 4);
  t.is(book.get(chain, { number: 9n }, 1), undefined, 'the least recent went out');
  t.truthy(book.get(chain, { number: 10n }, 1));
  t.truthy(book.get(chain, { number: 8n }, 1));
});

test('the header book keeps a header agreed by its hash under its hash only: it may be of a block a reorg dropped, not the chain\'s block at its number', (t) => {
  const chain = testChain([testUpstream(0, { health: { finalized: 10n, head: 20n } })]);
  const book = new HeaderBook(8);
  book.keep(chain, agreed(7, 2), { hash: hash(1007) });
  t.is(book.get(chain, { hash: hash(1007) }, 2)?.header.number, 7n);
  t.is(book.get(chain, { number: 7n }, 1), undefined);
  book.keep(chain, agreed(7, 2), { number: 7n });
  t.is(book.get(chain, { number: 7n }, 1)?.header.hash, hash(1007), 'agreed by its number: kept under both');
});

const anyBlock: BlockMark = { number: 100n, timestamp: 1_000n };
const passed = (block: bigint, off: { state?: string; receipts?: string } = {}) => ({ kind: 'passed' as const, block, upstream: 'u', off: { state: off.state, receipts: off.receipts } });

test('verify modes: agreement stays, proof at once, auto waits for its self-check; a quirk on headers keeps agreement', (t) => {
  const chain = (id: string) => testChain([testUpstream(0)], { id });
  const a = chain('1');
  initProofMode(a, 'agreement');
  t.false(proves(a, 'state', anyBlock));
  applySelfCheck(a, passed(1n), silentLogger);
  t.is(describeProofMode(a).mode, 'agreement');
  const p = chain('1');
  initProofMode(p, 'proof');
  t.true(proves(p, 'state', anyBlock));
  const auto = chain('1');
  initProofMode(auto, 'auto');
  t.true(awaitsSelfCheck(auto));
  t.false(proves(auto, 'state', anyBlock));
  applySelfCheck(auto, { kind: 'undecided', reason: 'no upstream answered the self-check: x' }, silentLogger);
  t.true(awaitsSelfCheck(auto), 'undecided: asked again');
  applySelfCheck(auto, passed(5n), silentLogger);
  t.true(proves(auto, 'receipts', anyBlock));
  t.regex(describeProofMode(auto).reason, /self-check passed on block 5/);
  const failed = chain('1');
  initProofMode(failed, 'auto');
  applySelfCheck(failed, { kind: 'failed', reason: 'value at balance' }, silentLogger);
  t.false(awaitsSelfCheck(failed));
  t.is(describeProofMode(failed).mode, 'agreement');
});

test('auto: each part of the self-check decides its scope; the header the chain', (t) => {
  const chain = testChain([testUpstream(0)], { id: '42161' });
  initProofMode(chain, 'auto');
  applySelfCheck(chain, passed(7n, { receipts: 'receipts-root at receiptsRoot (u): the receipts do not rebuild the root' }), silentLogger);
  t.false(awaitsSelfCheck(chain));
  t.true(proves(chain, 'state', anyBlock), 'the account proof held: state proven');
  t.true(proves(chain, 'header', anyBlock), 'the header held: transactions proven');
  t.false(proves(chain, 'receipts', anyBlock), 'the receipts root failed: receipts by agreement');
  t.false(provesSomewhere(chain, 'receipts'));
  const verify = describeProofMode(chain);
  t.is(verify.mode, 'proof');
  t.regex(verify.reason, /by agreement: receipts and logs \(receipts-root/);
  const receipts = verify.scopes.find((s) => s.scope === 'receipts')!;
  t.is(receipts.mode, 'agreement');
  t.regex(receipts.reason, /receipts root failed/);
  t.is(verify.scopes.find((s) => s.scope === 'state')!.mode, 'proof');
  // the account proof failed, the receipts held: the other way round
  const other = testChain([testUpstream(0)], { id: '42170' });
  initProofMode(other, 'auto');
  applySelfCheck(other, passed(7n, { state: 'account-proof at accountProof (u): no path' }), silentLogger);
  t.false(proves(other, 'state', anyBlock));
  t.true(proves(other, 'receipts', anyBlock));
  t.is(describeProofMode(other).scopes.find((s) => s.scope === 'state')!.mode, 'agreement');
});

const scopes = ['header', 'state', 'receipts', 'bloom', 'log-index'] as const;

for (const quirk of chainQuirks) {
  test(`quirk of ${quirk.name} (${quirk.chainId}): ${quirk.scopes.join(', ')} not proven${quirk.before ? ' before its cut-off' : ''}, even in proof mode`, (t) => {
    const c = testChain([testUpstream(0)], { id: quirk.chainId });
    initProofMode(c, 'proof');
    const cut = quirk.before;
    // a block under the quirk, and (with a cut-off) the first block past it
    const under: BlockMark = cut === undefined ? anyBlock : cut.block !== undefined ? { number: cut.block - 1n, timestamp: 1n } : { number: 5n, timestamp: cut.timestamp - 1n };
    const past: BlockMark | undefined = cut === undefined ? undefined : cut.block !== undefined ? { number: cut.block, timestamp: 1n } : { number: 5n, timestamp: cut.timestamp };
    for (const scope of scopes) {
      const blocked = quirk.scopes.includes('header') || quirk.scopes.includes(scope);
      t.is(proves(c, scope, under), !blocked, `${scope} under the quirk`);
      if (past !== undefined) t.true(proves(c, scope, past), `${scope} from the cut-off on`);
      t.is(provesSomewhere(c, scope), !blocked || cut !== undefined, `${scope} somewhere`);
    }
    const verify = describeProofMode(c);
    if (quirk.scopes.includes('header')) t.regex(verify.reason, new RegExp(quirk.name));
    else {
      for (const s of verify.scopes.filter((x) => (quirk.scopes as readonly string[]).includes(x.scope))) {
        t.is(s.mode, cut === undefined ? 'agreement' : 'proof', s.scope);
        t.is(s.provenFrom, cut === undefined ? null : cut.block !== undefined ? `block ${cut.block}` : `time ${cut.timestamp} (${new Date(Number(cut.timestamp) * 1000).toISOString().replace('.000Z', 'Z')})`);
        t.regex(s.reason, new RegExp(quirk.name));
      }
    }
  });
}

test('the cut-offs: Scroll by time (Euclid), Polygon PoS by block (Madhugiri), Cronos by block (v0.7.0, its upgrade block under the quirk), Monad for the whole chain', (t) => {
  // Scroll's state: a zkTrie before Euclid's time, a Merkle-Patricia trie from it on
  t.true(quirkBlocks('534352', 'state', { number: 14_900_000n, timestamp: 1_744_815_599n }));
  t.false(quirkBlocks('534352', 'state', { number: 14_900_001n, timestamp: 1_744_815_600n }));
  t.true(quirkBlocks('534352', 'state', { number: 20_000_000n, timestamp: undefined }), 'a block whose time is not known: under a time cut-off');
  t.false(quirkBlocks('534352', 'receipts', { number: 1n, timestamp: 1n }), 'Scroll\'s receipts are not under the quirk');
  t.true(quirkBlocks('137', 'receipts', { number: 80_084_799n, timestamp: undefined }));
  t.true(quirkBlocks('137', 'bloom', { number: 80_084_799n, timestamp: undefined }));
  t.false(quirkBlocks('137', 'receipts', { number: 80_084_800n, timestamp: undefined }));
  t.true(quirkBlocks('25', 'bloom', { number: 2_693_800n, timestamp: undefined }), 'the upgrade block itself errs on the side of the quirk');
  t.false(quirkBlocks('25', 'bloom', { number: 2_693_801n, timestamp: undefined }));
  t.true(quirkBlocks('143', 'bloom', { number: 10n ** 12n, timestamp: 10n ** 12n }), 'Monad: no cut-off known, every block');
  t.true(quirkBlocks('143', 'bloom'));
  t.false(quirkBlocks('137', 'receipts'), 'without a block: only a quirk of every block');
  t.false(quirkBlocks('1', 'bloom', { number: 0n, timestamp: 0n }));
});

test('a request is proven when its agreed block is past every cut-off; an eth_getLogs range only when its lowest block is', (t) => {
  const polygon = testChain([testUpstream(0)], { id: '137' });
  initProofMode(polygon, 'proof');
  const at = (n: bigint, timestamp = 0n): ProvenHeader => ({ ...header(0), number: n, timestamp });
  const receipts = proofRoute(call('eth_getBlockReceipts', ['0x1']))!;
  t.false(provesAt(polygon, receipts, at(80_084_799n)));
  t.true(provesAt(polygon, receipts, at(80_084_800n)));
  const logs = (from: bigint, to: bigint) => proofRoute(call('eth_getLogs', [{ fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }]))!;
  t.false(provesAt(polygon, logs(80_084_790n, 80_084_810n), at(80_084_810n)), 'a range across the cut-off: by agreement');
  t.true(provesAt(polygon, logs(80_084_800n, 80_084_810n), at(80_084_810n)), 'a range entirely past it: proven');
  t.false(provesAt(polygon, logs(80_084_700n, 80_084_799n), at(80_084_799n)));
  const byHash = proofRoute(call('eth_getLogs', [{ blockHash: hash(7) }]))!;
  t.true(provesAt(polygon, byHash, at(80_084_800n)));
  t.false(provesAt(polygon, byHash, at(80_084_799n)));
  // a cut-off by time: the agreed header's timestamp; a range's lowest block, whose time is not known yet, is under it
  const scroll = testChain([testUpstream(0)], { id: '534352' });
  initProofMode(scroll, 'proof');
  const balance = proofRoute(call('eth_getBalance', [`0x${'11'.repeat(20)}`, '0x10']))!;
  t.false(provesAt(scroll, balance, at(16n, 1_744_815_599n)));
  t.true(provesAt(scroll, balance, at(16n, 1_744_815_600n)));
  t.true(provesAt(scroll, logs(1n, 16n), at(16n, 1_744_815_599n)), 'Scroll\'s logs are not under its quirk');
  t.false(provesAt(scroll, { scopes: ['state'], from: 1n }, at(16n, 1_800_000_000n)), 'a range under a time cut-off: by agreement');
});

test('parseAnswer: an answer that is not JSON is named, never quoted (a key cut in a quote could not be scrubbed)', (t) => {
  t.deepEqual(parseAnswer(Buffer.from('{"result":"0x1"}'), 'eth_getProof'), { result: '0x1' });
  const err = t.throws(() => parseAnswer(Buffer.from('Lp3Ok6Ij9Uh2Yg5Tf8Rd1Es4Wa7Qz0Xc is not a valid key'), 'eth_getProof'));
  t.is(err?.message, 'eth_getProof: the answer is not JSON');
});
