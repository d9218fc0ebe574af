import test from 'ava';
import { withReplyId } from '../../../../lib/jsonrpc/reply.js';

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
