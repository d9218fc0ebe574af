/**
 * Who may vote on a read pinned to a block number (issue 17): only an upstream whose head is known
 * to be at or above the block (lib/upstream/eligibility.ts). An answer from an upstream below it
 * (a lagging node's `null`, `[]` or "header not found") is neither a vote nor the provider's
 * failure: the agreement loop asks others, waits once (at most the chain's `heads.waitMs`) for
 * heads to catch up, asks the waiting ones again, and otherwise ends with -32016 naming the
 * block and the heads seen. Never a confirmed empty answer from upstreams below the block.
 *
 * Only an answer that looks like the block is missing counts as the node's lag: a `null` block,
 * receipt or transaction, an empty list, or an unknown-block error ("header not found"). A real
 * answer from an upstream whose known head is older is a vote: it had the data.
 *
 * It applies once the chain's heads are polled (probes or the head tracker, heads.ts): heads seen
 * only in passing answers are lower bounds, too stale to turn an upstream away. An embedded
 * pipeline before `startHealthChecks()` keeps the earlier rule.
 * Reads pinned by a hash keep today's rule for now (a hash pin cannot be judged by a head).
 */
import type { RpcContext } from '../context.js';
import type { RpcCall } from '../jsonrpc/types.js';
import { answersAsMissing, blockNotAvailable, eligible, eligibleProviders, highestBlock, waitForEligible } from '../upstream/eligibility.js';
import type { Chain } from '../upstream/registry.js';
import type { AgreementPolicy } from './agreement.js';

export function eligibilityPolicy(ctx: RpcContext): Partial<AgreementPolicy> | undefined {
  const { chain, payload } = ctx;
  if (!ctx.confirmable || !chain || !payload) return undefined;
  const calls = payload.calls;
  if (highestBlock(chain, calls) === undefined || !headsPolled(chain)) return undefined;
  const required = ctx.required ?? 1;
  const id = payload.batch ? null : payload.calls[0]!.id;
  const started = performance.now();
  return {
    eligible: (upstream, assessed) => eligible(chain, upstream, calls) || (!payload.batch && !looksMissing(calls[0]!, assessed.body)),
    waitForEligible: () =>
      waitForEligible(chain, calls, required).then((ok) => {
        if (!ok) throw blockNotAvailable(chain, calls, required, performance.now() - started, id);
      }),
  };
}

/**
 * The error of a loop that ended without N agreeing answers on a read pinned to a block that fewer
 * than N providers have: -32016, whatever the lagging ones answered (ineligible votes, or errors
 * such as "header not found" that count as provider trouble). Undefined when the block is not the
 * reason (the usual 502 then says what happened).
 */
export function ineligibleError(ctx: RpcContext, required: number, ranOutOfEligible: boolean): Error | undefined {
  const { chain, payload } = ctx;
  if (!ctx.confirmable || !chain || !payload) return undefined;
  const calls = payload.calls;
  if (highestBlock(chain, calls) === undefined || !headsPolled(chain)) return undefined;
  if (!ranOutOfEligible && eligibleProviders(chain, calls) >= required) return undefined;
  return blockNotAvailable(chain, calls, required, 0, payload.batch ? null : payload.calls[0]!.id);
}

/** Some upstream of the chain was asked for its head (a probe or the head tracker). */
function headsPolled(chain: Chain): boolean {
  return chain.upstreams.some((u) => u.health.headPolledAt > 0);
}

/** The answer of a node that lacks the block: a missing-block null or error, or an empty list. */
function looksMissing(call: RpcCall, body: Buffer): boolean {
  if (body.length > 4096) return false; // a missing-looking answer is short: a real one costs one length check
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return false;
  const a = answer as { result?: unknown; error?: { message?: unknown } };
  return answersAsMissing(call, a) || (Array.isArray(a.result) && a.result.length === 0);
}
