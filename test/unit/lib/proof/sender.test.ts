/**
 * Senders recovered from signatures on the execution-apis corpus: every type geth serves there
 * (legacy with and without EIP-155, 2930, 1559, 4844, 7702) recovers to its `from`, and the
 * transactions of block 0x36 too; a signature altered recovers to another address or to none.
 */
import test from 'ava';
import { ProofError } from '../../../../lib/proof/failure.js';
import { recoverAddress, senderOf } from '../../../../lib/proof/sender.js';
import type { TransactionJson } from '../../../../lib/proof/transactions.js';
import { keccak } from '../../../../lib/proof/bytes.js';
import { recordedPairs } from '../../../support/execution-apis.js';

const pairs = recordedPairs();
const served = pairs.filter((p) => p.method.startsWith('eth_getTransactionBy') && p.response.result).map((p) => ({ name: p.name, tx: p.response.result as TransactionJson }));
const latest = pairs.find((p) => p.name === 'eth_getBlockByNumber/get-latest.io#0')!.response.result as { transactions: TransactionJson[] };

test('every transaction of the corpus recovers to its own from, whatever its type and signature form', (t) => {
  const kinds = new Set<string>();
  for (const { name, tx } of [...served, ...latest.transactions.map((tx, i) => ({ name: `latest[${i}]`, tx }))]) {
    t.is(senderOf(tx), String(tx.from).toLowerCase(), name);
    const v = BigInt(String(tx.v));
    kinds.add(tx.type === '0x0' ? (v === 27n || v === 28n ? 'legacy' : 'eip-155') : String(tx.type));
  }
  t.deepEqual([...kinds].sort(), ['0x1', '0x2', '0x3', '0x4', 'eip-155', 'legacy'].sort());
});

test('a signature or signed field altered recovers to another sender, or to none', (t) => {
  const { tx } = served.find((s) => s.tx.type === '0x2')!;
  const from = String(tx.from).toLowerCase();
  t.not(senderOf({ ...tx, value: `0x${(BigInt(String(tx.value)) + 1n).toString(16)}` }), from, 'a signed field altered');
  t.not(senderOf({ ...tx, yParity: tx.yParity === '0x0' ? '0x1' : '0x0', v: tx.yParity === '0x0' ? '0x1' : '0x0' }), from, 'the other parity');
  const e = t.throws(() => senderOf({ ...tx, r: '0x0' }), { instanceOf: ProofError })!;
  t.deepEqual([e.reason, e.field], ['value', 'transaction.from']);
  t.is(recoverAddress(keccak(new Uint8Array(1)), 1n, 1n, 2), undefined, 'a parity other than 0 or 1');
});
