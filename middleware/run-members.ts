/**
 * The member stages (classify → select → fetch → canonicalize → verify), run once per call. A
 * single call runs them on the request itself. A batch runs them once per member,
 * concurrently, each on a context of its own (lib/pipeline/batch.ts memberContext) holding the
 * member as a single call: its own classification and N, upstreams, agreement loop, deadline,
 * eligibility and error. Then the emit stage writes the one answer array.
 * A member's error does not stop the batch: it becomes that member's answer. Members the parser
 * refused and notifications are not run.
 * Reads: ctx.payload   Writes: ctx.running and ctx.members (a batch), or what the member stages write (a single call)
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { onAnswerDone } from '../lib/pipeline/answer-done.js';
import { compose, type Middleware } from '../lib/pipeline/compose.js';
import { getContext, initContext, need, type MemberResult, type RpcContext } from '../lib/pipeline/context.js';
import { memberContext, memberPayload } from '../lib/pipeline/batch.js';
import { batchNeutral, classifyCall } from '../lib/jsonrpc/classify.js';
import type { BatchMember } from '../lib/jsonrpc/types.js';
import { resolveTags } from '../lib/verify/eligibility.js';
import { BatchCoalescer } from '../lib/upstream/transport/coalesce.js';
import type { Chain } from '../lib/upstream/registry.js';

export function runMembers(memberStages: readonly Middleware[]): Middleware {
  const run = compose(memberStages);
  return function runMembers(req, res, next) {
    const ctx = getContext(req);
    const payload = need(ctx, 'payload', 'runMembers');
    if (!payload.batch || !payload.members) return run(req, res, next);
    const members = payload.members;
    const results: MemberResult[] = new Array(members.length);
    const responses: EventEmitter[] = [];
    const callCount = members.filter((m) => m.kind === 'call').length;
    let pending = callCount;
    // Members' reads to one upstream in one turn go as one upstream batch (unless the chain says batchUpstream: false).
    const coalescer = callCount > 1 && ctx.chain?.batchUpstream !== false ? new BatchCoalescer() : undefined;
    const confirmablePeer = payload.calls.some((c) => batchNeutral.has(c.method)) && ctx.chain ? hasConfirmableCall(members, ctx.chain) : false;
    const settle = () => {
      if (--pending > 0) return;
      ctx.members = results;
      next();
    };
    // The batch's answer written or its client gone: every member's fetch stage stops (its 'close').
    if (callCount > 0) onAnswerDone(req, res, () => { for (const r of responses) r.emit('close'); });
    // Members without a run first: a run may end synchronously (a refusal by classify), and the
    // last one to end writes the answer.
    for (const [i, member] of members.entries()) {
      if (member.kind === 'notification') results[i] = { kind: 'notification' };
      else if (member.kind === 'invalid') results[i] = { kind: 'error', error: member.error, raw: member.raw };
    }
    // (what each member's calls have cost so far, should the batch settle before its answer)
    const running: RpcContext[] = [];
    ctx.running = running;
    for (const [i, member] of members.entries()) {
      if (member.kind === 'call') {
        const mctx = memberContext(ctx, i, memberPayload(member.call, member.raw));
        if (confirmablePeer) mctx.batchConfirmable = true;
        if (coalescer) mctx.coalescer = coalescer;
        // The member's request and response: the batch's, with a context and events of their own.
        const mreq = Object.create(req) as IncomingMessage;
        initContext(mreq, mctx.requestId, mctx.log);
        running.push(Object.assign(getContext(mreq), mctx));
        const mres = Object.create(res) as ServerResponse;
        EventEmitter.call(mres);
        responses.push(mres);
        run(mreq, mres, (err?: unknown) => {
          const done = getContext(mreq);
          results[i] = err ? { kind: 'error', error: err instanceof Error ? err : new Error(String(err)), ctx: done, raw: member.raw } : { kind: 'answer', ctx: done };
          settle();
        });
      }
    }
    if (callCount === 0) {
      pending = 1;
      settle();
    }
  };
}

/**
 * Whether a call of the batch other than a chain constant is confirmable on its own, as its
 * classify stage will find it: with `earliest`, `safe` and `finalized` resolved to a number.
 */
function hasConfirmableCall(members: readonly BatchMember[], chain: Chain): boolean {
  return members.some((member) => {
    if (member.kind !== 'call' || batchNeutral.has(member.call.method)) return false;
    try {
      if (classifyCall(member.call, chain.extraConfirmable).confirmable) return true;
      const resolved = resolveTags(chain, memberPayload(member.call, member.raw));
      return resolved !== undefined && classifyCall(resolved.payload.calls[0]!, chain.extraConfirmable).confirmable;
    } catch {
      return false; // refused by its own classify stage
    }
  });
}
