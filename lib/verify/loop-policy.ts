/**
 * The per-request parts of the agreement loop's policy (lib/verify/agreement.ts) that stages and
 * lib/ policies hand to verify(), and how several of them combine. Each policy is a function of
 * the request's question (its chain, calls, confirmability and N: question.ts RequestQuestion;
 * nothing else of the pipeline's context) returning the hooks it sets (or undefined: none). Combined:
 * - `mayHedge`: every policy that has one must allow the hedge (a write policy refusing hedges
 *   once bytes were sent, the hedging budget, …); none of them should take anything for asking:
 *   what a hedge costs is taken in `onHedge`, which runs only when the hedge goes out;
 * - `onOutcome`, `onAbandoned`, `onHedge`, `onDecided`: each one runs, in order;
 * - the others (`hedgeDelayMs`, `hedgeCount`, `eligible`, `recheck`, `lacking`, `waitForEligible`, `timers`): the last
 *   policy that sets one wins.
 */
import type { AgreementPolicy, RequestQuestion } from './question.js';

/** The parts of the agreement loop's policy a caller of verify() may set per request. */
export type LoopPolicy = Partial<
  Pick<AgreementPolicy, 'eligible' | 'recheck' | 'lacking' | 'waitForEligible' | 'hedgeDelayMs' | 'mayHedge' | 'hedgeCount' | 'onAbandoned' | 'onOutcome' | 'onHedge' | 'onDecided' | 'timers'>
>;

export type LoopPolicyOf = (ctx: RequestQuestion) => LoopPolicy | undefined;

const chained = ['onOutcome', 'onAbandoned', 'onHedge', 'onDecided'] as const;

/** `extra`'s hooks merged into `base` (mutated and returned), as the header says. */
export function mergeLoopPolicy<P extends LoopPolicy>(base: P, extra: LoopPolicy | undefined): P {
  if (!extra) return base;
  for (const key of Object.keys(extra) as (keyof LoopPolicy)[]) {
    const hook = extra[key];
    if (hook === undefined) continue;
    const prior = base[key];
    if (prior === undefined) {
      (base as LoopPolicy)[key] = hook as never;
    } else if (key === 'mayHedge') {
      const a = prior as NonNullable<LoopPolicy['mayHedge']>;
      const b = hook as NonNullable<LoopPolicy['mayHedge']>;
      base.mayHedge = (s) => a(s) && b(s);
    } else if ((chained as readonly string[]).includes(key)) {
      const a = prior as (...args: unknown[]) => void;
      const b = hook as (...args: unknown[]) => void;
      (base as Record<string, unknown>)[key] = (...args: unknown[]) => {
        a(...args);
        b(...args);
      };
    } else {
      (base as LoopPolicy)[key] = hook as never;
    }
  }
  return base;
}

/** Several per-request policies as one (merged in order, as mergeLoopPolicy does). */
export function composePolicies(...policies: (LoopPolicyOf | undefined)[]): LoopPolicyOf {
  const list = policies.filter((p): p is LoopPolicyOf => p !== undefined);
  if (list.length === 1) return list[0]!;
  return (ctx) => {
    // A single part is handed on as it is (the caller merges it, never mutates it); a second one
    // is merged into a copy of the first.
    let out: LoopPolicy | undefined;
    let copied = false;
    for (const p of list) {
      const part = p(ctx);
      if (!part) continue;
      if (out === undefined) out = part;
      else {
        if (!copied) out = mergeLoopPolicy({}, out);
        copied = true;
        out = mergeLoopPolicy(out, part);
      }
    }
    return out;
  };
}
