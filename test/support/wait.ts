/**
 * Waits for a condition on the wire (a state in /chains, a metric, a count of upstream calls):
 * polls `ok` every `everyMs` and throws when it has not held within `ms`. The wait is only
 * ever that long when the test is about to fail.
 */
export async function until(ok: () => boolean | Promise<boolean>, ms = 20_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A gate for the tests of one file that may run side by side but not all at once (each starts a
 * cluster of processes: a machine of two cores cannot start fifteen together). `await gate(t)`
 * first in the test: it waits for one of `n` slots, and gives it back in the test's teardown,
 * which ava runs after the teardowns registered later (the test's processes stopped first).
 */
export function slots(n: number): (t: { teardown(fn: () => void): void }) => Promise<void> {
  let free = n;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return async (t) => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    t.teardown(release);
  };
}
