/**
 * lib/prove's pure parts: which calls have a proof route and what they pin, the book of agreed
 * headers (final ones only, by number and hash, at N or more, least recent out first), and each
 * chain's verify mode from its config and the quirk table.
 */
import test from 'ava';
import { HeaderBook, type AgreedHeader } from '../../../../lib/prove/book.js';
import { describeProofMode, initProofMode, proves } from '../../../../lib/prove/mode.js';
import { applySelfCheck, awaitsSelfCheck } from '../../../../lib/prove/self-check.js';
import { maxLogsRange, pinOf, proofRoute } from '../../../../lib/prove/provers.js';
import { parseAnswer } from '../../../../lib/prove/job.js';
import { chainQuirks } from '../../../../lib/proof/quirks.js';
import type { ProvenHeader } from '../../../../lib/proof/header.js';
import { silentLogger } from '../../../../lib/log.js';
import { testChain, testUpstream } from '../../../support/stage.js';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const call = (method: string, params: unknown[]) => ({ id: 1, method, params });

test('pinOf reads a block number, a block hash and EIP-1898 objects; tags pin nothing', (t) => {
  t.deepEqual(pinOf('0x10'), { number: 16n });
  t.deepEqual(pinOf('0x0'), { number: 0n });
  t.deepEqual(pinOf(hash(0xab).toUpperCase().replace('0X', '0x')), { hash: hash(0xab) });
  t.deepEqual(pinOf({ blockHash: hash(1) }), { hash: hash(1) });
  t.deepEqual(pinOf({ blockNumber: '0x2a' }), { number: 42n });
  for (const tag of ['latest', 'finalized', 'safe', 'pending', 'earliest', '0x', '0x01', 12, null]) t.is(pinOf(tag), undefined, String(tag));
});

test('proofRoute: the provable methods, pinned; everything else by agreement', (t) => {
  const address = `0x${'11'.repeat(20)}`;
  t.deepEqual(proofRoute(call('eth_getBalance', [address, '0x5']))?.pin, { number: 5n });
  t.deepEqual(proofRoute(call('eth_getStorageAt', [address, '0x0', { blockHash: hash(3) }]))?.scopes, ['state']);
  t.deepEqual(proofRoute(call('eth_getBlockReceipts', ['0x7']))?.scopes, ['receipts']);
  t.is(proofRoute(call('eth_getTransactionReceipt', [hash(9)]))?.pin, undefined, 'a receipt pins its block itself');
  t.deepEqual(proofRoute(call('eth_getBlockByNumber', ['0x7', true]))?.scopes, ['header']);
  t.deepEqual(proofRoute(call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x9' }]))?.pin, { number: 9n }, 'a range: its top');
  t.deepEqual(proofRoute(call('eth_getLogs', [{ blockHash: hash(4) }]))?.scopes, ['receipts', 'bloom', 'log-index']);
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
  book.keep(chain, agreed(11, 2));
  t.is(book.get(chain, { number: 11n }, 1), undefined, 'above the finalized head: not kept');
  book.keep(chain, agreed(10, 2));
  t.is(book.get(chain, { number: 10n }, 2)?.header.hash, hash(1010));
  t.is(book.get(chain, { hash: hash(1010) }, 1)?.header.number, 10n);
  t.is(book.get(chain, { number: 10n }, 3), undefined, 'agreed by 2: not for N=3');
  book.keep(chain, agreed(9, 2));
  book.get(chain, { number: 10n }, 1); // 10 is now the most recent
  book.keep(chain, agreed(8, 2));
  t.is(book.size, 4);
  t.is(book.get(chain, { number: 9n }, 1), undefined, 'the least recent went out');
  t.truthy(book.get(chain, { number: 10n }, 1));
  t.truthy(book.get(chain, { number: 8n }, 1));
});

test('verify modes: agreement stays, proof at once, auto waits for its self-check; a quirk on headers keeps agreement', (t) => {
  const chain = (id: string) => testChain([testUpstream(0)], { id });
  const a = chain('1');
  initProofMode(a, 'agreement');
  t.false(proves(a, 'state'));
  applySelfCheck(a, { kind: 'passed', block: 1n, upstream: 'u' }, silentLogger);
  t.is(describeProofMode(a).mode, 'agreement');
  const p = chain('1');
  initProofMode(p, 'proof');
  t.true(proves(p, 'state'));
  const auto = chain('1');
  initProofMode(auto, 'auto');
  t.true(awaitsSelfCheck(auto));
  t.false(proves(auto, 'state'));
  applySelfCheck(auto, { kind: 'undecided', reason: 'no upstream answered the self-check: x' }, silentLogger);
  t.true(awaitsSelfCheck(auto), 'undecided: asked again');
  applySelfCheck(auto, { kind: 'passed', block: 5n, upstream: 'u' }, silentLogger);
  t.true(proves(auto, 'receipts'));
  t.regex(describeProofMode(auto).reason, /self-check passed on block 5/);
  const failed = chain('1');
  initProofMode(failed, 'auto');
  applySelfCheck(failed, { kind: 'failed', reason: 'value at balance' }, silentLogger);
  t.false(awaitsSelfCheck(failed));
  t.is(describeProofMode(failed).mode, 'agreement');
});

for (const quirk of chainQuirks) {
  test(`quirk of ${quirk.name} (${quirk.chainId}): ${quirk.scopes.join(', ')} not proven, even in proof mode`, (t) => {
    const c = testChain([testUpstream(0)], { id: quirk.chainId });
    initProofMode(c, 'proof');
    for (const scope of ['header', 'state', 'receipts', 'bloom', 'log-index'] as const) {
      const blocked = quirk.scopes.includes('header') || quirk.scopes.includes(scope);
      t.is(proves(c, scope), !blocked, scope);
    }
    if (quirk.scopes.includes('header')) t.regex(describeProofMode(c).reason, new RegExp(quirk.name));
  });
}

test('parseAnswer: an answer that is not JSON is named, never quoted (a key cut in a quote could not be scrubbed)', (t) => {
  t.deepEqual(parseAnswer(Buffer.from('{"result":"0x1"}'), 'eth_getProof'), { result: '0x1' });
  const err = t.throws(() => parseAnswer(Buffer.from('Lp3Ok6Ij9Uh2Yg5Tf8Rd1Es4Wa7Qz0Xc is not a valid key'), 'eth_getProof'));
  t.is(err?.message, 'eth_getProof: the answer is not JSON');
});
