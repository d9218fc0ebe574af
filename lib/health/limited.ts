/**
 * Bounded concurrency for the rounds of calls that health work makes (probes, head polls): at
 * most `limit` upstreams asked at once (`limits.probeConcurrency`). Pure apart from the calls.
 */

/** Upstreams probed at once when no limit is given (`limits.probeConcurrency`'s default). */
export const defaultProbeConcurrency = 32;

/** `fn` over `items`, at most `limit` at a time; results in the order of `items`. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
