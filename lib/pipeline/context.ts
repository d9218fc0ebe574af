/**
 * The per-request state the pipeline stages share. Each stage reads what earlier stages wrote
 * and writes its own fields; a field missing when a stage needs it means the stages were
 * assembled out of order, which is a programming error (InternalError), never recovered from.
 */
import type { IncomingMessage } from 'node:http';
import { InternalError } from '../errors.js';
import type { RpcPayload } from '../jsonrpc/types.js';
import type { BatchCoalescer } from '../upstream/transport/coalesce.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import type { Logger } from '../log.js';
import type { Grant } from '../access/keyring.js';
import type { Charge } from '../access/budget.js';
import type { Judging } from '../verify/assess.js';
import type { CallPlan } from '../verify/calls.js';
import type { AgreementRun, Verdict } from '../verify/question.js';

export interface RpcContext {
  /** parse */
  requestId: string;
  log: Logger;
  chain?: Chain;
  /** The `<n>` of the path, when given. */
  confirmationsOverride?: number;
  payload?: RpcPayload;
  /** The omnigate Via entries the request came with (lib/upstream/loop.ts), passed on upstream. */
  via?: string;
  /** A batch member whose batch holds a confirmable call (runMembers): chain constants follow it. */
  batchConfirmable?: boolean;
  /**
   * authorize (middleware/authorize.ts, with `access:` only): who the request is, its key's label,
   * tier and rights; a later stage (a budget) charges it here. Absent: access is off.
   */
  access?: Grant;
  /**
   * budget (middleware/budget.ts, for a grant with a budget only): the credits reserved for the
   * request, then, once settled, what it cost and what the key has left (its headers).
   */
  budget?: Charge;
  /** A batch member (runMembers): its batch's coalescer of upstream calls (lib/upstream/transport/coalesce.ts); absent: calls go alone. */
  coalescer?: BatchCoalescer;
  /** classify */
  confirmable?: boolean;
  required?: number;
  /**
   * The calls need a block above every upstream's head: relayed unconfirmed (N=1), and an
   * unknown-block error is the node's answer, not its trouble.
   */
  beyondHeads?: boolean;
  /** select */
  candidates?: Upstream[];
  /** fetch: how the request's upstream calls are made, as data (verify builds the calls: lib/verify/calls.ts) */
  fetch?: CallPlan;
  /** canonicalize: what an answer is judged by, as data (verify builds the judge: lib/verify/assess.ts) */
  judging?: Judging;
  /** parse: the request came by the finalized route (lib/verify/finalized-route.ts) */
  finalizedRoute?: boolean;
  /** classify: an answer known without asking the upstreams (the finalized route's eth_blockNumber) */
  known?: Verdict;
  /**
   * cache (middleware/cache.ts): the cached answer it was served from, or that the lookup missed.
   * A miss may bring `prior`: an entry confirmed by fewer than N, whose votes the agreement counts
   * (a top-up); verify sets `disputed` when an answer of the run differed from it.
   */
  cached?: { hit: true; verdict: Verdict; at: number } | CacheMiss;
  /** verify: the agreement loop of this request, and its verdict */
  agreement?: AgreementRun;
  verdict?: Verdict;
  /**
   * prove (middleware/prove.ts): set on an answer proven against an agreed header: how it was
   * verified, the agreed header's hash and number. Absent: the answer is N agreeing answers (or
   * unconfirmed).
   */
  proof?: ProofInfo;
  /** A write (lib/verify/write.ts): the upstreams it went to, named by X-Checked-URLS instead of the verdict's members. */
  writtenTo?: readonly Upstream[];
  /** error handler: the error code the request ended with (for logs and metrics) */
  errorCode?: string;
  /**
   * A batch, after its members ran (middleware/run-members.ts): one entry per member, in order.
   * Each answered or failed member has its own context, which the member stages filled.
   */
  members?: MemberResult[];
  /**
   * A batch while its members run (middleware/run-members.ts): each call member's context, in
   * order, filled as its stages run: what a settle before the answer (a client gone) counts.
   */
  running?: RpcContext[];
}

/** What vouches for a proven answer (ctx.proof). */
export interface ProofInfo {
  readonly verifiedBy: 'proof' | 'agreement';
  /** The hash of the block header N providers agreed on, which the answer was proven against. */
  readonly headerHash: string;
  readonly blockNumber: bigint;
}

/** A request the cache looked up and could not answer alone. */
export interface CacheMiss {
  hit: false;
  /** The votes of an entry confirmed by fewer than the request's N, under the request's id (undefined: none). */
  prior: Verdict | undefined;
  /** An answer of the run differed from `prior`'s (verify): the entry is no longer served. */
  disputed: boolean;
}

/** How one batch member ended: answered (its ctx holds the verdict), refused, or a notification. */
export type MemberResult =
  | { kind: 'answer'; ctx: RpcContext }
  | { kind: 'error'; error: Error; ctx?: RpcContext; raw: Buffer }
  | { kind: 'notification' };

/**
 * The context rides on the request under a symbol of ours: no name clash with a host app's own
 * fields, and cheaper than a WeakMap, whose entries the GC must trace as ephemerons.
 */
const kContext = Symbol('omnigate.context');
type WithContext = IncomingMessage & { [kContext]?: RpcContext };

export function initContext(req: IncomingMessage, requestId: string, log: Logger): RpcContext {
  const ctx = newContext(requestId, log);
  (req as WithContext)[kContext] = ctx;
  return ctx;
}

/**
 * A context with every field present from the start (undefined until its stage writes it): one
 * shape for every request, so that each stage's reads and writes of it stay monomorphic instead of
 * moving the object through a new hidden class per field written.
 */
export function newContext(requestId: string, log: Logger): RpcContext {
  return {
    requestId,
    log,
    chain: undefined,
    confirmationsOverride: undefined,
    payload: undefined,
    via: undefined,
    batchConfirmable: undefined,
    access: undefined,
    budget: undefined,
    coalescer: undefined,
    confirmable: undefined,
    required: undefined,
    beyondHeads: undefined,
    candidates: undefined,
    fetch: undefined,
    judging: undefined,
    finalizedRoute: undefined,
    known: undefined,
    cached: undefined,
    agreement: undefined,
    verdict: undefined,
    writtenTo: undefined,
    errorCode: undefined,
    members: undefined,
    running: undefined,
    proof: undefined,
  };
}

/** The context, if the pipeline has started on this request (the error handler uses it). */
export function findContext(req: IncomingMessage): RpcContext | undefined {
  return (req as WithContext)[kContext];
}

export function getContext(req: IncomingMessage): RpcContext {
  const ctx = (req as WithContext)[kContext];
  if (!ctx) throw new InternalError('pipeline stage ran before parse: no request context');
  return ctx;
}

/** Reads a field an earlier stage must have written. */
export function need<K extends keyof RpcContext>(ctx: RpcContext, key: K, stage: string): NonNullable<RpcContext[K]> {
  const value = ctx[key];
  if (value === undefined || value === null) throw new InternalError(`${stage} needs ctx.${String(key)}: stages are out of order`);
  return value as NonNullable<RpcContext[K]>;
}

/** Whether a request's answer came by topping up the cache entry it found: the agreement counted the entry's votes and agreed with them. */
export function toppedUp(miss: CacheMiss, verdict: Verdict | undefined): boolean {
  return miss.prior !== undefined && verdict !== undefined && verdict.hash === miss.prior.hash;
}

/** The answer a request got: from the cache, known without asking (finalized route), or from its agreement (undefined: none yet, or an error). */
export function answerOf(ctx: RpcContext): Verdict | undefined {
  const cached = ctx.cached;
  return cached !== undefined && cached.hit ? cached.verdict : (ctx.known ?? ctx.verdict);
}
