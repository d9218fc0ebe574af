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
  const tokens = Array.from({ length: 50 }, newHopToken);
  t.is(new Set(tokens).size, tokens.length);
  for (const token of tokens) t.deepEqual(hopTokens(viaEntry(token)), [token]);
  t.true(maxHops >= 2);
});
