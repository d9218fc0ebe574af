import test from 'ava';
import { MemoryCache, type CacheEntry } from '../../../../lib/cache/memory.js';
import type { Upstream } from '../../../../lib/upstream/registry.js';

const entry = (bytes: number, confirmations = 2): CacheEntry => ({
  body: Buffer.alloc(bytes, 0x61),
  hash: 'h',
  quorum: [{} as Upstream],
  confirmations,
  at: 0,
  block: 1n,
});

test('bounded in bytes: the least recently used entries go first; a read counts as a use', (t) => {
  const cache = new MemoryCache(4_000, 2_000);
  cache.set('a', entry(900));
  cache.set('b', entry(900));
  cache.set('c', entry(900));
  t.is(cache.size, 3);
  t.truthy(cache.get('a'), 'a is now the most recent');
  cache.set('d', entry(900)); // over 4,000 with the overheads: b goes
  t.is(cache.get('b'), undefined);
  t.truthy(cache.get('a'));
  t.truthy(cache.get('c'));
  t.truthy(cache.get('d'));
  t.is(cache.evictions, 1);
  t.true(cache.bytes <= 4_000);
});

test('an entry larger than maxEntryBytes is refused; one confirmed by fewer providers never replaces one confirmed by more', (t) => {
  const cache = new MemoryCache(10_000, 1_000);
  cache.set('big', entry(2_000));
  t.is(cache.get('big'), undefined);
  t.is(cache.refused, 1);
  cache.set('k', entry(10, 3));
  cache.set('k', entry(20, 2));
  t.is(cache.get('k')!.confirmations, 3);
  cache.set('k', entry(30, 5));
  t.is(cache.get('k')!.confirmations, 5);
  t.is(cache.size, 1);
  const before = cache.bytes;
  cache.clear();
  t.true(before > 0);
  t.is(cache.bytes, 0);
  t.throws(() => new MemoryCache(0), { message: /maxBytes/ });
});

test('delete drops one entry and gives its bytes back; deleting a missing key changes nothing', (t) => {
  const cache = new MemoryCache(10_000, 2_000);
  cache.set('a', entry(500));
  cache.set('b', entry(700));
  const both = cache.bytes;
  t.true(cache.delete('a'));
  t.is(cache.get('a'), undefined);
  t.truthy(cache.get('b'));
  t.is(cache.size, 1);
  t.true(cache.bytes < both && cache.bytes > 700);
  t.false(cache.delete('a'));
  t.false(cache.delete('none'));
  t.is(cache.size, 1);
  cache.delete('b');
  t.is(cache.bytes, 0);
  t.is(cache.evictions, 0, 'a deletion is not an eviction');
});
