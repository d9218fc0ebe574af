/**
 * How long `omnigate serve --no-indexer` takes to listen, two builds alternated: from the spawn of
 * `node <dir>/dist/lib/cli/index.js serve …` to its `omnigate listening` line (a config of one
 * chain whose upstream is never reached, probes and head polls a minute apart), then SIGKILL to its
 * process group. Extra arguments go to `serve` (`--workers 2`: the cluster listens once both workers do).
 *
 *   node test/bench/cli-start.mjs ROUNDS BEFORE_DIR AFTER_DIR [serve arguments…]
 *
 * (each DIR a checkout with its dist/ built). Prints each round's ms, the medians and after ÷ before.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [rounds, before, after, ...extra] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'omnigate-cli-start-'));
const config = join(dir, 'omnigate.yaml');
writeFileSync(config, 'port: 0\nrefreshInterval: 60\nheads: { intervalMs: 60000 }\nchains:\n  1337:\n    rpcs:\n      - http://127.0.0.1:9/rpc\n');

const once = (root) => new Promise((resolve, reject) => {
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'dist/lib/cli/index.js'), 'serve', '--config', config, '--no-indexer', ...extra], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let ms;
  child.stdout.on('data', (d) => {
    out += d;
    if (ms !== undefined || !out.includes('"omnigate listening"')) return;
    ms = performance.now() - started;
    process.kill(-child.pid, 'SIGKILL');
  });
  child.once('exit', (code) => (ms === undefined ? reject(new Error(`exited ${code} before listening: ${out}`)) : resolve(ms)));
});

const ms = { before: [], after: [] };
for (let i = 0; i < Number(rounds); i++) {
  ms.before.push(await once(before));
  ms.after.push(await once(after));
}
rmSync(dir, { recursive: true, force: true });
const median = (x) => x.slice().sort((a, b) => a - b)[x.length >> 1];
for (const k of ['before', 'after']) console.log(`${k}: ${ms[k].map((x) => x.toFixed(0)).join(' ')} ms, median ${median(ms[k]).toFixed(0)}`);
console.log(`after ÷ before (medians): ${(median(ms.after) / median(ms.before)).toFixed(2)}`);
