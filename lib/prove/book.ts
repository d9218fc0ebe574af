/**
 * The book of agreed headers: those at or below the chain's finalized head, in a small LRU by
 * (chain, number) and (chain, hash); a header not yet final is never kept (it may still be
 * replaced). A header kept at N serves requests of N or less.
 */
import type { BlockJson, ProvenHeader } from '../proof/header.js';
import { chainHead } from '../health/heads.js';
import type { Chain } from '../upstream/registry.js';
import type { Good } from '../verify/question.js';

/** A header N providers agreed on, proven to hash to its fields. */
export interface AgreedHeader {
  readonly header: ProvenHeader;
  /** The block JSON as agreed (without transactions). */
  readonly block: BlockJson;
  /** The agreeing answers (their upstreams are the header's quorum). */
  readonly members: readonly Good[];
  /** The N it was agreed at. */
  readonly required: number;
}

/** A pin: a block number or a block hash. */
export type BlockPin = { number: bigint; hash?: undefined } | { hash: string; number?: undefined };

/** The LRU of final agreed headers. */
export class HeaderBook {
  private readonly entries = new Map<string, AgreedHeader>();
  constructor(readonly capacity = 4096) {}

  get(chain: Chain, pin: BlockPin, required: number): AgreedHeader | undefined {
    const key = keyOf(chain, pin);
    const hit = this.entries.get(key);
    if (hit === undefined || hit.required < required) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit); // most recent last
    return hit;
  }

  /** Keeps a header at or below the chain's finalized head (a header not yet final may still be replaced). */
  keep(chain: Chain, agreed: AgreedHeader): void {
    const finalized = chainHead(chain, 'finalized');
    if (finalized === undefined || agreed.header.number > finalized) return;
    for (const key of [keyOf(chain, { number: agreed.header.number }), keyOf(chain, { hash: agreed.header.hash })]) {
      this.entries.delete(key);
      this.entries.set(key, agreed);
    }
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}

const keyOf = (chain: Chain, pin: BlockPin) => (pin.hash !== undefined ? `${chain.id}:h:${pin.hash.toLowerCase()}` : `${chain.id}:n:${pin.number}`);

