/**
 * Bench child (peers.ts): ethers v6's FallbackProvider, the verifying client a user would run
 * instead of omnigate, in its own process: this process is the one under test (it sends to the
 * nodes, waits for the quorum and compares), so the bench pins it to the server CPU. Plain
 * JavaScript, as omnigate-server.mjs, so no TypeScript loader sits in the measured process.
 * One JsonRpcProvider per node (batching off: `batchMaxCount: 1`; a static network, so no
 * `eth_chainId` before calls; the per-provider request cache off: `cacheTimeout: -1`, else
 * identical concurrent reads would share one call), weight 1 each.
 * argv[2]: JSON { sets: [{ quorum, urls, chainId }], stallTimeout }: one FallbackProvider per set.
 * Protocol (as ipc.ts): { ready, info: { pid } } once started; `run` { quorum, clients, seconds,
 * address, block, expect } runs `clients` loops calling getBalance(address, block) on the
 * FallbackProvider of that quorum for `seconds` and answers { answers, wrong, errors, firstError,
 * p50, p99, loopBusy } (answers: those that came within the time; wrong: a balance other than
 * `expect`; loopBusy: the event loop's busy share of the run, performance.eventLoopUtilization);
 * with `untilAnswer` (smoke mode), a run with no answer and no error by its end goes on until its
 * first answer or error, 60 s more at most, and also answers `extendedS`, its length then;
 * `shutdown` or a closed IPC channel exits.
 */
import { FallbackProvider, JsonRpcProvider, Network } from 'ethers';

if (!process.send) throw new Error('this script is a bench child: start it with child_process.fork()');
/** @type {{ sets: { quorum: number, urls: string[], chainId: number }[], stallTimeout: number }} */
const { sets, stallTimeout } = JSON.parse(process.argv[2] ?? '{}');
/** @type {Map<number, FallbackProvider>} */
const byQuorum = new Map();
for (const set of sets) {
  const network = Network.from(set.chainId);
  const nodes = set.urls.map((url) => new JsonRpcProvider(url, network, { staticNetwork: network, batchMaxCount: 1, cacheTimeout: -1 }));
  byQuorum.set(set.quorum, new FallbackProvider(nodes.map((provider) => ({ provider, weight: 1, priority: 1, stallTimeout })), network, { quorum: set.quorum, cacheTimeout: -1 }));
}

/** @param {number} quorum */
function fallback(quorum) {
  const f = byQuorum.get(quorum);
  if (!f) throw new Error(`no FallbackProvider of quorum ${quorum}`);
  return f;
}

/**
 * @param {{ quorum: number, clients: number, seconds: number, address: string, block: number, expect: string, untilAnswer?: boolean }} o
 */
async function run(o) {
  const provider = fallback(o.quorum);
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  const until = started + o.seconds * 1000;
  /** @type {number[]} */
  const times = [];
  let wrong = 0;
  let errors = 0;
  /** @type {string | undefined} */
  let firstError;
  /** untilAnswer: the run's length when its first answer came after its end. */
  /** @type {number | undefined} */
  let extendedS;
  /** untilAnswer: nothing came yet (for 60 s more at most): the run goes on, and counts the first answer. */
  const waiting = () => o.untilAnswer === true && times.length === 0 && errors === 0 && performance.now() < until + 60_000;
  const loop = async () => {
    while (performance.now() < until || waiting()) {
      const began = performance.now();
      try {
        const balance = await provider.getBalance(o.address, o.block);
        const ended = performance.now();
        if (ended <= until) times.push(ended - began);
        else if (waiting()) {
          times.push(ended - began);
          extendedS = (ended - started) / 1000;
        }
        if (balance.toString() !== o.expect) wrong += 1;
      } catch (err) {
        errors += 1;
        firstError ??= String(err).slice(0, 300);
      }
    }
  };
  await Promise.all(Array.from({ length: o.clients }, loop));
  const loopBusy = performance.eventLoopUtilization(elu).utilization;
  times.sort((a, b) => a - b);
  const at = (/** @type {number} */ q) => (times.length === 0 ? NaN : times[Math.min(times.length - 1, Math.max(0, Math.ceil(q * times.length) - 1))]);
  return { answers: times.length, wrong, errors, firstError, p50: at(0.5), p99: at(0.99), loopBusy, ...(extendedS === undefined ? {} : { extendedS }) };
}

const stop = () => {
  for (const f of byQuorum.values()) f.destroy(); // (its providers too)
  process.exit(0);
};
process.on('message', (/** @type {any} */ m) => {
  if (m.cmd === 'shutdown') {
    process.send?.({ seq: m.seq, ok: true });
    stop();
  } else if (m.cmd === 'run') {
    run(m).then(
      (value) => process.send?.({ seq: m.seq, ok: true, value }),
      (err) => process.send?.({ seq: m.seq, ok: false, error: String(err?.stack ?? err) }),
    );
  } else {
    process.send?.({ seq: m.seq, ok: false, error: `unknown command ${m.cmd}` });
  }
});
process.on('disconnect', stop);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.send({ seq: 0, ready: true, info: { pid: process.pid } });
