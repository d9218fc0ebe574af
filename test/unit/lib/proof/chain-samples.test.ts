/**
 * Real blocks of chains anvil cannot produce (test/fixtures/proof/, each checked by its own
 * hashes): an Ethereum mainnet proof-of-work header, an OP Stack block with its deposit
 * transaction (header hash and transactionsRoot), an OP Mainnet deposit, an Arbitrum header whose
 * extra JSON fields are not hashed; and a TRON block, whose hash is not the keccak of its fields.
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { ProofError } from '../../../../lib/proof/failure.js';
import { checkHeader, headerLayout, type BlockJson } from '../../../../lib/proof/header.js';
import { checkTransactionHash, checkTransactions, type TransactionJson } from '../../../../lib/proof/transactions.js';
import { fromRoot } from '../../../support/paths.js';

const samples = JSON.parse(readFileSync(fromRoot('test/fixtures/proof/chain-samples.json'), 'utf8')) as {
  ethereumMainnet15000420: { header: BlockJson; transaction: TransactionJson };
  opStackBlock0x112: BlockJson & { transactions: TransactionJson[] };
  opMainnetDeposit: TransactionJson;
  arbitrumOne0x38419c8: BlockJson;
  tronBlock0x4e72919: BlockJson;
};

test('Ethereum mainnet, proof of work (London layout): header and a type-2 transaction', (t) => {
  const { header, transaction } = samples.ethereumMainnet15000420;
  const h = checkHeader(header);
  t.is(h.number, 15_000_420n);
  t.is(h.layout, 'london');
  t.is(checkTransactionHash(transaction), transaction.hash as string);
  t.is(t.throws(() => checkHeader({ ...header, nonce: '0x0000000000000000' }), { instanceOf: ProofError })!.reason, 'header-hash', 'the PoW nonce is hashed');
});

test('OP Stack: the header hashes as an L1 header, and the deposit transaction rebuilds transactionsRoot', async (t) => {
  const block = samples.opStackBlock0x112;
  const h = checkHeader(block);
  t.is(h.layout, 'shanghai');
  t.deepEqual(await checkTransactions(h, block.transactions), [block.transactions[0]!.hash as string]);
  const forged = [{ ...block.transactions[0]!, mint: '0x1', hash: block.transactions[0]!.hash }];
  t.is((await t.throwsAsync(checkTransactions(h, forged), { instanceOf: ProofError }))!.field, 'transactions[0].hash');
  t.is(checkTransactionHash(samples.opMainnetDeposit), samples.opMainnetDeposit.hash as string);
  t.is(t.throws(() => checkTransactionHash({ ...samples.opMainnetDeposit, isSystemTx: true }), { instanceOf: ProofError })!.reason, 'value');
});

test("Arbitrum: the L1 layout with baseFeePerGas; its l1BlockNumber, sendCount and sendRoot are copies, not hashed", (t) => {
  const header = samples.arbitrumOne0x38419c8;
  const h = checkHeader(header);
  t.is(headerLayout(header), 'london');
  t.is(h.number, 0x38419c8n);
  t.is(header.sendRoot, header.extraData, 'the send root is what extraData holds');
  t.notThrows(() => checkHeader({ ...header, sendCount: '0x1' }));
  t.is(t.throws(() => checkHeader({ ...header, extraData: `0x${'00'.repeat(32)}` }), { instanceOf: ProofError })!.reason, 'header-hash');
});

test('TRON: a hash that is not the keccak of the fields served fails the header check (agreement only)', (t) => {
  const block = samples.tronBlock0x4e72919;
  t.true((block.hash as string).startsWith('0x0000000004e72919'), 'the hash begins with the block number');
  const e = t.throws(() => checkHeader(block), { instanceOf: ProofError })!;
  t.deepEqual([e.reason, e.field], ['malformed', 'stateRoot']);
  t.is(t.throws(() => checkHeader({ ...block, stateRoot: `0x${'00'.repeat(32)}` }), { instanceOf: ProofError })!.reason, 'header-hash');
});
