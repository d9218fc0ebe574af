/**
 * Transactions proven against transactionsRoot on the execution-apis corpus: every type geth
 * serves there (legacy, 2930, 1559, 4844, 7702) hashed from its JSON fields to its own hash, and
 * block 0x36's full transactions rebuilding its root; tampering caught and named.
 */
import test from 'ava';
import { ProofError } from '../../../../lib/proof/failure.js';
import { checkHeader, type BlockJson } from '../../../../lib/proof/header.js';
import { checkTransactionHash, checkTransactions, transactionBytes, type TransactionJson } from '../../../../lib/proof/transactions.js';
import { recordedPairs } from '../../../support/execution-apis.js';

const pairs = recordedPairs();
const latest = pairs.find((p) => p.name === 'eth_getBlockByNumber/get-latest.io#0')!.response.result as BlockJson & { transactions: TransactionJson[] };
const header36 = checkHeader(latest);
const served = pairs.filter((p) => p.method.startsWith('eth_getTransactionBy') && p.response.result).map((p) => ({ name: p.name, tx: p.response.result as TransactionJson }));

test('every transaction of the corpus hashes to its own hash, whatever its type', (t) => {
  const types = new Set<string>();
  for (const { name, tx } of served) {
    t.is(checkTransactionHash(tx), tx.hash as string, name);
    types.add(tx.type as string);
  }
  t.deepEqual([...types].sort(), ['0x0', '0x1', '0x2', '0x3', '0x4']);
});

test("a block's full transactions rebuild its transactionsRoot", async (t) => {
  t.true(latest.transactions.length > 1);
  t.deepEqual(await checkTransactions(header36, latest.transactions), latest.transactions.map((tx) => tx.hash as string));
});

test('tampering: a field altered, a transaction dropped, reordered or of another block', async (t) => {
  const txs = structuredClone(latest.transactions) as Record<string, unknown>[];
  const altered = structuredClone(txs);
  altered[1]!.value = '0x1';
  const a = await t.throwsAsync(checkTransactions(header36, altered), { instanceOf: ProofError });
  t.deepEqual([a!.reason, a!.field], ['value', 'transactions[1].hash']);

  const dropped = txs.slice(1).map((tx, i) => ({ ...tx, transactionIndex: `0x${i.toString(16)}` }));
  const d = await t.throwsAsync(checkTransactions(header36, dropped), { instanceOf: ProofError });
  t.is(d!.reason, 'transactions-root');

  const swapped = [txs[1]!, txs[0]!, ...txs.slice(2)];
  t.is((await t.throwsAsync(checkTransactions(header36, swapped), { instanceOf: ProofError }))!.field, 'transactions[0].transactionIndex');
  const other = txs.map((tx) => ({ ...tx, blockHash: `0x${'12'.repeat(32)}` }));
  t.is((await t.throwsAsync(checkTransactions(header36, other), { instanceOf: ProofError }))!.reason, 'wrong-block');
  t.is(t.throws(() => transactionBytes({ ...txs[0]!, type: '0x64' }), { instanceOf: ProofError })!.reason, 'unsupported');
  t.is(t.throws(() => transactionBytes('0xabc' as unknown as TransactionJson), { instanceOf: ProofError })!.reason, 'malformed');
});

test('a 7702 authorization or a blob hash altered changes the hash', (t) => {
  for (const type of ['0x3', '0x4']) {
    const tx = structuredClone(served.find((s) => s.tx.type === type)!.tx) as Record<string, any>;
    if (type === '0x4') tx.authorizationList[0].nonce = '0x1';
    else tx.blobVersionedHashes[0] = `0x01${'00'.repeat(31)}`;
    t.is(t.throws(() => checkTransactionHash(tx), { instanceOf: ProofError })!.reason, 'value', type);
  }
});
