/**
 * The cache of confirmed answers as the pipeline uses it: the key of a request's question, the
 * answer of a hit (a verdict as the agreement would have given it, under the request's own id),
 * and what may be remembered after an agreement (lib/cache/final.ts). Hits and misses are
 * counted per chain for /metrics.
 */
import { questionKey } from '../jsonrpc/question-key.js';
import { withReplyId } from '../jsonrpc/reply.js';
import type { RpcId, RpcPayload } from '../jsonrpc/types.js';
import type { Chain } from '../upstream/registry.js';
import { confirmedBody } from '../verify/answers.js';
import type { Verdict } from '../verify/question.js';
import { finalBlockOf } from './final.js';
import type { MemoryCache } from './memory.js';

export interface Hit {
  verdict: Verdict;
  /** When the answer was confirmed (ms since the epoch). */
  at: number;
}

export class AnswerCache {
  /** Lookups answered from the cache, and lookups that were not, by chain id. */
  readonly hits = new Map<string, number>();
  readonly misses = new Map<string, number>();
  /** Confirmed answers kept, by chain id. */
  readonly stored = new Map<string, number>();

  constructor(readonly memory: MemoryCache) {}

  /** The key of the request's question on `chain`; undefined: it is not looked up nor kept. */
  keyOf(chain: Chain, payload: RpcPayload): string | undefined {
    const question = questionKey(payload);
    return question === undefined ? undefined : `${chain.id}\n${question}`;
  }

  /** The cached answer for a request of N `required` under id `id`: an entry confirmed by at least N. */
  lookup(chain: Chain, key: string, required: number, id: RpcId): Hit | undefined {
    const entry = this.memory.get(key);
    const body = entry !== undefined && entry.confirmations >= required ? withReplyId(entry.body, id) : undefined;
    if (entry === undefined || body === undefined) {
      count(this.misses, chain.id);
      return undefined;
    }
    count(this.hits, chain.id);
    return {
      verdict: { hash: entry.hash, members: entry.quorum.map((upstream) => ({ upstream, ok: true as const, body, hash: entry.hash, ms: 0 })) },
      at: entry.at,
    };
  }

  /** A lookup the client bypassed (Cache-Control: no-cache): counted as a miss. */
  bypassed(chain: Chain): void {
    count(this.misses, chain.id);
  }

  /** Keeps a confirmed verdict of N `required` when its block is final (final.ts). */
  remember(chain: Chain, key: string, payload: RpcPayload, verdict: Verdict, required: number): void {
    if (verdict.unconfirmed || verdict.members.length < required) return;
    const body = confirmedBody(verdict.members, payload);
    const block = finalBlockOf(chain, payload.calls[0]!, body);
    if (block === undefined) return;
    this.memory.set(key, { body, hash: verdict.hash, quorum: verdict.members.map((m) => m.upstream), confirmations: required, at: Date.now(), block });
    count(this.stored, chain.id);
  }
}

function count(map: Map<string, number>, chain: string): void {
  map.set(chain, (map.get(chain) ?? 0) + 1);
}
