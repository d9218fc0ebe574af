import test from 'ava';
import { replySliceBytes, withReplyId, withReplyIdSliced } from '../../../../lib/jsonrpc/reply.js';

const swap = (text: string, id: Parameters<typeof withReplyId>[1]) => withReplyId(Buffer.from(text), id)?.toString();

test('only the top-level id is replaced; spacing, other keys named id and numbers stay as sent', (t) => {
  t.is(swap('{ "id" : 1 , "jsonrpc":"2.0","result":{"id":1,"v":1.0e400}}', 'x'), '{ "id" : "x" , "jsonrpc":"2.0","result":{"id":1,"v":1.0e400}}');
  t.is(swap('{"jsonrpc":"2.0","error":{"code":-32000,"message":"id"},"id":"a"}', 2), '{"jsonrpc":"2.0","error":{"code":-32000,"message":"id"},"id":2}');
  t.is(swap('{"jsonrpc":"2.0","result":"0x1","id":"é"}', 'é'), '{"jsonrpc":"2.0","result":"0x1","id":"é"}');
});

test('a body that is not one object with one id is refused', (t) => {
  t.is(swap('[{"jsonrpc":"2.0","id":1,"result":1}]', 2), undefined);
  t.is(swap('{"jsonrpc":"2.0","result":1}', 2), undefined);
  t.is(swap('{"jsonrpc":"2.0","id":1,"id":2,"result":1}', 2), undefined);
  t.is(swap('{"jsonrpc":"2.0","id":1,"result":"cut', 2), undefined);
});

/** withReplyIdSliced's answer, and whether it came before the call returned. */
function sliced(body: Buffer, id: Parameters<typeof withReplyId>[1]): Promise<{ body: Buffer | undefined; atOnce: boolean }> {
  return new Promise((resolve) => {
    let returned = false;
    withReplyIdSliced(body, id, (out) => resolve({ body: out, atOnce: !returned }));
    returned = true;
  });
}

/** An answer over several slices: `head`, a long result list, `tail`. */
const long = (head: string, tail: string) =>
  Buffer.from(`${head}[${Array.from({ length: 3 * replySliceBytes / 64 }, (_, i) => `{"id":${i},"data":"0x${'ab'.repeat(20)}\\\\"}`).join(',')}]${tail}`);

test('withReplyIdSliced: a long answer, a slice at a time, gives withReplyId\'s bytes exactly, whichever side of the result the id is', async (t) => {
  for (const body of [
    long('{"jsonrpc":"2.0","id":1,"result":', '}'),
    long('{"jsonrpc":"2.0","result":', ',"id":1}'),
    long('{"jsonrpc":"2.0","result":', ',"i\\u0064" : "é"}'),
  ]) {
    t.true(body.length > 3 * replySliceBytes);
    for (const id of [1, 'client "b"', 123456789]) {
      const got = await sliced(body, id);
      t.false(got.atOnce, 'the long answer is done over later turns');
      const whole = withReplyId(body, id)!;
      t.true(got.body!.equals(whole), `same bytes as withReplyId (id ${JSON.stringify(id)})`);
      t.is(got.body!.length, whole.length);
    }
  }
  const same = long('{"jsonrpc":"2.0","id":"x","result":', '}');
  t.is((await sliced(same, 'x')).body, same, 'the same id: the same buffer, no copy');
});

test('withReplyIdSliced: a long body without exactly one id is refused like withReplyId; a short one is done at once', async (t) => {
  t.is((await sliced(long('{"jsonrpc":"2.0","result":', '}'), 2)).body, undefined);
  t.is((await sliced(long('{"jsonrpc":"2.0","id":1,"id":2,"result":', '}'), 2)).body, undefined);
  t.is((await sliced(long('[{"jsonrpc":"2.0","id":1,"result":', '}]'), 2)).body, undefined);
  t.is((await sliced(long('{"jsonrpc":"2.0","id":1,"result":', ''), 2)).body, undefined, 'cut short');
  const short = await sliced(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}'), 5);
  t.true(short.atOnce);
  t.is(short.body!.toString(), '{"jsonrpc":"2.0","id":5,"result":"0x1"}');
});

test('withReplyIdSliced: once its owner is gone, the work stops and nothing is given', async (t) => {
  const owner = { gone: false };
  let given = 0;
  withReplyIdSliced(long('{"jsonrpc":"2.0","result":', ',"id":1}'), 2, () => given++, owner);
  await new Promise((r) => setImmediate(r));
  owner.gone = true;
  // more turns than the whole work takes (3 slices of scan, 3 of copy)
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
  t.is(given, 0);
  // the same work with an owner that stays: given once
  withReplyIdSliced(long('{"jsonrpc":"2.0","result":', ',"id":1}'), 2, () => given++, { gone: false });
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
  t.is(given, 1);
});
