/**
 * Where a V8 `.cpuprofile` of omnigate's pipeline spends its time, by part of the pipeline: each
 * sample goes to the nearest frame of omnigate's own build (`dist/lib`, `dist/middleware`,
 * `dist/config`) on its stack, so that what node does for a stage (the answer's header writing
 * under emit, a Buffer made by the judge) counts to that stage; a sample with no such frame is
 * garbage collection, or node, the harness and idle time. Shares of the profile's whole time.
 *
 *   node --cpu-prof --cpu-prof-dir=DIR --import tsx test/bench/pipeline-cost.ts   (BEFORE_DIST=dist: one build)
 *   node --import tsx test/bench/profile-stages.ts DIR/<the larger .cpuprofile>
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** The parts, by the file of the nearest omnigate frame (first match wins). */
const parts: [string, RegExp][] = [
  ['parse the request (route, body, JSON-RPC, request id)', /^middleware\/parse-jsonrpc|^lib\/jsonrpc\/parse|^lib\/pipeline\/(route|request-id|url)/],
  ['classify', /^middleware\/classify|^lib\/jsonrpc\/(classify|methods|pins)/],
  ['judge and hash the answer', /^lib\/verify\/answers\/(answers|canonical|utf8|keys)|^lib\/jsonrpc\/scan|^lib\/verify\/assess/],
  ['eligibility (the policy, an answer that looks missing)', /^lib\/verify\/(eligibility|answers\/missing|head-waits)/],
  ['agreement machinery (select, fetch, verify, the loop, fan-out, calls, policies, health)', /^middleware\/(verify|select-upstreams|fetch-parallel|canonicalize|prove|cache|run-members)|^lib\/verify\/|^lib\/upstream\/|^lib\/health\//],
  ['write the answer (emit, its headers, end: node\'s writing included)', /^middleware\/emit-headers|^lib\/pipeline\/(answer-done|headers)/],
  ['stage glue (compose, context, the handler, metrics)', /^lib\/pipeline\/(compose|context)|^middleware\/index|^lib\/ops\//],
];

const file = process.argv[2];
if (!file) throw new Error('usage: profile-stages.ts <file.cpuprofile>');
const profile = JSON.parse(await readFile(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const own = /\/dist\/((?:lib|middleware|config)\/.*)$/;
const shares = new Map<string, number>();
let total = 0;
for (const [id, us] of self) {
  total += us;
  let part: string | undefined;
  for (let at: number | undefined = id; at !== undefined && part === undefined; at = parent.get(at)) {
    const m = own.exec(byId.get(at)!.callFrame.url);
    if (m) part = parts.find(([, re]) => re.test(m[1]!))?.[0] ?? `other: ${m[1]}`;
  }
  part ??= byId.get(id)!.callFrame.functionName === '(garbage collector)' ? 'garbage collection' : 'no omnigate frame: node, the harness, idle';
  shares.set(part, (shares.get(part) ?? 0) + us);
}
console.log(`${(total / 1000).toFixed(0)} ms profiled`);
for (const [part, us] of [...shares].sort((a, b) => b[1] - a[1])) console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${part}`);
