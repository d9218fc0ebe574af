/** The networks the indexer watches: one entry per id, their names, and the demo block numbers. */
import test from 'ava';
import { blockAt, chainById, chainName, CHAINS, INDEX_START_TIME } from '../../../../lib/indexer/chains.js';

test('should list 12 networks, each id and name once, addresses lower-case hex', (t) => {
  t.is(CHAINS.length, 12);
  t.is(new Set(CHAINS.map((c) => c.id)).size, 12);
  t.is(new Set(CHAINS.map((c) => c.name)).size, 12);
  for (const c of CHAINS) {
    for (const a of [c.fastBridge, c.usd.address, c.eth.address]) t.regex(a, /^0x[0-9a-f]{40}$/, `${c.name} ${a}`);
    t.true(c.blockTime > 0 && c.startBlock > 0, c.name);
  }
});

test('chainName and chainById should map an id, and say unknown for another', (t) => {
  t.is(chainName(42161), 'arbitrum');
  t.is(chainName(1), 'ethereum');
  t.is(chainName(5), 'unknown');
  t.is(chainById(8453)?.name, 'base');
  t.is(chainById(5), undefined);
});

test('blockAt should count blocks from the start block at the chain\'s block time, never before it', (t) => {
  const eth = chainById(1)!;
  t.is(blockAt(eth, INDEX_START_TIME), BigInt(eth.startBlock));
  t.is(blockAt(eth, INDEX_START_TIME + 120), BigInt(eth.startBlock) + 10n);
  t.is(blockAt(eth, INDEX_START_TIME + 125), BigInt(eth.startBlock) + 10n, 'whole blocks');
  t.is(blockAt(eth, INDEX_START_TIME - 1000), BigInt(eth.startBlock));
  t.is(blockAt(chainById(42161)!, INDEX_START_TIME + 1), BigInt(chainById(42161)!.startBlock) + 4n);
});
