/**
 * The `proof` part of `npm run bench` (BENCH_ONLY key `proof`), also run alone:
 *   node --import tsx test/bench/proof-mode.ts   (BENCH_ROUNDS, default 3; BENCH_PROOF_READS, default 40)
 *
 * One anvil node (test/support/proof-chain.ts's blocks, then 1,100 empty blocks mined) behind
 * three counting providers (test/support/tamper-proxy.ts, in this process, honest), and omnigate
 * pipelines in this process (test/support/gateway.ts), side by side in interleaved rounds of
 * sequential requests (one at a time: latency, not throughput):
 *
 * - a state read, eth_getBalance at block 2: one provider called directly; omnigate in proof mode
 *   at N=3 with the header kept (a final block, the head tracker running) and with the header
 *   agreed per request (no head tracker: nothing is final); omnigate by agreement at N=3; a
 *   cache hit of the proven entry (proof mode) and of the agreed entry (agreement), the same read.
 * - eth_getLogs over 1,000 blocks (0…999, all final) with sparse matches (three logs, in one block)
 *   at N=3: proof mode with the headers kept (the range's headers, proven once by parentHash, in
 *   the book: the one bloom-matching block's receipts and the provider's own eth_getLogs fetched
 *   per request), proof mode with nothing kept (the top header agreed, the 999 below fetched in
 *   one batch, per request), against agreement (three eth_getLogs).
 *
 * Per answer: the median latency (ms), the upstream HTTP requests (a batch is one) and the upstream answer bytes (summed
 * over the three providers), and each against the direct call (state) or agreement (logs).
 * The providers share this process with omnigate and the load: ratios only, taken in one run.
 */
import { fileURLToPath } from 'node:url';
import { stopAllAnvils } from '../support/anvil.js';
import { startGateway, rpc, type Gateway } from '../support/gateway.js';
import { EMITTER_TOPIC, proofChain } from '../support/proof-chain.js';
import { startTamperProxy, type TamperProxy } from '../support/tamper-proxy.js';
import { pollUntil } from './children.js';
import { fmt, fmtInt, median, check, type PartContext, type PartReport } from './parts.js';

const READS_DEFAULT = Number(process.env.BENCH_PROOF_READS ?? 40);

interface Row { ms: number[]; calls: number; bytes: number; answers: number }

/** `reads`: state reads per scenario and round (BENCH_PROOF_READS, else 40; fewer in a smoke run), an eighth as many eth_getLogs (2 at least). */
export async function runProofMode(ctx: Pick<PartContext, 'rounds' | 'log'>, reads?: number): Promise<PartReport> {
  const READS = process.env.BENCH_PROOF_READS ? READS_DEFAULT : (reads ?? READS_DEFAULT);
  const LOGS_READS = Math.max(2, Math.round(READS / 8));
  const chain = await proofChain('cancun');
  const providers: TamperProxy[] = [];
  const gateways: Gateway[] = [];
  try {
    await chain.node.rpc('anvil_mine', ['0x44c']); // 1,100 more blocks: 0…999 final below the head
    for (let i = 0; i < 3; i += 1) providers.push(await startTamperProxy(chain.node.url));
    const rpcs = providers.map((p) => p.url);
    const gateway = async (verify: string, heads: boolean) => {
      const gw = await startGateway({ confirmations: 3, timeouts: { hedgeMs: 0 }, heads: { finalityDepth: 64, intervalMs: 3_600_000 }, chains: { [chain.chainId]: { rpcs, verify } } });
      gateways.push(gw);
      if (heads) {
        gw.rpc.startHeadTracking();
        // Its first round (the only one: intervalMs is an hour, no poll counts in the rounds): done
        // once every provider's finalized block is known (the round's last question to each).
        const providersOf = [...gw.rpc.registry.chains.values()].flatMap((c) => c.upstreams);
        await pollUntil('proof: the head tracker\'s first round', async () => providersOf.every((u) => u.health.finalized !== undefined), { everyMs: 10, deadlineMs: 60_000 });
      }
      return gw;
    };
    const proofKept = await gateway('proof', true);
    const proofCold = await gateway('proof', false);
    const agreement = await gateway('agreement', true);
    const at = `0x${chain.blocks.logs.toString(16)}`;
    const balance = rpc('eth_getBalance', [chain.recipient, at]);
    const logs = rpc('eth_getLogs', [{ address: chain.emitter, topics: [EMITTER_TOPIC], fromBlock: '0x0', toBlock: '0x3e7' }]);
    const direct = async (body: unknown) => {
      const res = await fetch(providers[0]!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, verifiedBy: 'direct', body: await res.text() };
    };
    const via = (gw: Gateway) => async (body: unknown) => {
      // (never from the cache of confirmed answers: each answer asks the providers; the book's header is kept)
      const r = await gw.post(`/rpc/${chain.chainId}`, body, { 'cache-control': 'no-cache' });
      return { status: r.status, verifiedBy: String(r.headers['x-verified-by']), body: r.text };
    };
    const hit = (gw: Gateway) => async (body: unknown) => {
      // (from the cache of confirmed answers: what vouched for the entry, and that it was a hit)
      const r = await gw.post(`/rpc/${chain.chainId}`, body);
      return { status: r.status, verifiedBy: `${String(r.headers['x-verified-by'])} ${String(r.headers['x-cache'])}`, body: r.text };
    };
    const scenarios: [string, (body: unknown) => Promise<{ status: number; verifiedBy: string; body: string }>, unknown, number, string][] = [
      ['state: one provider, direct', direct, balance, READS, 'direct'],
      ['state: one provider, direct eth_getProof (what a proof fetches)', direct, rpc('eth_getProof', [chain.recipient, [], at]), READS, 'direct'],
      ['state: proof N=3, header kept', via(proofKept), balance, READS, 'proof'],
      ['state: proof N=3, header agreed per request', via(proofCold), balance, READS, 'proof'],
      ['state: agreement N=3', via(agreement), balance, READS, 'agreement'],
      // (these two alternate request by request, in one loop: see `paired`)
      ['state: cache hit of a proven entry (N=3)', hit(proofKept), balance, READS, 'proof HIT'],
      ['state: cache hit of an agreed entry (N=3)', hit(agreement), balance, READS, 'agreement HIT'],
      ['logs 1,000 blocks: proof N=3, headers kept', via(proofKept), logs, LOGS_READS, 'proof'],
      ['logs 1,000 blocks: proof N=3, nothing kept (999 headers fetched)', via(proofCold), logs, LOGS_READS, 'proof'],
      ['logs 1,000 blocks: agreement N=3', via(agreement), logs, LOGS_READS, 'agreement'],
    ];
    // Once each before the rounds: the kept header agreed, the answers checked.
    const expected = new Map<unknown, string>();
    for (const [name, send, body, , verifiedBy] of scenarios) {
      const r = await send(body);
      check(r.status === 200 && r.verifiedBy === verifiedBy, `${name}: ${r.status} ${r.verifiedBy} ${r.body.slice(0, 200)}`);
      const result = JSON.stringify(JSON.parse(r.body).result);
      if (expected.has(body)) check(expected.get(body) === result, `${name}: another answer than the other scenarios'`);
      else expected.set(body, result);
    }
    const rows = new Map<string, Row>(scenarios.map(([name]) => [name, { ms: [], calls: 0, bytes: 0, answers: 0 }]));
    const calls = () => providers.reduce((a, p) => a + p.requests, 0);
    const bytes = () => providers.reduce((a, p) => a + p.bytes, 0);
    // The two cache hits alternate request by request (which goes first alternates too): the first
    // scenario after a costly one pays for its garbage, and a difference of a few µs would drown in that.
    const paired = scenarios.filter(([name]) => name.startsWith('state: cache hit'));
    const one = async (name: string, send: (body: unknown) => Promise<{ status: number }>, body: unknown, row: Row) => {
      const t0 = performance.now();
      const r = await send(body);
      row.ms.push(performance.now() - t0);
      check(r.status === 200, `${name}: ${r.status}`);
    };
    for (let round = 1; round <= ctx.rounds; round += 1) {
      for (const [name, send, body, count] of scenarios) {
        if (paired.some(([p]) => p === name)) continue;
        const row = rows.get(name)!;
        const [c0, b0] = [calls(), bytes()];
        for (let i = 0; i < count; i += 1) await one(name, send, body, row);
        row.calls += calls() - c0;
        row.bytes += bytes() - b0;
        row.answers += count;
      }
      const [c0, b0] = [calls(), bytes()];
      for (let i = 0; i < READS; i += 1) {
        for (const [name, send, body] of i % 2 === 0 ? paired : [...paired].reverse()) await one(name, send, body, rows.get(name)!);
      }
      // (a hit asks no upstream: whatever was asked meanwhile is both's)
      for (const [name] of paired) {
        rows.get(name)!.calls += (calls() - c0) / paired.length;
        rows.get(name)!.bytes += (bytes() - b0) / paired.length;
        rows.get(name)!.answers += READS;
      }
      ctx.log(`proof: round ${round}/${ctx.rounds} done`);
    }
    const stat = (name: string) => {
      const row = rows.get(name)!;
      return { p50: median(row.ms), calls: row.calls / row.answers, bytes: row.bytes / row.answers };
    };
    const base = { state: stat('state: one provider, direct'), logs: stat('logs 1,000 blocks: agreement N=3') };
    const lines = ['| Scenario | p50 ms | vs base | upstream HTTP requests / answer | upstream bytes / answer | vs base |', '|---|---|---|---|---|---|'];
    for (const [name] of scenarios) {
      const s = stat(name);
      const b = name.startsWith('logs') ? base.logs : base.state;
      lines.push(`| ${name} | ${fmt(s.p50)} | ${fmt(s.p50 / b.p50)}× | ${fmt(s.calls, 1)} | ${fmtInt(s.bytes)} | ${fmt(s.bytes / b.bytes)}× |`);
    }
    const kept = stat('state: proof N=3, header kept');
    const logsProof = stat('logs 1,000 blocks: proof N=3, headers kept');
    const logsCold = stat('logs 1,000 blocks: proof N=3, nothing kept (999 headers fetched)');
    const provenHit = stat('state: cache hit of a proven entry (N=3)');
    const agreedHit = stat('state: cache hit of an agreed entry (N=3)');
    return {
      table: `Proof mode (${ctx.rounds} interleaved rounds; ${READS} state reads and ${LOGS_READS} eth_getLogs per scenario and round; bases: the direct call for state, agreement for logs)\n\n${lines.join('\n')}`,
      targets: [
        { name: 'proven state read latency vs one provider direct', value: `${fmt(kept.p50 / base.state.p50)}×`, target: '≤ 1.5×', pass: kept.p50 / base.state.p50 <= 1.5 },
        { name: 'proven state read upstream bytes vs one provider direct', value: `${fmt(kept.bytes / base.state.bytes)}×`, target: '≤ 1.2×', pass: kept.bytes / base.state.bytes <= 1.2 },
      ],
      notes: [
        `eth_getLogs over 1,000 blocks, proof (headers kept) vs agreement at N=3: ${fmt(logsProof.calls, 1)} vs ${fmt(base.logs.calls, 1)} requests, ${fmtInt(logsProof.bytes)} vs ${fmtInt(base.logs.bytes)} bytes, p50 ${fmt(logsProof.p50)} vs ${fmt(base.logs.p50)} ms`,
        `eth_getLogs over 1,000 blocks, proof with nothing kept: ${fmt(logsCold.calls, 1)} requests, ${fmtInt(logsCold.bytes)} bytes, p50 ${fmt(logsCold.p50)} ms`,
        `a cache hit of a proven entry vs one of an agreed entry: p50 ${fmtInt(provenHit.p50 * 1000)} vs ${fmtInt(agreedHit.p50 * 1000)} µs per answer (${fmt(provenHit.p50 / agreedHit.p50)}×), ${fmt(provenHit.calls, 1)} vs ${fmt(agreedHit.calls, 1)} upstream requests; against a proven answer asked anew (header kept): ${fmt(kept.p50 / provenHit.p50)}× the latency`,
      ],
    };
  } finally {
    for (const gw of gateways) await gw.close();
    for (const p of providers) await p.close();
    await stopAllAnvils();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = await runProofMode({ rounds: Number(process.env.BENCH_ROUNDS ?? 3), log: (...args) => console.error(...args) });
  console.log(report.table);
  for (const t of report.targets) console.log(`- ${t.name}: ${t.value} (target ${t.target}: ${t.pass ? 'met' : 'NOT met'})`);
  for (const n of report.notes) console.log(`- ${n}`);
}
