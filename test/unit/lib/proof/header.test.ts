/**
 * Header hashes recomputed from the JSON fields of real blocks: the execution-apis corpus (a
 * geth chain through every fork from the original layout to Prague), checked against the `hash`
 * the node sent and against the RLP the node itself gives (debug_getRawHeader); tampering with one
 * field of each kind is caught; ranges are proven by the parentHash chain.
 */
import test from 'ava';
import { toHex as bytesToHex } from '../../../../lib/proof/bytes.js';
import { checkHeader, checkHeaderChain, headerHash, headerLayout, headerRlp, type BlockJson } from '../../../../lib/proof/header.js';
import { ProofError } from '../../../../lib/proof/failure.js';
import { recordedPairs } from '../../../support/execution-apis.js';

const pairs = recordedPairs();
const blocks = pairs
  .filter((p) => (p.method === 'eth_getBlockByNumber' || p.method === 'eth_getBlockByHash') && p.response.result)
  .map((p) => ({ name: p.name, block: p.response.result as BlockJson }));
const byFile = (file: string) => blocks.find((b) => b.name.startsWith(`eth_getBlockByNumber/${file}`))!.block;

test('every block of the corpus hashes to its own hash', (t) => {
  t.true(blocks.length >= 10);
  for (const { name, block } of blocks) t.is(headerHash(block), block.hash as string, name);
});

test('the layout is read from the fields present, one per fork', (t) => {
  t.is(headerLayout(byFile('get-genesis.io')), 'frontier');
  t.is(headerLayout(byFile('get-block-london-fork.io')), 'london');
  t.is(headerLayout(byFile('get-block-merge-fork.io')), 'london');
  t.is(headerLayout(byFile('get-block-shanghai-fork.io')), 'shanghai');
  t.is(headerLayout(byFile('get-block-cancun-fork.io')), 'cancun');
  t.is(headerLayout(byFile('get-block-prague-fork.io')), 'prague');
  t.is(checkHeader(byFile('get-block-prague-fork.io')).layout, 'prague');
});

test("the RLP rebuilt is byte for byte the node's own (debug_getRawHeader)", (t) => {
  const raw = pairs.filter((p) => p.method === 'debug_getRawHeader' && typeof p.response.result === 'string');
  t.true(raw.length >= 2);
  for (const p of raw) {
    const n = (p.request.params as string[])[0]!;
    const block = blocks.find((b) => b.block.number === n)?.block;
    if (block === undefined) continue;
    t.is(bytesToHex(headerRlp(block)), p.response.result as string, p.name);
  }
  const genesis = raw.find((p) => (p.request.params as string[])[0] === '0x0')!;
  t.is(bytesToHex(headerRlp(byFile('get-genesis.io'))), genesis.response.result as string);
});

test('checkHeader returns the roots of a proven header, and checks the agreed hash', (t) => {
  const block = byFile('get-block-cancun-fork.io');
  const h = checkHeader(block, (block.hash as string).toUpperCase().replace('0X', '0x'));
  t.is(h.number, 0x2an);
  t.is(h.receiptsRoot, block.receiptsRoot as string);
  t.is(h.stateRoot, block.stateRoot as string);
  const other = byFile('get-block-prague-fork.io');
  const e = t.throws(() => checkHeader(block, other.hash as string), { instanceOf: ProofError })!;
  t.is(e.reason, 'header-hash');
  t.is(e.expected, other.hash as string);
});

const tamper = (block: BlockJson, field: string, value: unknown): BlockJson => ({ ...block, [field]: value });

test('one altered field of any kind is a header-hash failure', (t) => {
  const block = byFile('get-block-prague-fork.io');
  const cases: [string, string][] = [
    ['receiptsRoot', `0x${'11'.repeat(32)}`],
    ['stateRoot', `0x${'22'.repeat(32)}`],
    ['logsBloom', `0x${'00'.repeat(255)}01`],
    ['number', '0x2e'],
    ['timestamp', '0x1'],
    ['extraData', '0x01'],
    ['miner', `0x${'33'.repeat(20)}`],
    ['nonce', '0x0000000000000001'],
    ['baseFeePerGas', '0x56a9214'],
    ['requestsHash', `0x${'44'.repeat(32)}`],
    ['parentBeaconBlockRoot', `0x${'55'.repeat(32)}`],
  ];
  for (const [field, value] of cases) {
    const e = t.throws(() => checkHeader(tamper(block, field, value)), { instanceOf: ProofError }, field)!;
    t.is(e.reason, 'header-hash', field);
    t.is(e.field, 'hash');
    t.is(e.actual, block.hash as string);
  }
});

test('a field dropped is a hash failure (the layout follows the fields); a malformed field names itself', (t) => {
  const block = byFile('get-block-cancun-fork.io');
  const { withdrawalsRoot: _w, ...noWithdrawals } = block;
  t.is(headerLayout(noWithdrawals), 'gapped');
  t.is(t.throws(() => checkHeader(noWithdrawals), { instanceOf: ProofError })!.reason, 'header-hash');
  const { requestsHash: _r, ...pragueLess } = byFile('get-block-prague-fork.io');
  t.is(t.throws(() => checkHeader(pragueLess), { instanceOf: ProofError })!.reason, 'header-hash');
  const short = t.throws(() => headerHash(tamper(block, 'stateRoot', '0x1234')), { instanceOf: ProofError })!;
  t.is(short.reason, 'malformed');
  t.is(short.field, 'stateRoot');
  t.is(t.throws(() => headerHash(tamper(block, 'gasUsed', 'ten')), { instanceOf: ProofError })!.field, 'gasUsed');
});

test('a chain whose hash covers fields outside the known layouts is named in the failure', (t) => {
  const block = tamper(byFile('get-block-london-fork.io'), 'extDataHash', `0x${'66'.repeat(32)}`);
  t.is(headerHash(block), byFile('get-block-london-fork.io').hash as string, 'unknown fields are not hashed');
  const e = t.throws(() => checkHeader(tamper(block, 'hash', `0x${'77'.repeat(32)}`)), { instanceOf: ProofError })!;
  t.regex(e.message, /extDataHash/);
});

/** Headers b, b-1, …: a parent chain made of the corpus' own blocks is not available, so it is built from one real header with its fields varied. */
function chainFrom(base: BlockJson, length: number): BlockJson[] {
  const out: BlockJson[] = [];
  let parentHash = `0x${'00'.repeat(32)}`;
  for (let i = 0; i < length; i += 1) {
    const b = { ...base, number: `0x${(100 + i).toString(16)}`, parentHash, timestamp: `0x${(1000 + 12 * i).toString(16)}` };
    const hash = headerHash(b);
    out.push({ ...b, hash });
    parentHash = hash;
  }
  return out;
}

test('a range is proven from the agreed top header by the parentHash chain', (t) => {
  const chain = chainFrom(byFile('get-block-shanghai-fork.io'), 6);
  const top = checkHeader(chain[5]!);
  const below = chain.slice(0, 5);
  const proven = checkHeaderChain(top, [...below].reverse());
  t.deepEqual(proven.map((h) => h.number), [100n, 101n, 102n, 103n, 104n]);
  t.deepEqual(proven.map((h) => h.hash), below.map((b) => b.hash as string));

  const forged = [...below];
  forged[2] = tamper(forged[2]!, 'receiptsRoot', `0x${'99'.repeat(32)}`);
  const e = t.throws(() => checkHeaderChain(top, forged), { instanceOf: ProofError })!;
  t.is(e.reason, 'parent-hash');
  t.is(e.field, 'headers[block 102]');
  t.is(e.expected, below[2]!.hash as string);

  const gap = below.filter((_, i) => i !== 1);
  t.regex(t.throws(() => checkHeaderChain(top, gap))!.message, /block 101 \(the parent of 102\) is missing/);
  t.is(t.throws(() => checkHeaderChain(top, [...below.slice(1), below[1]!]), { instanceOf: ProofError })!.reason, 'parent-hash');
});
