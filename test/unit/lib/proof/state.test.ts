/**
 * State proven against stateRoot on the execution-apis corpus: geth's eth_getProof answers at
 * block 0x36 (account and storage proofs) checked against that block's header; each stated value
 * and each proof node tampered with is caught, naming the field.
 */
import test from 'ava';
import { ProofError } from '../../../../lib/proof/failure.js';
import { checkHeader, type BlockJson } from '../../../../lib/proof/header.js';
import { checkAccountProof, checkCode, checkStateAnswer, storageAnswer, storageKey, type AccountProofJson } from '../../../../lib/proof/state.js';
import { recordedPairs } from '../../../support/execution-apis.js';

const pairs = recordedPairs();
const pair = (name: string) => pairs.find((p) => p.name === name)!;
const header36 = checkHeader(pair('eth_getBlockByNumber/get-latest.io#0').response.result as BlockJson);
const block1 = checkHeader(pair('eth_getBlockByHash/get-block-by-hash.io#0').response.result as BlockJson);
const withStorage = pair('eth_getProof/get-account-proof-with-storage.io#0').response.result as AccountProofJson;
const byHash = pair('eth_getProof/get-account-proof-blockhash.io#0');
const ADDRESS = '0x7dcd17433742f4c0ca53122ab541d0ba67fc27df';

test('storageKey pads any slot a client sends to the 32-byte word', (t) => {
  t.is(storageKey('0x0'), `0x${'00'.repeat(32)}`);
  t.is(storageKey('0x01'), `0x${'00'.repeat(31)}01`);
  t.is(storageKey(`0x${'AB'.repeat(32)}`), `0x${'ab'.repeat(32)}`);
  t.is(t.throws(() => storageKey(`0x${'ab'.repeat(33)}`), { instanceOf: ProofError })!.reason, 'malformed');
});

test("a real account and storage proof prove the stated values against the header's stateRoot", async (t) => {
  t.is((byHash.request.params as string[])[2], header36.hash, 'the corpus proof is of block 0x36');
  const account = await checkAccountProof(header36, withStorage, { address: ADDRESS, slots: ['0x0'] });
  t.true(account.exists);
  t.is(account.balance, 0x76n);
  t.is(account.nonce, 0n);
  t.is(storageAnswer(account, '0x00'), `0x${'00'.repeat(31)}38`);
  t.is(checkStateAnswer('eth_getBalance', account, '0x76'), '0x76');
  t.is(checkStateAnswer('eth_getTransactionCount', account, '0x0'), '0x0');
  t.is(checkStateAnswer('eth_getStorageAt', account, `0x${'00'.repeat(31)}38`, '0x0'), `0x${'00'.repeat(31)}38`);
  await checkAccountProof(header36, byHash.response.result as AccountProofJson);
});

const tampered = (patch: (a: AccountProofJson & Record<string, unknown>) => void): AccountProofJson => {
  const a = structuredClone(withStorage) as AccountProofJson & Record<string, unknown>;
  patch(a);
  return a;
};

test('a wrong balance, nonce, hash or slot value is a value failure naming the field', async (t) => {
  const cases: [string, (a: any) => void, string][] = [
    ['balance', (a) => { a.balance = '0x77'; }, 'balance'],
    ['nonce', (a) => { a.nonce = '0x1'; }, 'nonce'],
    ['codeHash', (a) => { a.codeHash = `0x${'11'.repeat(32)}`; }, 'codeHash'],
    ['storageHash', (a) => { a.storageHash = `0x${'22'.repeat(32)}`; }, 'storageHash'],
    ['slot', (a) => { a.storageProof[0].value = '0x39'; }, 'storageProof[0].value'],
  ];
  for (const [name, patch, field] of cases) {
    const e = await t.throwsAsync(checkAccountProof(header36, tampered(patch)), { instanceOf: ProofError }, name);
    t.is(e!.reason, 'value', name);
    t.is(e!.field, field, name);
  }
  const account = await checkAccountProof(header36, withStorage);
  const e = t.throws(() => checkStateAnswer('eth_getBalance', account, '0x75'), { instanceOf: ProofError })!;
  t.deepEqual([e.reason, e.field, e.expected, e.actual], ['value', 'result', '0x76', '0x75']);
  t.is(t.throws(() => checkStateAnswer('eth_getStorageAt', account, `0x${'00'.repeat(31)}37`, '0x0'), { instanceOf: ProofError })!.reason, 'value');
});

test('a forged proof node, a proof of another block, a proof of another address, a missing slot', async (t) => {
  const node = await t.throwsAsync(checkAccountProof(header36, tampered((a: any) => {
    a.accountProof[1] = `${a.accountProof[1].slice(0, -2)}00`;
  })), { instanceOf: ProofError });
  t.is(node!.reason, 'account-proof');
  t.is(node!.field, 'accountProof');
  const storage = await t.throwsAsync(checkAccountProof(header36, tampered((a: any) => {
    a.storageProof[0].proof = a.storageProof[0].proof.slice(1);
  })), { instanceOf: ProofError });
  t.is(storage!.reason, 'storage-proof');
  t.is(storage!.field, 'storageProof[0].proof');
  const other = await t.throwsAsync(checkAccountProof(block1, withStorage), { instanceOf: ProofError });
  t.is(other!.reason, 'account-proof', 'a proof of block 0x36 does not prove against block 1');
  const address = await t.throwsAsync(checkAccountProof(header36, withStorage, { address: `0x${'00'.repeat(19)}01` }), { instanceOf: ProofError });
  t.is(address!.field, 'address');
  const slot = await t.throwsAsync(checkAccountProof(header36, withStorage, { address: ADDRESS, slots: ['0x1'] }), { instanceOf: ProofError });
  t.is(slot!.field, 'storageProof');
});

test('eth_getCode: the code must hash to the proven codeHash', async (t) => {
  const account = await checkAccountProof(header36, withStorage);
  const code = pairs.find((p) => p.method === 'eth_getCode' && JSON.stringify(p.request.params) === JSON.stringify([ADDRESS, 'latest']))!.response.result as string;
  t.true(code.length > 2);
  t.is(checkStateAnswer('eth_getCode', account, code), code);
  const e = t.throws(() => checkCode(account, '0x6000'), { instanceOf: ProofError })!;
  t.is(e.reason, 'code-hash');
  t.is(e.expected, withStorage.codeHash);
});
