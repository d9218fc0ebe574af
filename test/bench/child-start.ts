/**
 * How long the smoke bench's first servers take to be ready, and the CPU each used to get there:
 *   node --import tsx test/bench/child-start.ts [--plain] [--indexer]
 * starts at once what run.ts starts at once (six fake upstreams, the proxy, four fan-outs, three
 * omnigates from dist/), plus with --indexer the indexer (PostgreSQL, 2,000 events) beside them as
 * the smoke run used to; --plain first bundles the TypeScript children to plain JavaScript as a
 * smoke run does (children.ts prebuildChildren), else they run under tsx as in a full run. Prints,
 * per child, the seconds from fork to `ready` and the CPU seconds it had used by then.
 */
import { readFile } from 'node:fs/promises';
import { prebuildChildren, startChild, stopAll, type Child } from './children.js';

const plain = process.argv.includes('--plain');
const indexer = process.argv.includes('--indexer');
const t0 = performance.now();
if (plain) await prebuildChildren(['./upstream-server.ts', './proxy-server.ts', './fanout-server.ts', './indexer-server.ts']);
const started: Child<any>[] = [];
const nowhere = 'http://127.0.0.1:9/'; // (never called: only the start is timed)
const omnigate = JSON.stringify({ port: 0, refreshInterval: 86_400, heads: { intervalMs: 3_600_000 }, chains: { '1': { rpcs: [nowhere] } } });
const time = async (name: string, script: string, args: string[], plainJs = false): Promise<string> => {
  const t = performance.now();
  const c = await startChild(name, script, args, { plainJs });
  started.push(c);
  const text = await readFile(`/proc/${c.pid}/stat`, 'utf8');
  const stat = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const cpuS = (Number(stat[11]) + Number(stat[12])) / 100;
  return `| ${name} | ${((performance.now() - t) / 1000).toFixed(2)} | ${cpuS.toFixed(2)} |`;
};
try {
  const jobs = [
    ...Array.from({ length: 6 }, (_, i) => time(`upstream ${i}`, './upstream-server.ts', [JSON.stringify([{ chainId: 1, delayMs: 2 }])])),
    time('proxy', './proxy-server.ts', [nowhere]),
    ...Array.from({ length: 4 }, (_, i) => time(`fan-out ${i}`, './fanout-server.ts', [JSON.stringify([nowhere]), ...(i % 2 ? ['undici'] : [])])),
    ...Array.from({ length: 3 }, (_, i) => time(`omnigate ${i}`, './omnigate-server.mjs', [omnigate], true)),
    ...(indexer ? [time('indexer', './indexer-server.ts', [JSON.stringify({ events: 2000 })])] : []),
  ];
  console.log(`${plain ? 'plain JavaScript' : 'tsx'} children${indexer ? ', the indexer beside them' : ''}\n\n| child | ready after s | CPU s by then |\n|---|---:|---:|`);
  for (const j of jobs) console.log(await j);
  console.log(`\nall ready after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
} finally {
  await stopAll(started);
}
