/**
 * The memory and time of judging one answer of N numbers written `1.0` (a list: the judging
 * thread's judgeBody, or assessBody, the event loop's), in a process of its own, for a build:
 *
 *   node test/bench/inexact-memory.mjs <dist dir> <N> [judgeBody|assessBody]
 *
 * Prints the process's peak RSS (resourceUsage().maxRSS) before the answer was built and after it was judged.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist = 'dist', count = '15000000', which = 'judgeBody'] = process.argv.slice(2);
const n = Number(count);
const load = (file) => import(pathToFileURL(resolve(dist, file)).href);
const { judgeBody } = await load('lib/verify/answers/sliced.js');
const { assessBody } = await load('lib/verify/answers/answers.js');
const rssBeforeMb = Math.round(process.resourceUsage().maxRSS / 1024);
const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${'1.0,'.repeat(n - 1)}1.0]}`);
const t = performance.now();
const v = (which === 'judgeBody' ? judgeBody : assessBody)(body, { batch: false, calls: [{ id: 1, method: 'eth_getBalance', params: [] }] });
const ms = Math.round(performance.now() - t);
console.log(JSON.stringify({ which, n, bytes: body.length, ms, rssBeforeMb, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), verdict: v.ok ? 'ok' : v.reason.slice(0, 40) }));
