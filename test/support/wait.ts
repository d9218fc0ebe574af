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
