/**
 * Writes on the wire (lib/jsonrpc/writes.ts, lib/verify/write.ts): a write is never hedged and
 * never sent to another upstream once its bytes may have reached one; a write that reached no
 * upstream moves on; broadcast mode sends it to K upstreams at once and lets every call finish;
 * `already known` is the transaction hash; -32017 when the outcome is unknown.
 * Each upstream here is a real HTTP server on port 0 that counts what it received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { Transaction } from 'ethers';
import { deadUrl } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

interface Received {
  method: string;
  params: unknown[];
}

interface WriteUpstream {
  url: string;
  /** Every JSON-RPC request body read in full. */
  received: Received[];
  /** Answers written, and requests whose connection closed before we answered. */
  answered: number;
  aborted: number;
  /** Resolves once `n` requests were read in full. */
  receivedCount(n: number): Promise<void>;
  /** Resolves once `n` answers were written (or their connection closed). */
  endedCount(n: number): Promise<void>;
  close(): Promise<void>;
}

type Behaviour =
  | { kind: 'answer'; answer: (call: { id: unknown; method: string; params: unknown[] }) => unknown; delayMs?: number }
  /** Reads the request, then closes the connection without a byte of answer. */
  | { kind: 'close-after-read' }
  | { kind: 'hang' };

async function startWriteUpstream(behaviour: Behaviour): Promise<WriteUpstream> {
  const waiters: { n: number; ended: boolean; resolve: () => void }[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const check = () => {
    for (const w of [...waiters]) {
      if ((w.ended ? up.answered + up.aborted : up.received.length) >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const up: WriteUpstream = {
    url: '',
    received: [],
    answered: 0,
    aborted: 0,
    receivedCount: (n) => new Promise((resolve) => { waiters.push({ n, ended: false, resolve }); check(); }),
    endedCount: (n) => new Promise((resolve) => { waiters.push({ n, ended: true, resolve }); check(); }),
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: unknown[] };
      up.received.push({ method: body.method, params: body.params });
      let done = false;
      res.on('close', () => {
        if (!done) {
          done = true;
          up.aborted += 1;
          check();
        }
      });
      check();
      if (behaviour.kind === 'close-after-read') return req.socket.destroy();
      if (behaviour.kind === 'hang') return;
      const send = () => {
        if (done) return;
        done = true;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...(behaviour.answer(body) as object) }));
        up.answered += 1;
        check();
      };
      if (behaviour.delayMs) setTimeout(send, behaviour.delayMs);
      else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return up;
}

// A signed transaction (a fixed key: the same bytes on every run); its hash as ethers computes it.
const rawTx = await (async () => {
  const { Wallet } = await import('ethers');
  const wallet = new Wallet('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
  return wallet.signTransaction(
    Transaction.from({ type: 2, chainId: 1, nonce: 7, to: '0x1111111111111111111111111111111111111111', value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n }),
  );
})();
const txHash = Transaction.from(rawTx).hash!;

// A blob transaction (EIP-4844) as eth_sendRawTransaction carries it: the network form,
// 0x03 || rlp([tx_payload_body, blobs, commitments, proofs]). Its hash is keccak-256 of
// 0x03 || rlp(tx_payload_body), not of the bytes sent.
const blobTx = await (async () => {
  const { Wallet } = await import('ethers');
  const wallet = new Wallet('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
  const tx = Transaction.from({
    type: 3, chainId: 1, nonce: 8, to: '0x1111111111111111111111111111111111111111', value: 1n, gasLimit: 21_000n,
    maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, maxFeePerBlobGas: 1n,
    blobs: [{ data: `0x${'00'.repeat(131_072)}`, commitment: `0x${'c0'.repeat(48)}`, proof: `0x${'a0'.repeat(48)}` }],
  });
  tx.signature = wallet.signingKey.sign(tx.unsignedHash);
  return { raw: tx.serialized, hash: tx.hash! };
})();

const accepts = { kind: 'answer', answer: () => ({ result: txHash }) } as const;
const alreadyKnown = { kind: 'answer', answer: () => ({ error: { code: -32000, message: 'already known' } }) } as const;
const send = (id: unknown = 1) => rpc('eth_sendRawTransaction', [rawTx], id);

async function setup(t: import('ava').ExecutionContext, behaviours: Behaviour[], chain: Record<string, unknown> = {}, timeouts: Record<string, unknown> = {}) {
  const ups = await Promise.all(behaviours.map(startWriteUpstream));
  const gw = await startGateway({ timeouts: { hedgeMs: 0, upstreamMs: 30_000, requestMs: 60_000, ...timeouts }, chains: { 1: { rpcs: ups.map((u) => u.url), strategy: 'priority', ...chain } } });
  t.teardown(() => Promise.all([gw.close(), ...ups.map((u) => u.close())]));
  return { ups, gw };
}

test('a write the first upstream read and never answered is not sent on: -32017 (504) with the transaction hash', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'close-after-read' }, accepts, accepts]);
  const r = await gw.post('/rpc/1', send(5));
  t.is(r.status, 504);
  t.is(r.body.id, 5);
  t.is(r.body.error.code, -32017);
  t.is(r.body.error.data.txHash, txHash);
  t.deepEqual(r.body.error.data.upstreams, [ups[0]!.url]);
  t.regex(r.body.error.message, new RegExp(`outcome unknown.*${txHash}`));
  t.deepEqual(ups.map((u) => u.received.length), [1, 0, 0], 'exactly one upstream received it, once');
});

test('a write whose upstream never answers in time is not sent on: -32017, the others never see it', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'hang' }, accepts], {}, { upstreamMs: 300 });
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 504);
  t.is(r.body.error.code, -32017);
  t.is(r.body.error.data.txHash, txHash);
  // Sent on, the write would have been answered by the second upstream (200). The first one may
  // have read it or not: on a loaded machine the call can time out before its bytes are written or
  // read, so its count is 0 or 1 and is not waited for (waiting hung the test once).
  t.true(ups[0]!.received.length <= 1);
  t.is(ups[1]!.received.length, 0);
});

test('a write whose first upstream refuses the connection goes to the next one', async (t) => {
  const up = await startWriteUpstream(accepts);
  const dead = await deadUrl();
  const gw = await startGateway({ timeouts: { hedgeMs: 0 }, chains: { 1: { rpcs: [dead, up.url], strategy: 'priority' } } });
  t.teardown(() => Promise.all([gw.close(), up.close()]));
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 200);
  t.is(r.body.result, txHash);
  t.is(r.headers['x-forwarded-from'], up.url);
  t.is(r.headers['x-checked-urls'], up.url, 'the write went to the live upstream only');
  t.is(up.received.length, 1);
});

test('a write turned away by a rate limit goes to the next upstream', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'answer', answer: () => ({ error: { code: -32005, message: 'daily request count exceeded, request rate limited' } }) }, accepts]);
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 200);
  t.is(r.body.result, txHash);
  t.deepEqual(ups.map((u) => u.received.length), [1, 1]);
});

test('hedging never duplicates a write: a slow first upstream is waited for', async (t) => {
  const { ups, gw } = await setup(t, [{ ...accepts, delayMs: 400 }, accepts, accepts], {}, { hedgeMs: 10 });
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 200);
  t.is(r.body.result, txHash);
  t.is(r.headers['x-forwarded-from'], ups[0]!.url);
  t.deepEqual(ups.map((u) => u.received.length), [1, 0, 0], 'only the first upstream received it');
  // The same gateway hedges a read (the hedge is configured, it is the write that is not hedged).
  const read = await gw.post('/rpc/1', rpc('eth_blockNumber', []));
  t.is(read.status, 200);
  t.true(ups[1]!.received.length + ups[2]!.received.length >= 1, 'a read on the slow upstream was hedged');
});

test('a node\'s rejection of a write is relayed as the node gave it (no other upstream asked)', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'answer', answer: () => ({ error: { code: -32000, message: 'nonce too low: next nonce 8, tx nonce 7' } }) }, accepts]);
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 200);
  t.is(r.body.error.code, -32000);
  t.regex(r.body.error.message, /nonce too low/);
  t.deepEqual(ups.map((u) => u.received.length), [1, 0]);
});

test('already known from the only upstream asked is a success: result = keccak-256 of the raw bytes', async (t) => {
  const { ups, gw } = await setup(t, [alreadyKnown, accepts]);
  const r = await gw.post('/rpc/1', send('k'));
  t.is(r.status, 200);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 'k', result: txHash });
  t.is(r.headers['x-forwarded-from'], ups[0]!.url);
  t.deepEqual(ups.map((u) => u.received.length), [1, 0]);
});

for (const message of ['known transaction: 0x' + 'ab'.repeat(32), 'ALREADY_EXISTS: already known', 'AlreadyKnown', 'Known transaction', 'transaction already imported', 'Transaction with the same hash was already imported.']) {
  test(`already known, as "${message}": the transaction hash`, async (t) => {
    const { gw } = await setup(t, [{ kind: 'answer', answer: () => ({ error: { code: -32010, message } }) }]);
    const r = await gw.post('/rpc/1', send());
    t.is(r.status, 200);
    t.is(r.body.result, txHash);
  });
}

test('broadcast: every upstream receives the write once, the first accepted answer wins, the others finish unaborted', async (t) => {
  const { ups, gw } = await setup(t, [{ ...accepts, delayMs: 300 }, accepts, { ...accepts, delayMs: 300 }], { writes: { broadcast: 'all' } }, { hedgeMs: 10 });
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 200);
  t.is(r.body.result, txHash);
  t.is(r.headers['x-forwarded-from'], ups[1]!.url, 'the answer of the upstream that answered first');
  t.deepEqual(String(r.headers['x-checked-urls']).split(',').sort(), ups.map((u) => u.url).sort(), 'X-Checked-URLS names every upstream the write went to');
  await Promise.all(ups.map((u) => u.endedCount(1)));
  t.deepEqual(ups.map((u) => u.received.length), [1, 1, 1]);
  t.deepEqual(ups.map((u) => u.aborted), [0, 0, 0], 'the slower calls were left to finish');
});

test('broadcast K=2: two upstreams receive it, the third does not', async (t) => {
  const { ups, gw } = await setup(t, [accepts, accepts, accepts], { writes: { broadcast: 2 } });
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 200);
  await Promise.all(ups.slice(0, 2).map((u) => u.endedCount(1)));
  t.deepEqual(ups.map((u) => u.received.length), [1, 1, 0]);
});

test('broadcast: an upstream answering already known is a success with the hash; a failing one is not the request\'s failure', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'close-after-read' }, alreadyKnown, { ...accepts, delayMs: 300 }], { writes: { broadcast: 'all' } });
  const r = await gw.post('/rpc/1', send(9));
  t.is(r.status, 200);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 9, result: txHash });
  t.is(r.headers['x-forwarded-from'], ups[1]!.url);
  await ups[2]!.endedCount(1);
  t.deepEqual(ups.map((u) => u.received.length), [1, 1, 1]);
});

test('broadcast: every upstream unanswered → -32017 naming them all', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'close-after-read' }, { kind: 'close-after-read' }], { writes: { broadcast: 'all' } });
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 504);
  t.is(r.body.error.code, -32017);
  t.deepEqual([...r.body.error.data.upstreams].sort(), ups.map((u) => u.url).sort());
  t.deepEqual(ups.map((u) => u.received.length), [1, 1]);
});

test('a write that reached no upstream at all: -32011 (502), saying that sending it again is safe', async (t) => {
  const dead = [await deadUrl(), await deadUrl()];
  const gw = await startGateway({ timeouts: { hedgeMs: 0 }, chains: { 1: { rpcs: dead } } });
  t.teardown(() => gw.close());
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 502);
  t.is(r.body.error.code, -32011);
  t.is(r.body.error.data.txHash, txHash);
  t.regex(r.body.error.message, /not delivered/);
});

test('config: writes.broadcast is checked and named by its YAML path', async (t) => {
  const err = await startGateway({ chains: { 1: { rpcs: ['http://127.0.0.1:1/'], writes: { broadcast: 3 } } } }).then(() => undefined, (e: Error) => e);
  t.truthy(err);
  t.regex(err!.message, /chains\.1\.writes\.broadcast/);
  const bad = await startGateway({ chains: { 1: { rpcs: ['http://127.0.0.1:1/'], writes: { broadcast: 'some' } } } }).then(() => undefined, (e: Error) => e);
  t.regex(bad!.message, /chains\.1\.writes\.broadcast.*use all/);
});

test('a batch holding a write: the write member is not sent on after its bytes went unanswered (-32017 with its hash), the read member is answered', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'close-after-read' }, accepts]);
  const r = await gw.post('/rpc/1', [rpc('eth_chainId', [], 1), rpc('eth_sendRawTransaction', [rawTx], 2)]);
  // Each member on its own (issue 25): the read moves on to the second upstream, the write does not.
  t.is(r.status, 200);
  t.deepEqual(r.body.map((m: { id: number }) => m.id), [1, 2]);
  t.truthy(r.body[0].result, 'the read member has its answer');
  t.is(r.body[1].error.code, -32017);
  t.is(r.body[1].error.data.txHash, txHash);
  t.deepEqual(ups.map((u) => u.received.filter((m) => JSON.stringify(m).includes('eth_sendRawTransaction')).length), [1, 0]);
});

test('broadcast: one node rejects, another never answered → -32017 (it may be on the other node), the rejection in data', async (t) => {
  const { ups, gw } = await setup(t, [{ kind: 'close-after-read' }, { kind: 'answer', answer: () => ({ error: { code: -32000, message: 'insufficient funds for gas * price + value' } }) }], { writes: { broadcast: 'all' } });
  const r = await gw.post('/rpc/1', send());
  t.is(r.status, 504);
  t.is(r.body.error.code, -32017);
  t.is(r.body.error.data.txHash, txHash);
  const reasons = (r.body.error.data.failures as { upstream: string; reason: string }[]).map((f) => `${f.upstream} ${f.reason}`).join('\n');
  t.regex(reasons, new RegExp(`${ups[1]!.url} rejected it: .*insufficient funds`));
  t.deepEqual(ups.map((u) => u.received.length), [1, 1]);
});

test('already known for a blob transaction sent in its network form: the result is the transaction\'s hash, not keccak-256 of the bytes sent', async (t) => {
  const { gw } = await setup(t, [alreadyKnown]);
  const r = await gw.post('/rpc/1', rpc('eth_sendRawTransaction', [blobTx.raw], 3));
  t.is(r.status, 200);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 3, result: blobTx.hash });
});

test('a blob transaction whose write went unanswered: -32017 names the transaction\'s hash', async (t) => {
  const { gw } = await setup(t, [{ kind: 'close-after-read' }]);
  const r = await gw.post('/rpc/1', rpc('eth_sendRawTransaction', [blobTx.raw], 4));
  t.is(r.status, 504);
  t.is(r.body.error.code, -32017);
  t.is(r.body.error.data.txHash, blobTx.hash);
});

// A transaction type whose hash is not keccak-256 of its bytes (zkSync's EIP-712 0x71, among
// others): no hash is made up for it.
test('already known for a transaction of a type omnigate does not know: relayed as the node gave it, no hash made up', async (t) => {
  const { gw } = await setup(t, [alreadyKnown]);
  const zk = `0x71${'f8'}${'00'.repeat(40)}`;
  const r = await gw.post('/rpc/1', rpc('eth_sendRawTransaction', [zk], 5));
  t.is(r.status, 200);
  t.is(r.body.id, 5);
  t.is(r.body.error?.message, 'already known');
  t.is(r.body.result, undefined);
});

for (const [method, params] of [
  ['mev_sendBundle', [{ version: 'v0.1', inclusion: { block: '0x10' }, body: [{ tx: rawTx, canRevert: false }] }]],
  ['eth_cancelBundle', [{ replacementUuid: '01234567-89ab-cdef-0123-456789abcdef' }]],
  ['zks_sendRawTransactionWithDetailedOutput', [rawTx]],
] as const) {
  test(`${method} is a write: not sent on once its bytes went unanswered, never hedged`, async (t) => {
    const { ups, gw } = await setup(t, [{ kind: 'close-after-read' }, accepts], {}, { hedgeMs: 10 });
    const r = await gw.post('/rpc/1', rpc(method, params as unknown as unknown[], 6));
    t.is(r.status, 504);
    t.is(r.body.id, 6);
    t.is(r.body.error.code, -32017);
    t.deepEqual(ups.map((u) => u.received.length), [1, 0], 'the second upstream never received it');
  });
}

// A result that is not the transaction's hash: a client tracking it would wait for a transaction
// that does not exist. The node may still have taken the write, so it is not sent on.
const wrongHash = { kind: 'answer', answer: () => ({ result: `0x${'ee'.repeat(32)}` }) } as const;

test('a write answered with a hash that is not the transaction\'s is not accepted nor sent on: -32017 with the real hash', async (t) => {
  const { ups, gw } = await setup(t, [wrongHash, accepts]);
  const r = await gw.post('/rpc/1', send(4));
  t.is(r.status, 504, r.text);
  t.is(r.body.id, 4);
  t.is(r.body.error.code, -32017);
  t.is(r.body.error.data.txHash, txHash);
  t.regex(r.body.error.data.failures[0].reason, new RegExp(`not the transaction's hash ${txHash}.*${'ee'.repeat(32)}`));
  t.deepEqual(ups.map((u) => u.received.length), [1, 0], 'never sent to the second upstream');
  // The same hash in capitals is the transaction's.
  const upper = await setup(t, [{ kind: 'answer', answer: () => ({ result: `0x${txHash.slice(2).toUpperCase()}` }) }]);
  const ok = await upper.gw.post('/rpc/1', send(5));
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.result.toLowerCase(), txHash);
});

test('broadcast: a faster upstream\'s wrong hash loses to a slower one\'s accepted answer', async (t) => {
  const { ups, gw } = await setup(t, [wrongHash, { ...accepts, delayMs: 200 }], { writes: { broadcast: 'all' } });
  const r = await gw.post('/rpc/1', send(6));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 6, result: txHash });
  t.is(r.headers['x-forwarded-from'], ups[1]!.url);
  t.deepEqual(ups.map((u) => u.received.length), [1, 1]);
});
