/**
 * Process-wide V8 settings for a process that serves omnigate, applied by `omnigate serve` and
 * `omnigate chainlist` before they listen. An application that mounts the middleware in its
 * own process can start node with the same flag instead.
 *
 * `--no-allocation-site-pretenuring`: V8 watches which object literals' objects survive a
 * young-generation GC and, past a threshold, allocates that literal's objects straight in the
 * old generation. A request's objects live a few ms, yet under load V8 pretenured some of
 * them, and anything a pretenured object points to survives the young GC too: part of every
 * request went to the old generation, scavenges took longer and the old generation needed full
 * GCs every few seconds (seen with --trace-gc in `npm run bench`, N=1 at 50 connections; figures
 * in test/bench/README.md). Turning it off left the old generation flat.
 */
import v8 from 'node:v8';

export const runtimeFlags = ['--no-allocation-site-pretenuring'] as const;

/** Applies runtimeFlags, except those the process was started with in either form. */
export function tuneRuntime(execArgv: readonly string[] = process.execArgv): string[] {
  const applied: string[] = [];
  for (const flag of runtimeFlags) {
    const name = flag.replace(/^--no-/, '').replace(/^--/, '');
    if (execArgv.some((arg) => arg.replace(/_/g, '-').replace(/^--no-/, '--').startsWith(`--${name}`))) continue;
    v8.setFlagsFromString(flag);
    applied.push(flag);
  }
  return applied;
}
