import test from 'ava';
import { questionKey } from '../../../../lib/jsonrpc/question-key.js';
import type { RpcPayload } from '../../../../lib/jsonrpc/types.js';

const single = (params: unknown[], extra: object = {}): RpcPayload =>
  ({ calls: [{ id: 1, method: 'eth_getLogs', params, ...extra }], batch: false, raw: Buffer.alloc(0) }) as unknown as RpcPayload;

test('method and params with keys sorted; none for a number, an aliased key or a batch; the same answer when asked again', (t) => {
  const p = single([{ toBlock: '0x2', fromBlock: '0x1' }]);
  t.is(questionKey(p), 'eth_getLogs\n[{"fromBlock":"0x1","toBlock":"0x2"}]');
  t.is(questionKey(p), questionKey(single([{ fromBlock: '0x1', toBlock: '0x2' }])));
  const numeric = single([{ fromBlock: 1 }]);
  t.is(questionKey(numeric), undefined);
  t.is(questionKey(numeric), undefined, 'asked again');
  t.is(questionKey(single([{}], { alias: 'Params' })), undefined);
  t.is(questionKey({ ...single([]), batch: true } as RpcPayload), undefined);
});
