import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import { initContext } from '../../../lib/pipeline/context.js';
import { silentLogger } from '../../../lib/log.js';
import { newHealth } from '../../../lib/health/health.js';
import type { Upstream } from '../../../lib/upstream/registry.js';
import type { UpstreamRequest } from '../../../lib/upstream/transport/contract.js';
import type { Chain } from '../../../lib/upstream/registry.js';
import { canonicalize } from '../../../middleware/canonicalize.js';
import { fetchParallel } from '../../../middleware/fetch-parallel.js';
import { verify } from '../../../middleware/verify.js';

// fetch hands the agreement loop its call policy; verify starts the loop: the calls go out when
// the three stages have run, in one go.
test('should start the N calls slowest-expected first, and call exactly the N best-ranked upstreams', (t) => {
  const started: string[] = [];
  const signals: UpstreamRequest['signal'][] = [];
  const upstream = (index: number, latencyMs: number | undefined): Upstream => ({
    chainId: '1', index, url: `http://u${index}/`, label: `u${index}`, hopToken: `t${index}`, provider: `u${index}`,
    secrets: { scrub: (text) => text, echoedIn: () => false },
    health: { ...newHealth(), latencyMs },
    transport: {
      send(request) {
        started.push(`u${index}`);
        signals.push(request.signal);
        return new Promise(() => {});
      },
      close: async () => {},
    } as Upstream['transport'],
  });
  const req = {} as IncomingMessage;
  const res = new EventEmitter() as unknown as ServerResponse;
  const ctx = initContext(req, 'r1', silentLogger);
  ctx.payload = { calls: [{ id: 1, method: 'eth_getBalance', params: [] }], batch: false, raw: Buffer.from('{}') };
  // Ranked order u0, u1, u2, u3; the launch of 3 leaves u3 out and starts u1 (9 ms) first.
  ctx.candidates = [upstream(0, 2), upstream(1, 9), upstream(2, undefined), upstream(3, 50)];
  ctx.required = 3;
  ctx.chain = { id: '1', upstreams: ctx.candidates, providerCount: 4 } as unknown as Chain;
  let nexted = 0;
  const ended: unknown[] = [];
  fetchParallel({ upstreamTimeoutMs: 1000, requestTimeoutMs: 1000, maxResponseBytes: 1000 })(req, res, () => {
    nexted += 1;
    canonicalize()(req, res, () => {
      nexted += 1;
      verify()(req, res, (err) => ended.push(err));
    });
  });
  t.is(nexted, 2);
  t.deepEqual(ended, [], 'no answer yet');
  t.deepEqual(started, ['u1', 'u0', 'u2']);
  res.emit('close'); // the request ends: every call is stopped, the deadline cleared
  t.true(signals.every((s) => s.aborted));
  t.is(ended.length, 1, 'verify ends once, when the client left');
});
