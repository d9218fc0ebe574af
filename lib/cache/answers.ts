/**
 * The cache of confirmed answers as the pipeline uses it: the key of a request's question, the
 * answer of a hit (a verdict as the agreement would have given it, under the request's own id),
 * and what may be remembered after an agreement (lib/cache/final.ts). Two levels: this process's
 * memory (memory.ts), then Redis when configured (redis.ts), shared by every worker and replica;
 * a Redis hit is kept in memory too. An entry confirmed by fewer than the request's N is not an
 * answer but votes already cast: the lookup hands them over for a top-up (the agreement asks only
 * for the missing votes, and its answer then replaces the entry). A proven answer (lib/prove) is
 * kept as proven: its hit names the header it was proven against, and an entry of a smaller N is
 * no votes to top up. Hits, misses and top-ups are counted per chain for /metrics.
 */
import { questionKey } from '../jsonrpc/question-key.js';
import { replySliceBytes, withReplyId, withReplyIdSliced } from '../jsonrpc/reply.js';
import type { RpcId, RpcPayload } from '../jsonrpc/types.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import { Cancellation } from '../upstream/transport/contract.js';
import { assessBody, confirmedBody } from '../verify/answers/answers.js';
import type { IgnoredFields } from '../verify/answers/compared-fields.js';
import { judgedOffThread, judgeOffThread, type Judgement, type JudgedResponse } from '../verify/answers/off-thread.js';
import type { Verdict } from '../verify/question.js';
import { chainHead } from '../health/heads.js';
import { finalBlockOf } from './final.js';
import type { CacheEntry, MemoryCache } from './memory.js';
import type { ProvenBy, RedisStore } from './redis.js';

export interface Hit {
  /**
   * The entry's answer and quorum under the request's id: the answer itself when the entry was
   * confirmed by at least the request's N, else (`topUp`) the votes to count in a top-up.
   */
  verdict: Verdict;
  /** When the answer was confirmed (ms since the epoch). */
  at: number;
  /**
   * Confirmed by fewer than the request's N: votes to top up, not an answer. (A proven entry's
   * quorum did not vote on the answer: it is no votes to top up, and the request is a miss.)
   */
  topUp: boolean;
  /** A proven entry: the header it was proven against (X-Verified-By: proof, X-Block-Hash). */
  proof: ProvenBy | undefined;
  /**
   * A long entry (over `replySliceBytes`): the verdict's members still carry the entry's own
   * bytes, to be put under this id by `underId`, a slice at a time; undefined: they are already.
   */
  pendingId: RpcId | undefined;
}

/**
 * `hit` with its answer under the request's id, to `done`: at once for a short entry; for a long
 * one (tens of megabytes of logs kept in Redis or a large memory cache) a slice at a time, so the
 * event loop serves other clients between slices (reply.ts withReplyIdSliced). undefined: the
 * entry's bytes are not one answer with one id (never the case for an answer that voted).
 */
export function underId(hit: Hit, done: (hit: Hit | undefined) => void): void {
  if (hit.pendingId === undefined) return done(hit);
  const stored = hit.verdict.members[0]!;
  withReplyIdSliced(stored.body, hit.pendingId, (body) =>
    done(body === undefined ? undefined : { verdict: verdictOf(hit.verdict.hash, hit.verdict.members.map((m) => m.upstream), body), at: hit.at, topUp: hit.topUp, proof: hit.proof, pendingId: undefined }),
  );
}

/** No provider key to look for in an entry's bytes: they were checked when they voted. */
const noSecrets = { all: [], own: [] };

/**
 * A hit's votes for a top-up, to `done`, each member carrying the fields the entry's bytes hold
 * outside the comparison (an ignored field, or one outside the schema: canonical.ts). The bytes
 * a top-up returns are the entry's, and such a field in them was vouched for by the entry's
 * quorum only: it stays only if every new voter sent it alike too (confirmedBody), as in any
 * other agreement. The bytes are judged as an upstream's answer is (a large one in the worker
 * thread, on a copy: the entry keeps its own). undefined, a plain miss: they do not make the
 * entry's vote under the chain's ignored fields as configured now (another replica's config).
 */
export function priorOf(hit: Hit, payload: RpcPayload, ignored: IgnoredFields | undefined, timeoutMs: number, done: (prior: Verdict | undefined) => void): void {
  const verdict = hit.verdict;
  const body = verdict.members[0]!.body;
  const settle = (a: Judgement): void => {
    if (!a.ok || a.hash !== verdict.hash) return done(undefined);
    const extras = a.ignored;
    done(extras === undefined ? verdict : { ...verdict, members: verdict.members.map((m) => ({ ...m, ignored: extras })) });
  };
  if (!judgedOffThread(body)) return settle(assessBody(body, payload, ignored));
  judgeOffThread(Buffer.from(body), payload, ignored, false, noSecrets, new Cancellation(), timeoutMs).then((response) => {
    const judged = (response as Partial<JudgedResponse>).judged;
    // (a thread that could not start left the copy unjudged)
    if (judged === undefined) return settle(assessBody(response.body, payload, ignored));
    settle(judged.judgement ?? { ok: false, reason: judged.unchecked });
  }, () => done(undefined));
}

export class AnswerCache {
  /** Lookups answered from the cache, and lookups that were not, by chain id. */
  readonly hits = new Map<string, number>();
  readonly misses = new Map<string, number>();
  /** Confirmed answers kept, by chain id. */
  readonly stored = new Map<string, number>();
  /** Entries confirmed by fewer than N brought to N with only the missing votes, by chain id. */
  readonly toppedUp = new Map<string, number>();
  /** Entries dropped because an answer asked to top them up differed, by chain id. */
  readonly disputed = new Map<string, number>();
  /** Each chain's upstreams by the id Redis knows them by (RedisStore.upstreamId). */
  private readonly byId = new WeakMap<Chain, Map<string, Upstream>>();

  constructor(
    readonly memory: MemoryCache | undefined,
    readonly shared?: RedisStore,
  ) {}

  /** The key of the request's question on `chain`; undefined: it is not looked up nor kept. */
  keyOf(chain: Chain, payload: RpcPayload): string | undefined {
    const question = questionKey(payload);
    return question === undefined ? undefined : `${chain.id}\n${question}`;
  }

  /**
   * The entry in this process's memory for a request of N `required` under id `id`: its answer
   * when confirmed by at least N, else its votes to top up.
   */
  lookup(key: string, required: number, id: RpcId): Hit | undefined {
    const entry = this.memory?.get(key);
    return entry === undefined ? undefined : hitOf(entry, required, id);
  }

  /**
   * The same in Redis (undefined at once without it; a miss when it is down, slow or the value is
   * refused). An entry about a block above this process's finalized one is a miss too: another
   * replica kept it by its own view of finality (another version, another config), and this one
   * serves only what is final by its own providers' word, as it keeps only that (remember).
   */
  async lookupShared(chain: Chain, key: string, required: number, id: RpcId): Promise<Hit | undefined> {
    if (!this.shared) return undefined;
    const stored = await this.shared.get(key);
    if (stored === undefined) return undefined;
    const finalized = chainHead(chain, 'finalized');
    if (finalized === undefined || stored.block > finalized) return undefined;
    const upstreams = this.upstreamsById(chain, this.shared);
    const quorum: Upstream[] = [];
    for (const id of stored.quorum) {
      const u = upstreams.get(id);
      // One vote per provider as this process knows them: another replica (another config) may
      // have counted two upstreams that are one provider here as two.
      if (u !== undefined && !quorum.some((q) => q.provider === u.provider)) quorum.push(u);
    }
    if (quorum.length === 0) return undefined;
    // A vote of an upstream this process does not have does not count (its headers could not
    // name it), nor a second vote of one of its providers: the entry is confirmed here by the others only.
    const confirmations = Math.min(stored.confirmations, quorum.length);
    const entry: CacheEntry = { body: stored.body, hash: stored.hash, quorum, confirmations, at: stored.at, block: stored.block, proof: stored.proof };
    this.memory?.set(key, entry);
    return hitOf(entry, required, id);
  }

  /** Counts a lookup's outcome (a bypass, Cache-Control: no-cache, counts as a miss; so does a top-up). */
  counted(chain: Chain, hit: boolean): void {
    count(hit ? this.hits : this.misses, chain.id);
  }

  /** Counts an entry brought to N by a top-up (remember() keeps the new one). */
  countTopUp(chain: Chain): void {
    count(this.toppedUp, chain.id);
  }

  /**
   * Drops the entry of `key` from memory and Redis: an answer asked to top it up differed from
   * it. Until N providers confirm an answer again, the question is asked of the upstreams.
   * Counted once per entry in memory (the requests of one merged run each drop it).
   */
  forget(chain: Chain, key: string): void {
    const dropped = this.memory === undefined || this.memory.delete(key);
    this.shared?.delete(key);
    if (dropped) count(this.disputed, chain.id);
  }

  /**
   * Keeps a confirmed verdict of N `required` when its block is final (final.ts). A proven one
   * (`proof`: the verdict's members are the proven provider, then the header's quorum of N) is
   * kept only when the header it was proven against is the final block its answer is about.
   */
  remember(chain: Chain, key: string, payload: RpcPayload, verdict: Verdict, required: number, proof?: ProvenBy): void {
    if (verdict.unconfirmed || verdict.members.length < required) return;
    const body = confirmedBody(verdict.members, payload);
    const block = finalBlockOf(chain, payload.calls[0]!, body);
    if (block === undefined || (proof !== undefined && proof.blockNumber !== block)) return;
    const quorum = verdict.members.map((m) => m.upstream);
    const at = Date.now();
    this.memory?.set(key, { body, hash: verdict.hash, quorum, confirmations: required, at, block, proof });
    const shared = this.shared;
    shared?.set(key, { body, hash: verdict.hash, quorum: quorum.map((u) => shared.upstreamId(u.url)), confirmations: required, at, block, proof });
    count(this.stored, chain.id);
  }

  async close(): Promise<void> {
    await this.shared?.close();
  }

  private upstreamsById(chain: Chain, shared: RedisStore): Map<string, Upstream> {
    let map = this.byId.get(chain);
    if (!map) this.byId.set(chain, (map = new Map(chain.upstreams.map((u) => [shared.upstreamId(u.url), u]))));
    return map;
  }
}

/**
 * The entry under the request's id: its answer when it serves a request of N `required`, else its
 * votes, to top up. A long entry is put under the id later, a slice at a time (`underId`).
 */
function hitOf(entry: CacheEntry, required: number, id: RpcId): Hit | undefined {
  const long = entry.body.length > replySliceBytes;
  const body = long ? entry.body : withReplyId(entry.body, id);
  if (body === undefined) return undefined;
  return { verdict: verdictOf(entry.hash, entry.quorum, body), at: entry.at, topUp: entry.confirmations < required, proof: entry.proof, pendingId: long ? id : undefined };
}

/** A verdict of `quorum`, every member with these bytes. */
function verdictOf(hash: string, quorum: readonly Upstream[], body: Buffer): Verdict {
  return { hash, members: quorum.map((upstream) => ({ upstream, ok: true as const, body, hash, ms: 0 })) };
}

function count(map: Map<string, number>, chain: string): void {
  map.set(chain, (map.get(chain) ?? 0) + 1);
}
