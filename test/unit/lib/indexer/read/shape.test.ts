import test from 'ava';
import {
  disputeItem, invalidRelayItem, missingClaimItem, missingRelayItem, toBoolean, transactionDetail, type Row,
} from '../../../../../lib/indexer/read/shape.js';

const request: Row = {
  transactionId: '0x01', originChain: 'arbitrum', destChain: 'base', originChainId: 42161, destChainId: 8453,
  originToken: '0xa', destToken: '0xb', originAmountFormatted: '1.5', destAmountFormatted: '1.4', sender: '0xs', request: '0xr',
  sendChainGas: 1, originAmount: '1500000', destAmount: '1400000',
  request_blockNumber: '123456789012345678901234567890', request_blockTimestamp: 1700000000, request_transactionHash: '0xh1',
};

test('booleans stored as integers become booleans', (t) => {
  for (const v of [1, '1', true, 't', 'true']) t.true(toBoolean(v), String(v));
  for (const v of [0, '0', false, null, undefined, 'f', 2]) t.false(toBoolean(v), String(v));
});

test('missing-relay items keep key order, exact block numbers and a null raw amount', (t) => {
  const item = missingRelayItem({ ...request, originAmount: null, _sortTs: 1700000000 }, 1700000100);
  t.deepEqual(Object.keys(item), ['ageSeconds', 'Bridge', 'BridgeRequest']);
  t.is(item.ageSeconds, 100);
  t.deepEqual(Object.keys(item.Bridge), [
    'transactionId', 'originChain', 'destChain', 'originChainId', 'destChainId', 'originToken', 'destToken',
    'originAmountFormatted', 'destAmountFormatted', 'sender', 'request', 'sendChainGas', 'originAmount', 'destAmount', 'decodedRequest',
  ]);
  t.is(item.Bridge.decodedRequest, null, 'request bytes of neither layout');
  t.is(item.Bridge.sendChainGas, true);
  t.is(item.Bridge.originAmount, null);
  t.deepEqual(item.BridgeRequest, { blockNumber: '123456789012345678901234567890', blockTimestamp: 1700000000, transactionHash: '0xh1' });
});

test('missing-claim items nest relay and proof', (t) => {
  const item = missingClaimItem({
    ...request,
    relay_blockNumber: '5', relay_blockTimestamp: 1700000010, relay_transactionHash: '0xh2', relay_relayer: '0xR', relay_to: '0xT',
    proof_blockNumber: '6', proof_blockTimestamp: '1700000020', proof_transactionHash: '0xh3', proof_relayer: '0xP', _sortTs: '1700000020',
  }, 1700000030);
  t.is(item.ageSeconds, 10, 'age of the proof, the time the list is ordered by');
  t.deepEqual(item.BridgeRelay, { blockNumber: '5', blockTimestamp: 1700000010, transactionHash: '0xh2', relayer: '0xR', to: '0xT' });
  t.deepEqual(item.BridgeProof, { blockNumber: '6', blockTimestamp: 1700000020, transactionHash: '0xh3', relayer: '0xP' });
});

test('disputes carry only the transactionId in Bridge', (t) => {
  t.deepEqual(disputeItem({
    transactionId: '0x01', dispute_blockNumber: '9', dispute_blockTimestamp: 5, dispute_transactionHash: '0xd',
    dispute_originChainId: 10, dispute_originChain: 'optimism', dispute_relayer: '0xg', _sortTs: 5,
  }, 65), { ageSeconds: 60, Bridge: { transactionId: '0x01' }, BridgeDispute: { blockNumber: '9', blockTimestamp: 5, transactionHash: '0xd', originChainId: 10, originChain: 'optimism', relayer: '0xg' } });
});

test('invalid relays are flat', (t) => {
  const item = invalidRelayItem({ transactionId: '0x1', blockNumber: '7', blockTimestamp: 3, transactionHash: '0xh', originChain: 'a', destChain: 'b',
    originChainId: 1, destChainId: 2, originToken: '0xo', destToken: '0xd', originAmountFormatted: '1', destAmountFormatted: '1', to: '0xt', relayer: '0xr', _sortTs: 3 }, 10);
  t.is(item.blockNumber, '7');
  t.is(item.ageSeconds, 7);
  t.is(Object.keys(item).length, 15);
});

test('transaction details leave out phases that did not happen', (t) => {
  const nulls: Row = {};
  for (const phase of ['relay', 'proof', 'claim', 'refund', 'dispute']) nulls[`${phase}_transactionHash`] = null;
  t.deepEqual(Object.keys(transactionDetail({ ...request, ...nulls })), ['Bridge', 'BridgeRequest']);
  const withClaim = transactionDetail({ ...request, ...nulls, claim_transactionHash: '0xc', claim_blockNumber: '1', claim_blockTimestamp: 2,
    claim_to: '0xt', claim_relayer: '0xr', claim_amountFormatted: '1.5', claim_token: '0xa', claim_amount: '1500000' });
  t.deepEqual(Object.keys(withClaim), ['Bridge', 'BridgeRequest', 'BridgeClaim']);
  t.deepEqual(withClaim.BridgeClaim, { blockNumber: '1', blockTimestamp: 2, transactionHash: '0xc', to: '0xt', relayer: '0xr', amountFormatted: '1.5', token: '0xa', amount: '1500000' });
});

test('addresses come out EIP-55 checksummed and hashes in lower case, however the layout stored them', (t) => {
  // Ponder 0.4 stores viem's checksummed addresses, Ponder 0.12+ lower case: one answer for both.
  const user = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
  const token = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512';
  const hash = `0x${'ab'.repeat(32)}`;
  const row = (addr: (a: string) => string, hex: (h: string) => string): Row => ({
    ...request, transactionId: hex(hash), originToken: addr(token), destToken: addr(token), sender: addr(user), request: hex('0xAB'),
    request_transactionHash: hex(hash),
    relay_blockNumber: '5', relay_blockTimestamp: 1, relay_transactionHash: hex(hash), relay_relayer: addr(user), relay_to: addr(token),
    proof_blockNumber: '6', proof_blockTimestamp: 2, proof_transactionHash: hex(hash), proof_relayer: addr(user), _sortTs: 2,
  });
  const ponder04 = missingClaimItem(row((a) => a, (h) => h.toLowerCase()), 10);
  const ponder17 = missingClaimItem(row((a) => a.toLowerCase(), (h) => h.toLowerCase()), 10);
  const upper = missingClaimItem(row((a) => `0x${a.slice(2).toUpperCase()}`, (h) => `0x${h.slice(2).toUpperCase()}`), 10);
  t.deepEqual(ponder17, ponder04);
  t.deepEqual(upper, ponder04);
  t.like(ponder04, {
    Bridge: { transactionId: hash, sender: user, originToken: token, destToken: token, request: '0xab' },
    BridgeRequest: { transactionHash: hash },
    BridgeRelay: { transactionHash: hash, relayer: user, to: token },
    BridgeProof: { transactionHash: hash, relayer: user },
  });
});
