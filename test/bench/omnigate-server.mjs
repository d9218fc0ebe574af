/**
 * Bench child: the real `omnigate serve` server (`startServer`: the whole pipeline, no logger,
 * i.e. the silent default, quieter than LOG_LEVEL=warn) on port 0, from the build (dist/), as
 * users run it: plain JavaScript, so no TypeScript loader sits in the measured process (tsx
 * alone adds about 27 MB of RSS). `npm run bench` builds first.
 * argv[2]: the raw config (JSON), validated as the CLI would.
 * Protocol (see ipc.ts): { ready, info } once listening; { cmd: 'shutdown' } or a closed IPC
 * channel closes the server and exits 0, so `--cpu-prof` writes its profile; `memory` and `elu`
 * report process.memoryUsage() with V8's spaces and the event-loop utilization so far; `heap`
 * writes a V8 heap snapshot (to `path`, else node's default name) and answers its file name;
 * `allocStart` starts V8's sampling heap profiler (every 256 bytes, objects the young and the old
 * collections freed included) and `allocStop` stops it and answers the bytes allocated by each
 * function (`name file:line`, node's and undici's included) since `allocStart`, largest first.
 */
import v8 from 'node:v8';
import { Session } from 'node:inspector/promises';
import { validateConfig } from '../../dist/config/schema.js';
import { startServer } from '../../dist/lib/server/app.js';
import { tuneRuntime } from '../../dist/lib/server/runtime.js';

if (!process.send) throw new Error('this script is a bench child: start it with child_process.fork()');
const result = validateConfig(JSON.parse(process.argv[2] ?? '{}'));
if ('problems' in result) throw new Error(`bench config invalid: ${JSON.stringify(result.problems)}`);

/** @type {Awaited<ReturnType<typeof startServer>> | undefined} */
let running;
let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(0), 8000).unref();
  try {
    running?.server.closeAllConnections();
    await running?.close();
  } catch (err) {
    console.error('omnigate bench child: close failed:', err);
  }
  process.exit(0);
}
process.on('message', (/** @type {{ cmd: string, seq: number }} */ m) => {
  if (m.cmd === 'shutdown') {
    process.send?.({ seq: m.seq, ok: true });
    void stop();
  } else if (m.cmd === 'elu') {
    // Event-loop utilization so far (idle and active ms): the parent diffs two of them.
    const { idle, active } = performance.eventLoopUtilization();
    process.send?.({ seq: m.seq, ok: true, value: { idle, active } });
  } else if (m.cmd === 'memory') {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 2 ** 20)]));
    process.send?.({ seq: m.seq, ok: true, value: { ...process.memoryUsage(), spaces } });
  } else if (m.cmd === 'heap') {
    // A heap snapshot written now (BENCH_RSS_HEAP): what the old generation holds under load.
    const file = v8.writeHeapSnapshot(/** @type {{ path?: string }} */ (m).path);
    process.send?.({ seq: m.seq, ok: true, value: file });
  } else if (m.cmd === 'allocStart') {
    void allocStart().then(() => process.send?.({ seq: m.seq, ok: true, value: null }));
  } else if (m.cmd === 'allocStop') {
    void allocStop().then((value) => process.send?.({ seq: m.seq, ok: true, value }));
  } else {
    process.send?.({ seq: m.seq, ok: false, error: `unknown command ${m.cmd}` });
  }
});
/** @type {Session | undefined} */
let sampling;
async function allocStart() {
  sampling = new Session();
  sampling.connect();
  await sampling.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
}
/** @typedef {{ callFrame: { url: string, functionName: string, lineNumber: number }, selfSize: number, children: HeapNode[] }} HeapNode */
async function allocStop() {
  const session = /** @type {Session} */ (sampling);
  const { profile } = /** @type {{ profile: { head: HeapNode } }} */ (await session.post('HeapProfiler.stopSampling'));
  session.disconnect();
  sampling = undefined;
  /** @type {Map<string, number>} */
  const byFunction = new Map();
  /** @param {HeapNode} n */
  const walk = (n) => {
    const url = n.callFrame.url;
    const at = url.lastIndexOf('/dist/') >= 0 ? url.slice(url.lastIndexOf('/dist/') + 1) : url.lastIndexOf('/node_modules/') >= 0 ? url.slice(url.lastIndexOf('/node_modules/') + 14) : url;
    const where = `${n.callFrame.functionName || '(anonymous)'} ${at}:${n.callFrame.lineNumber + 1}`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  return [...byFunction].sort((x, y) => y[1] - x[1]);
}
process.on('disconnect', () => void stop());
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());

tuneRuntime(); // as `omnigate serve` does
running = await startServer(result.config, 0);
process.send({ seq: 0, ready: true, info: { port: running.port, pid: process.pid } });
