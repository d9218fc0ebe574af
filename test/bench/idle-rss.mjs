/**
 * The idle RSS of a fresh omnigate server and what it loaded: `startServer` from a build (the
 * bench's config: two chains, five upstreams that are never called, upstreams on `client`), a
 * full GC 1.5 s after it listens, then process.memoryUsage() and the CommonJS modules loaded, by
 * package. Two builds can be compared by running it on each, alternated.
 *
 *   node --expose-gc test/bench/idle-rss.mjs [DIST_DIR] [undici|node]
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = pathToFileURL(resolve(process.argv[2] ?? 'dist')).href;
const client = process.argv[3] ?? 'undici';
const { validateConfig } = await import(`${dist}/config/schema.js`);
const { startServer } = await import(`${dist}/lib/server/app.js`);
const { tuneRuntime } = await import(`${dist}/lib/server/runtime.js`);
tuneRuntime();
// Port 9 (discard) on distinct hosts: five providers, never reached (no probe round is awaited).
const five = [1, 2, 3, 4, 5].map((i) => `http://127.0.0.${i}:9/`);
const result = validateConfig({
  port: 0,
  refreshInterval: 86_400,
  heads: { intervalMs: 3_600_000 },
  timeouts: { hedgeMs: 0 },
  mergeRequests: false,
  cache: { memoryBytes: 0 },
  chains: { 1: { rpcs: ['http://127.0.0.1:9/'] }, 2: { rpcs: five, confirmations: 3 } },
  upstreams: { client },
});
if ('problems' in result) throw new Error(JSON.stringify(result.problems));
const running = await startServer(result.config, 0);
await new Promise((r) => setTimeout(r, 1_500));
globalThis.gc?.();
const m = process.memoryUsage();
const files = Object.keys(createRequire(import.meta.url).cache);
const packages = {};
for (const f of files) {
  const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1] ?? '(other)';
  packages[name] = (packages[name] ?? 0) + 1;
}
const mb = (n) => Number((n / 2 ** 20).toFixed(1));
console.log(JSON.stringify({ dist: process.argv[2] ?? 'dist', client, rssMB: mb(m.rss), heapUsedMB: mb(m.heapUsed), heapTotalMB: mb(m.heapTotal), externalMB: mb(m.external), cjsModules: files.length, packages }));
running.server.closeAllConnections();
await running.close();
process.exit(0);
