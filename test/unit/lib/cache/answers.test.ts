import test from 'ava';
import { AnswerCache, underId, type Hit } from '../../../../lib/cache/answers.js';
import { MemoryCache, type CacheEntry } from '../../../../lib/cache/memory.js';
import { replySliceBytes, withReplyId } from '../../../../lib/jsonrpc/reply.js';
import type { Upstream } from '../../../../lib/upstream/registry.js';

const quorum = [{ label: 'a' }, { label: 'b' }] as unknown as Upstream[];
const entry = (body: Buffer, confirmations = 2): CacheEntry => ({ body, hash: 'h', quorum, confirmations, at: 5, block: 1n });
const short = Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x10"}');
/** An answer over several slices, its id after the result. */
const long = Buffer.from(`{"jsonrpc":"2.0","result":[${Array.from({ length: 3 * replySliceBytes / 32 }, (_, i) => `{"logIndex":"0x${i.toString(16)}","data":"0x00"}`).join(',')}],"id":1}`);

/** underId's answer, and whether it came before the call returned. */
function under(hit: Hit): Promise<{ hit: Hit | undefined; atOnce: boolean }> {
  return new Promise((resolve) => {
    let returned = false;
    underId(hit, (out) => resolve({ hit: out, atOnce: !returned }));
    returned = true;
  });
}

function cacheWith(body: Buffer, confirmations = 2): AnswerCache {
  const memory = new MemoryCache(64 * replySliceBytes);
  memory.set('k', entry(body, confirmations));
  return new AnswerCache(memory);
}

test('a short entry\'s hit is under the request\'s id at once', async (t) => {
  const hit = cacheWith(short).lookup('k', 2, 'x')!;
  t.is(hit.pendingId, undefined);
  t.is(hit.verdict.members[0]!.body.toString(), '{"jsonrpc":"2.0","id":"x","result":"0x10"}');
  const { hit: same, atOnce } = await under(hit);
  t.true(atOnce);
  t.is(same, hit);
});

test('a long entry\'s hit is put under the id a slice at a time, not in the lookup: the same bytes as the whole rewrite, for every member; a top-up\'s votes too', async (t) => {
  t.true(long.length > 3 * replySliceBytes);
  for (const [required, topUp] of [[2, false], [3, true]] as const) {
    for (const id of ['client "b"', 'é', 12345678901]) {
      const hit = cacheWith(long).lookup('k', required, id)!;
      t.is(hit.pendingId, id);
      t.is(hit.topUp, topUp);
      t.is(hit.verdict.members[0]!.body, long, 'the lookup leaves the kept bytes as they are');
      const { hit: out, atOnce } = await under(hit);
      t.false(atOnce, 'not in the caller\'s turn');
      t.is(out!.pendingId, undefined);
      t.is(out!.topUp, topUp);
      t.is(out!.at, 5);
      t.is(out!.verdict.hash, 'h');
      t.deepEqual(out!.verdict.members.map((m) => m.upstream), quorum);
      for (const member of out!.verdict.members) t.true(member.body.equals(withReplyId(long, id)!));
    }
  }
});

test('a long entry whose bytes hold no single id is no hit', async (t) => {
  const noId = Buffer.from(long.toString().replace(',"id":1}', '}'));
  const hit = cacheWith(noId).lookup('k', 2, 1)!;
  const { hit: out } = await under(hit);
  t.is(out, undefined);
});
