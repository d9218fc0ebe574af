/**
 * The `cache` part of `npm run bench` (BENCH_ONLY key `cache`): a repeated confirmed N=3 read
 * answered from the cache of confirmed answers, against one of the fake nodes called directly,
 * side by side in interleaved rounds.
 *
 * - The nodes: three fake nodes (upstream-server.ts, one process each, pinned with the load
 *   generator), NODE_DELAY_MS of service time; their `finalized` block is PINNED_BLOCK, so the
 *   read there is final and kept once N=3 confirmed it.
 * - omnigate (omnigate-server.mjs, pinned to the server CPU): the defaults (cache and merged
 *   requests on), hedgeMs 0; the read `eth_getBalance(address, PINNED_BLOCK)` on
 *   `/confirmations/3/rpc/1`, confirmed once before the rounds (X-Cache: MISS, then HIT).
 * - Closed loop: CLIENTS autocannon connections against omnigate and against the first node;
 *   target: omnigate's answers/s ÷ the node's ≥ 1.0 (verified and at least as fast as asking one
 *   provider). Open loop at `rate` req/s: the hit path's added p50 (omnigate's p50 − the node's).
 */
import { runLoad, type LoadResult } from './load.js';
import { PINNED_BLOCK, requests } from './payloads.js';
import { check, cpuMs, fmt, fmtInt, loadAverage, median, startNodes, startOmnigate, stopChildren, type PartContext, type PartReport } from './parts.js';
import { pollUntil } from './children.js';

const NODE_DELAY_MS = 1;
const CLIENTS = 32;
const CHAIN = 1;

export async function runCache(ctx: PartContext, rate: number): Promise<PartReport> {
  const nodes = await startNodes(ctx, 'cache-node', [0, 1, 2].map(() => ({ chainId: CHAIN, delayMs: NODE_DELAY_MS })));
  const config = {
    port: 0,
    refreshInterval: 86_400,
    heads: { intervalMs: 3_600_000 },
    timeouts: { hedgeMs: 0 },
    chains: { [String(CHAIN)]: { rpcs: nodes.urls } },
  };
  // BENCH_PROFILE=cache: this omnigate under --cpu-prof (the hits' CPU by function).
  const omni = await startOmnigate(ctx, 'cache-omnigate', config, 3, ctx.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.profileDir}`] : []);
  try {
    const body = JSON.stringify(requests.getBalance);
    const url = `${omni.base}/confirmations/3/rpc/${CHAIN}`;
    const direct = nodes.urls[0]!;
    // The head tracker's first round gives the finalized block; then the read is confirmed once and kept.
    await pollUntil(`cache: the read at ${PINNED_BLOCK} answered from the cache`, async () => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      check(res.status === 200, `cache: omnigate answered ${res.status} ${await res.text()}`);
      return res.headers.get('x-cache') === 'HIT';
    });
    await nodes.reset();

    const closed = async (target: string): Promise<LoadResult> => runLoad({ url: target, body, connections: CLIENTS, seconds: ctx.seconds, warmupSeconds: ctx.warmup, untilAnswer: ctx.untilAnswer });
    const open = async (target: string): Promise<LoadResult> => runLoad({ url: target, body, connections: 50, seconds: ctx.seconds, warmupSeconds: ctx.warmup, rate, untilAnswer: ctx.untilAnswer });
    const rows = { omni: [] as LoadResult[], node: [] as LoadResult[], omniOpen: [] as LoadResult[], nodeOpen: [] as LoadResult[] };
    let omniCpuMs = 0;
    let omniAnswers = 0;
    /** Upstream calls made while omnigate was measured (0 expected: every answer a hit). */
    let upstreamCalls = 0;
    const loadBefore = await loadAverage();
    for (let round = 1; round <= ctx.rounds; round += 1) {
      rows.node.push(await closed(direct));
      const cpu0 = await cpuMs(omni.child.pid);
      const calls0 = await nodes.calls('eth_getBalance');
      const r = await closed(url);
      omniCpuMs += (await cpuMs(omni.child.pid)) - cpu0;
      upstreamCalls += (await nodes.calls('eth_getBalance')) - calls0;
      omniAnswers += r.ok;
      check(r.non2xx === 0 && r.errors === 0, `cache: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      rows.omni.push(r);
      rows.nodeOpen.push(await open(direct));
      rows.omniOpen.push(await open(url));
      ctx.log(`cache: round ${round}: omnigate hits ${fmtInt(r.rps)}/s against the node ${fmtInt(rows.node.at(-1)!.rps)}/s; p50 at ${fmtInt(rate)} req/s ${fmt(rows.omniOpen.at(-1)!.p50)} against ${fmt(rows.nodeOpen.at(-1)!.p50)} ms`);
    }
    const ratio = rows.omni.map((r, i) => r.rps / rows.node[i]!.rps);
    const added = rows.omniOpen.map((r, i) => r.p50 - rows.nodeOpen[i]!.p50);
    const med = (rs: LoadResult[]) => [...rs].sort((a, b) => a.rps - b.rps)[(rs.length - 1) >> 1]!;
    const list = (all: number[]) => (all.length > 1 ? `; rounds ${all.map((x) => fmt(x)).join(', ')}` : '');
    return {
      table: [
        `| Cache: a confirmed N=3 read answered from the cache, against one fake node of ${NODE_DELAY_MS} ms called directly | Req/s | p50 ms | p99 ms |`,
        '|---|---:|---:|---:|',
        `| the node directly, ${CLIENTS} connections | ${fmtInt(med(rows.node).rps)} | ${fmt(med(rows.node).p50)} | ${fmt(med(rows.node).p99)} |`,
        `| omnigate, cache hits at N=3, ${CLIENTS} connections | ${fmtInt(med(rows.omni).rps)} | ${fmt(med(rows.omni).p50)} | ${fmt(med(rows.omni).p99)} |`,
        `| the node directly, ${fmtInt(rate)} req/s offered | ${fmtInt(med(rows.nodeOpen).rps)} | ${fmt(med(rows.nodeOpen).p50)} | ${fmt(med(rows.nodeOpen).p99)} |`,
        `| omnigate, cache hits at N=3, ${fmtInt(rate)} req/s offered | ${fmtInt(med(rows.omniOpen).rps)} | ${fmt(med(rows.omniOpen).p50)} | ${fmt(med(rows.omniOpen).p99)} |`,
      ].join('\n'),
      targets: [
        { name: `omnigate cache hits (confirmed N=3) answers/s ÷ one node called directly (${CLIENTS} connections)`, value: `${fmt(median(ratio))}×${list(ratio)}`, target: '≥ 1.00×', pass: median(ratio) >= 1 },
        { name: `   the hit path's added p50 over the node at ${fmtInt(rate)} req/s`, value: `${fmt(median(added))} ms${list(added)}`, target: 'reported', pass: true },
      ],
      notes: [
        `- cache: three fake nodes of ${NODE_DELAY_MS} ms whose finalized block is ${PINNED_BLOCK}; omnigate with the defaults (cache and merged requests on), eth_getBalance at ${PINNED_BLOCK} on /confirmations/3/rpc/${CHAIN}, confirmed once before the rounds; ${ctx.rounds} interleaved round${ctx.rounds > 1 ? 's' : ''} (the node closed loop, omnigate closed loop, the node open loop, omnigate open loop); ${fmtInt(upstreamCalls)} upstream calls while omnigate was measured (closed loop; 0 expected: every answer a hit); omnigate CPU ${fmt(omniAnswers > 0 ? (omniCpuMs * 1000) / omniAnswers : NaN, 0)} µs per hit; load average ${fmt(loadBefore)} before, ${fmt(await loadAverage())} after`,
      ],
    };
  } finally {
    await stopChildren(ctx, [omni.child, ...nodes.children]);
  }
}
