/**
 * Lifecycle: what a pipeline leaves behind once closed, in a process that goes on (an embedding
 * app that builds pipelines again, on a config reload say, or runs several). A closed pipeline
 * must be garbage: nothing process-wide (observers, timers, listeners) may keep it reachable.
 */
import { setImmediate as tick } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import test from 'ava';
import { rpcPipeline } from '../../middleware/index.js';
import { makeConfig } from '../support/gateway.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Collects garbage until `ref` is gone, a few rounds at most; whether it is gone. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 6 && ref.deref() !== undefined; i++) {
    await tick();
    gc();
  }
  return ref.deref() === undefined;
}

const config = () => makeConfig({ chains: { 1: { rpcs: ['http://127.0.0.1:1', 'http://127.0.0.1:2'] } } });

test('a closed pipeline with process metrics is garbage; two at once both serve the process metrics', async (t) => {
  const refs: WeakRef<object>[] = [];
  await (async () => {
    const a = rpcPipeline(config(), { processMetrics: true });
    const b = rpcPipeline(config(), { processMetrics: true });
    for (const rpc of [a, b]) {
      const text = await rpc.metrics.registry.metrics();
      t.regex(text, /^omnigate_process_cpu_user_seconds_total /m);
      t.regex(text, /^# TYPE omnigate_nodejs_gc_duration_seconds histogram/m);
      t.regex(text, /^omnigate_upstream_up\{/m, 'and its own metrics');
    }
    await Promise.all([a.close(), b.close()]);
    refs.push(new WeakRef(a.registry), new WeakRef(b.registry));
  })();
  for (const ref of refs) t.true(await collected(ref), 'the closed pipeline (its upstreams, agents) is collected');
});
