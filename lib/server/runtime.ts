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
 *
 * `--heap-growing-percent=100`: after a full GC, V8 lets the old generation grow to a multiple
 * of what survived before the next one, a factor it picks between 1.1 and 4 by how fast its
 * collections are; a gateway's collections are fast, so it took nearly 4. With 500 connections in
 * flight the old generation then grew past 100 MB on a few tens of MB of live objects. A fixed
 * factor of 2 keeps the next full GC within twice the live heap; the CPU per answer did not
 * measurably change (test/bench/README.md, "RSS at 500 connections: the heap's growing factor").
 */
import v8 from 'node:v8';

export const runtimeFlags = ['--no-allocation-site-pretenuring', '--heap-growing-percent=100'] as const;

/** Applies runtimeFlags, except those the process was started with in either form. */
export function tuneRuntime(execArgv: readonly string[] = process.execArgv): string[] {
  const applied: string[] = [];
  for (const flag of runtimeFlags) {
    const name = nameOf(flag);
    if (execArgv.some((arg) => nameOf(arg) === name)) continue;
    v8.setFlagsFromString(flag);
    applied.push(flag);
  }
  return applied;
}

/** A V8 flag's name, however it is written: `--no-x_y=1` and `--x-y` are both `x-y`. */
const nameOf = (arg: string) => arg.replace(/^--(no-|no_)?/, '').split('=')[0]!.replace(/_/g, '-');
