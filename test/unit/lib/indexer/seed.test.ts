import test from 'ava';
import { CHAINS } from '../../../../lib/indexer/chains.js';
import { DEMO_STATES, formatUnits, generateDemo } from '../../../../lib/indexer/seed.js';

const NOW = 1_760_000_000;

test('formatUnits matches viem formatting', (t) => {
  t.is(formatUnits(0n, 6), '0');
  t.is(formatUnits(100500000n, 6), '100.5');
  t.is(formatUnits(1n, 18), '0.000000000000000001');
  t.is(formatUnits(1230000000000000000000n, 18), '1230');
  t.is(formatUnits(-1500000n, 6), '-1.5');
});

test('every state appears even in a small dataset, and the count is exact', (t) => {
  const data = generateDemo({ count: DEMO_STATES.length, now: NOW, seed: 1 });
  t.deepEqual([...data.states.values()], [...DEMO_STATES]);
  const big = generateDemo({ count: 400, now: NOW, seed: 2 });
  t.is(big.states.size, 400);
  t.deepEqual(new Set(big.states.values()), new Set(DEMO_STATES));
});

test('it is deterministic for a seed and varies between seeds', (t) => {
  t.deepEqual(generateDemo({ count: 30, now: NOW, seed: 5 }).requests, generateDemo({ count: 30, now: NOW, seed: 5 }).requests);
  t.notDeepEqual(generateDemo({ count: 30, now: NOW, seed: 5 }).requests, generateDemo({ count: 30, now: NOW, seed: 6 }).requests);
});

test('rows are realistic: all 12 chains, distinct origin and destination, events in order, nothing in the future', (t) => {
  const data = generateDemo({ count: 600, now: NOW, seed: 3 });
  const chains = new Set(data.requests.flatMap((r) => [r.originChainId, r.destChainId]));
  t.deepEqual([...chains].sort(), CHAINS.map((c) => c.id).sort());
  const at = (rows: typeof data.requests) => new Map(rows.map((r) => [r.transactionId as string, r]));
  const requests = at(data.requests);
  const relays = at(data.relays);
  const proofs = at(data.proofs);
  const disputes = at(data.disputes);
  for (const r of data.requests) {
    t.not(r.originChainId, r.destChainId);
    t.regex(String(r.transactionId), /^0x[0-9a-f]{64}$/);
    t.regex(String(r.request), /^0x([0-9a-f]{64}){12}$/);
    t.true([0, 1].includes(r.sendChainGas as number));
    t.regex(String(r.blockNumber), /^\d+$/);
  }
  for (const table of [data.requests, data.relays, data.proofs, data.disputes, data.claims, data.refunds]) {
    for (const row of table) t.true((row.blockTimestamp as number) <= NOW, 'not in the future');
  }
  for (const [id, state] of data.states) {
    const req = requests.get(id);
    const relay = relays.get(id);
    t.is(req === undefined, state === 'relayWithoutRequest', `${state} request`);
    if (req && relay) t.true((relay.blockTimestamp as number) > (req.blockTimestamp as number));
    const proof = proofs.get(id);
    const dispute = disputes.get(id);
    if (state === 'provenDisputed') t.true(BigInt(dispute!.blockNumber as string) > BigInt(proof!.blockNumber as string));
    if (state === 'disputedReproven') t.true(BigInt(proof!.blockNumber as string) > BigInt(dispute!.blockNumber as string));
    if (state === 'conflictingProof') t.not(proof!.relayer, relay!.relayer);
    if (state === 'requested') t.true((req!.blockTimestamp as number) > NOW - 7 * 86400);
    if (state === 'expired') t.true((req!.blockTimestamp as number) <= NOW - 7 * 86400);
  }
});
