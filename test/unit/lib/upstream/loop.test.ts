import test from 'ava';
import { hopTokens, maxHops, newHopToken, viaEntry } from '../../../../lib/upstream/loop.js';

test('should read the omnigate tokens of a Via header in order, leaving other proxies out', (t) => {
  t.deepEqual(hopTokens(undefined), []);
  t.deepEqual(hopTokens('1.1 nginx, HTTP/1.1 squid (3.5)'), []);
  t.deepEqual(hopTokens(`1.1 nginx, ${viaEntry('aB-_9')} , 1.0 omnigate-second (comment), 2 cdn`), ['aB-_9', 'second']);
  t.deepEqual(hopTokens(['1.1 omnigate-one', 'HTTP/1.1 omnigate-two']), ['one', 'two']);
});

test('should not take a token out of another word', (t) => {
  t.deepEqual(hopTokens('1.1 notomnigate-x, 1.1 proxy (omnigate-y)'), []);
});

test('should make distinct URL-safe tokens that round-trip through a Via entry', (t) => {
  const tokens = Array.from({ length: 50 }, () => newHopToken());
  t.is(new Set(tokens).size, tokens.length);
  for (const token of tokens) t.deepEqual(hopTokens(viaEntry(token)), [token]);
  t.true(maxHops >= 2);
});

test('with a seed, the same upstream gets the same token in every process, and each upstream its own', (t) => {
  const seed = Buffer.alloc(32, 7);
  const key = (i: number) => `1337\n${i}\nhttps://node${i}.example/`;
  t.is(newHopToken(seed, key(0)), newHopToken(Buffer.alloc(32, 7), key(0)));
  const tokens = Array.from({ length: 50 }, (_, i) => newHopToken(seed, key(i)));
  t.is(new Set(tokens).size, tokens.length);
  t.not(newHopToken(Buffer.alloc(32, 8), key(0)), tokens[0]);
  for (const token of tokens) t.deepEqual(hopTokens(viaEntry(token)), [token]);
});
