/**
 * The book of agreed headers: those at or below the chain's finalized head, in a small LRU by
 * (chain, number) and (chain, hash); a header not yet final is never kept (it may still be
 * replaced). A header kept at N serves requests of N or less.
 *
 * With the cache of confirmed answers (lib/cache), a final agreed header is kept there too, as
 * the confirmed answer of `eth_getBlockByNumber(n, false)` and of `eth_getBlockByHash(h, false)`
 * (its quorum, when, N; in Redis authenticated as every entry): a second worker, a replica on the
 * same Redis or a restarted process reads it instead of agreeing again. The LRU is read first,
 * then the cache's memory, then Redis (its bounded wait: down or slow is a miss). A header read
 * from the cache is used only once its hash is recomputed from its fields (and it is the block
 * asked): a value that fails is refused, and the header is agreed on anew. An entry of a smaller
 * N is votes already cast: the agreement asks only for the missing ones (a top-up).
 */
import { checkHeader, type BlockJson, type ProvenHeader } from '../proof/header.js';
import type { AnswerCache } from '../cache/answers.js';
import { chainHead } from '../health/heads.js';
import type { RpcPayload } from '../jsonrpc/types.js';
import type { Logger } from '../log.js';
import type { Chain } from '../upstream/registry.js';
import type { Good, Verdict } from '../verify/question.js';

/** A header N providers agreed on, proven to hash to its fields. */
export interface AgreedHeader {
  readonly header: ProvenHeader;
  /** The block JSON as agreed (without transactions). */
  readonly block: BlockJson;
  /** The agreeing answers (their upstreams are the header's quorum). */
  readonly members: readonly Good[];
  /** The N it was agreed at. */
  readonly required: number;
  /**
   * Proven by its link to an agreed header (keepLinked), not agreed itself: its header fields are
   * vouched for, its block JSON beyond them (`size`, `uncles`, `withdrawals`…) is one provider's.
   */
  readonly linked?: true;
}

/** A pin: a block number or a block hash. */
export type BlockPin = { number: bigint; hash?: undefined } | { hash: string; number?: undefined };

/** What the cache levels hold of a header: agreed at the request's N, or votes of a smaller N to top up. */
export type Found = { agreed: AgreedHeader; prior: undefined } | { agreed: undefined; prior: Verdict };

/** The payload of a header's question: `eth_getBlockByNumber(n, false)` or `eth_getBlockByHash(h, false)`, id 1. */
export function headerPayload(pin: BlockPin): RpcPayload {
  const method = pin.hash !== undefined ? 'eth_getBlockByHash' : 'eth_getBlockByNumber';
  const params = [pin.hash !== undefined ? pin.hash.toLowerCase() : `0x${pin.number.toString(16)}`, false];
  return { calls: [{ id: 1, method, params }], batch: false, raw: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })) };
}

/** The LRU of final agreed headers, over the cache of confirmed answers when there is one. */
export class HeaderBook {
  private readonly entries = new Map<string, AgreedHeader>();

  constructor(
    readonly capacity = 4096,
    readonly cache?: AnswerCache,
  ) {}

  get(chain: Chain, pin: BlockPin, required: number): AgreedHeader | undefined {
    const key = keyOf(chain, pin);
    const hit = this.entries.get(key);
    if (hit === undefined || hit.required < required) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit); // most recent last
    return hit;
  }

  /**
   * The header at `pin` in the cache levels (memory, then Redis), rechecked: agreed at N
   * `required` or more (then kept in the LRU too), or the votes of a smaller N; undefined when
   * neither holds it (or Redis is down or slow); 'refused' when the value failed its check.
   */
  async fromCache(chain: Chain, pin: BlockPin, required: number, log: Logger): Promise<Found | 'refused' | undefined> {
    const cache = this.cache;
    if (cache === undefined) return undefined;
    const payload = headerPayload(pin);
    const key = cache.keyOf(chain, payload);
    if (key === undefined) return undefined;
    let hit = cache.lookup(key, required, 1);
    if ((hit === undefined || hit.topUp) && cache.shared) {
      const shared = await cache.lookupShared(chain, key, required, 1).catch(() => undefined);
      if (shared !== undefined && (hit === undefined || !shared.topUp || shared.verdict.members.length > hit.verdict.members.length)) hit = shared;
    }
    if (hit === undefined || hit.proof !== undefined) return undefined;
    let header: ProvenHeader;
    let block: BlockJson;
    try {
      block = (JSON.parse(hit.verdict.members[0]!.body.toString('utf8')) as { result: BlockJson }).result;
      header = checkHeader(block, pin.hash);
      if (pin.number !== undefined && header.number !== pin.number) throw new Error('the header is of another block');
    } catch (err) {
      log.warn({ chain: chain.id, block: pin.hash ?? `0x${pin.number!.toString(16)}`, reason: (err as Error).message }, 'proof mode: a cached header failed its check: refused, agreed on anew');
      return 'refused';
    }
    if (hit.topUp) return { agreed: undefined, prior: hit.verdict };
    const agreed: AgreedHeader = { header, block, members: hit.verdict.members, required };
    this.remember(chain, agreed, pin.number !== undefined);
    return { agreed, prior: undefined };
  }

  /**
   * Keeps a header just agreed on at `pin`, at or below the chain's finalized head (a header not
   * yet final may still be replaced): in the LRU, and in the cache levels, under its hash, and
   * under its number only when it was agreed by its number. A header agreed by its hash may be of
   * a block a reorg dropped (nodes keep those, by hash): it is not the chain's block at its number.
   */
  keep(chain: Chain, agreed: AgreedHeader, pin: BlockPin): void {
    const byNumber = pin.number !== undefined;
    if (!this.remember(chain, agreed, byNumber) || this.cache === undefined) return;
    const verdict: Verdict = { hash: agreed.members[0]!.hash, members: [...agreed.members] };
    const questions: BlockPin[] = byNumber ? [{ number: agreed.header.number }, { hash: agreed.header.hash }] : [{ hash: agreed.header.hash }];
    for (const at of questions) {
      const payload = headerPayload(at);
      const key = this.cache.keyOf(chain, payload);
      if (key !== undefined) this.cache.remember(chain, key, payload, verdict, agreed.required);
    }
  }

  /**
   * Keeps a final header proven by its link to an agreed one (parentHash, a range below an agreed
   * top), in the LRU only: it serves proofs, vouched for by that top's quorum, but it is not an
   * answer N providers gave to `eth_getBlockByNumber(n, false)` (its block JSON is one provider's
   * beyond the hashed fields, and the quorum's answers are the top's), so it is never kept in the
   * cache of confirmed answers.
   */
  keepLinked(chain: Chain, agreed: AgreedHeader): void {
    this.remember(chain, agreed, true);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Keeps a final header in the LRU, by its hash, and by its number when `byNumber` (keep); whether it is final. */
  private remember(chain: Chain, agreed: AgreedHeader, byNumber: boolean): boolean {
    const finalized = chainHead(chain, 'finalized');
    if (finalized === undefined || agreed.header.number > finalized) return false;
    const hashKey = keyOf(chain, { hash: agreed.header.hash });
    for (const key of byNumber ? [keyOf(chain, { number: agreed.header.number }), hashKey] : [hashKey]) {
      this.entries.delete(key);
      this.entries.set(key, agreed);
    }
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return true;
  }
}

const keyOf = (chain: Chain, pin: BlockPin) => (pin.hash !== undefined ? `${chain.id}:h:${pin.hash.toLowerCase()}` : `${chain.id}:n:${pin.number}`);
