/**
 * Coalescing of one client batch's member calls (so that a batch costs one upstream request, not one per member): the calls its members' agreement
 * loops make to the same upstream in the same tick (before the microtask queue drains: runMembers
 * starts every member synchronously, so their first calls) go as ONE upstream JSON-RPC batch, and the answer array is split back by id, each member getting the raw bytes of its own
 * answer object (numbers untouched) as if it had been a single call. A thin layer over
 * `upstream.transport.send`: one coalescer per client batch (middleware/run-members.ts), used by the
 * fetch stage for reads only (writes are never coalesced).
 *
 * What each member's loop sees does not change: one outcome per call of its own, a response or a
 * failure. A failed shared call fails every member in it with the same error; an answer that is
 * not a well-formed array of answer objects, that lacks a member's id, repeats an id or holds an
 * id nobody asked fails every member in it (their loops ask other upstreams, as for a single call
 * that failed). An upstream that answers a batch with a single object (providers that refuse
 * batches answer one error) gets each member's call again alone, and no batches for a while.
 *
 * - Members with the same id go in separate upstream batches (the split could not tell them apart).
 * - A call that is alone in its turn (a hedge, an escalation) is sent alone, as a single call.
 * - A member whose loop aborts its call stops waiting at once; the shared call is aborted only when
 *   every member in it has aborted.
 * - Limits: each member's slice must fit the member's `maxBytes`; the shared call may hold the sum
 *   of its members' limits, one nesting level more, and is charged to the budget account of its
 *   first member (the members' accounts all close together, when the batch's answer is done).
 */
import type { RpcCall } from '../../jsonrpc/types.js';
import { arrayElements, scanJson } from '../../jsonrpc/scan.js';
import type { Upstream } from '../registry.js';
import { atCap } from '../select.js';
import { Cancellation, defaultMaxDepth, UpstreamCallError, type UpstreamRequest, type UpstreamResponse } from './contract.js';

/** How long an upstream that refused a batch gets single calls only. */
export const noBatchMs = 10 * 60_000;

/** Upstreams that answered a batch with one object, and until when they get single calls. */
const refusesBatches = new WeakMap<Upstream, number>();

/** Whether calls to this upstream may be coalesced: HTTP(S) (a WebSocket multiplexes already), not refusing batches. */
export function batchesTo(upstream: Upstream, now = Date.now()): boolean {
  if (/^wss?:/i.test(upstream.url)) return false;
  const until = refusesBatches.get(upstream);
  if (until === undefined) return true;
  if (now < until) return false;
  refusesBatches.delete(upstream);
  return true;
}

interface Pending {
  readonly upstream: Upstream;
  readonly request: UpstreamRequest;
  readonly call: RpcCall;
  readonly key: string;
  settled: boolean;
  resolve(response: UpstreamResponse): void;
  reject(err: Error): void;
  /** Called when the member's signal aborts (removed when the member settles). */
  onAbort: () => void;
  /** The shared call it went in, once sent. */
  group?: Group;
}

interface Group {
  readonly members: Pending[];
  live: number;
  readonly cancellation: Cancellation;
}

const aborted = () => new UpstreamCallError('aborted', 'call aborted');

/** A JSON-RPC id → a key that tells `1` from `"1"`. */
function idKey(id: unknown): string {
  return typeof id === 'string' ? `s${id}` : typeof id === 'number' ? `n${id}` : `x${JSON.stringify(id ?? null)}`;
}

/** One client batch's coalescer. */
export class BatchCoalescer {
  private queues = new Map<Upstream, Pending[]>();
  private scheduled = false;
  /** The upstream the batch's first N=1 read asked first. */
  private first: Upstream | undefined;

  /**
   * The batch's N=1 reads ask the same upstream first (the first one's pick, while it is not at its
   * cap), so that they go as one upstream batch: `balanced` then spreads batches, not their members.
   * `ordered` is reordered in place.
   */
  sameFirst(ordered: Upstream[], now: number): void {
    if (ordered.length < 2) return;
    if (this.first === undefined) {
      this.first = ordered[0];
      return;
    }
    const at = ordered.indexOf(this.first);
    if (at <= 0 || atCap(this.first, now)) return;
    ordered.splice(at, 1);
    ordered.unshift(this.first);
  }

  /** Sends `request` (a member's single call `call`) to `upstream`, with the same turn's other members' calls to it. */
  send(upstream: Upstream, request: UpstreamRequest, call: RpcCall): Promise<UpstreamResponse> {
    if (!batchesTo(upstream)) return upstream.transport.send(request);
    if (request.signal.aborted) return Promise.reject(aborted());
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const p: Pending = {
        upstream,
        request,
        call,
        key: idKey(call.id),
        settled: false,
        resolve: (response) => {
          if (p.settled) return;
          p.settled = true;
          request.signal.removeEventListener('abort', p.onAbort);
          resolve(response);
        },
        reject: (err) => {
          if (p.settled) return;
          p.settled = true;
          request.signal.removeEventListener('abort', p.onAbort);
          reject(err);
        },
        onAbort: () => {
          if (p.settled) return;
          p.reject(aborted());
          const group = p.group;
          if (group && --group.live === 0) group.cancellation.abort(request.signal.reason);
        },
      };
      request.signal.addEventListener('abort', p.onAbort, { once: true });
      let queue = this.queues.get(upstream);
      if (!queue) this.queues.set(upstream, (queue = []));
      queue.push(p);
      if (!this.scheduled) {
        // A microtask, not setImmediate: the members' first calls are all made by then, and a
        // check-phase wait cost N=1 batches half their throughput under load (batch-cost.ts).
        this.scheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const queues = this.queues;
    this.queues = new Map();
    for (const [upstream, queue] of queues) {
      // Members with the same id in separate batches: each goes in the first one without its id.
      const groups: { keys: Set<string>; members: Pending[] }[] = [];
      for (const p of queue) {
        if (p.settled) continue; // aborted while queued
        let g = groups.find((x) => !x.keys.has(p.key));
        if (!g) groups.push((g = { keys: new Set(), members: [] }));
        g.keys.add(p.key);
        g.members.push(p);
      }
      for (const g of groups) {
        if (g.members.length === 1) alone(g.members[0]!);
        else sendBatch(upstream, g.members);
      }
    }
  }
}

/** A member's call sent as the single call it is. */
function alone(p: Pending): void {
  p.upstream.transport.send(p.request).then(p.resolve, p.reject);
}

function sendBatch(upstream: Upstream, members: Pending[]): void {
  const group: Group = { members, live: members.length, cancellation: new Cancellation() };
  for (const p of members) p.group = group;
  const first = members[0]!.request;
  const parts: Buffer[] = [Buffer.from('[')];
  for (const [i, p] of members.entries()) {
    if (i > 0) parts.push(Buffer.from(','));
    parts.push(p.request.payload.raw);
  }
  parts.push(Buffer.from(']'));
  const request: UpstreamRequest = {
    ...first,
    payload: { calls: members.map((p) => p.call), batch: true, raw: Buffer.concat(parts) },
    signal: group.cancellation,
    maxBytes: members.reduce((sum, p) => sum + p.request.maxBytes, 0),
    maxDepth: (first.maxDepth ?? defaultMaxDepth) + 1,
  };
  upstream.transport.send(request).then(
    ({ body }) => {
      const split = splitAnswer(body, members);
      if (split === 'single') {
        // A provider that refuses batches: these calls again alone, and single calls for a while.
        refusesBatches.set(upstream, Date.now() + noBatchMs);
        for (const p of members) if (!p.settled) alone(p);
        return;
      }
      for (const [i, p] of members.entries()) {
        const slice = typeof split === 'string' ? split : split[i]!;
        if (typeof slice === 'string') p.reject(new UpstreamCallError('transport', `upstream batch answer: ${slice}`));
        else if (slice.length > p.request.maxBytes) p.reject(new UpstreamCallError('too-large', `answer larger than ${p.request.maxBytes} bytes`));
        else p.resolve({ body: slice });
      }
    },
    (err: unknown) => {
      const error = err instanceof Error ? err : new UpstreamCallError('transport', String(err));
      for (const p of members) p.reject(error);
    },
  );
}

/**
 * An upstream batch answer split by id: each member's answer object (its bytes), or why the answer
 * fails every member (a string), or 'single' when the upstream answered one object (no batches).
 */
export function splitAnswer(body: Buffer, members: readonly { readonly call: RpcCall }[]): Buffer[] | string | 'single' {
  const scan = scanJson(body, { ids: true });
  let last = body.length - 1;
  while (last >= 0 && (body[last] === 0x20 || body[last] === 0x0a || body[last] === 0x0d || body[last] === 0x09)) last--;
  if (scan.kind === 'object' && !scan.truncated && body[last] === 0x7d) return 'single';
  if (scan.kind !== 'array' || scan.truncated || body[last] !== 0x5d) return 'not a JSON array';
  const spans = arrayElements(body);
  // The id of each element: the last `id` key of an object element (as JSON.parse reads it).
  const count = spans.length / 2;
  const idOf: (string | undefined)[] = new Array(count).fill(undefined);
  for (const span of scan.ids) if (span.member < count) idOf[span.member] = span.text;
  const asked = new Map<string, number>();
  for (const [i, m] of members.entries()) asked.set(idKey(m.call.id), i);
  const out: (Buffer | undefined)[] = new Array(members.length).fill(undefined);
  for (let e = 0; e < count; e++) {
    const start = spans[2 * e]!;
    if (body[start] !== 0x7b) return `element ${e} is not an answer object`;
    const text = idOf[e];
    let id: unknown;
    try {
      id = text === undefined ? undefined : JSON.parse(text);
    } catch {
      return `element ${e} has an id that is not JSON`;
    }
    const at = asked.get(idKey(id));
    if (at === undefined) return `id ${text ?? 'none'} was not asked`;
    if (out[at] !== undefined) return `id ${text} answered more than once`;
    out[at] = body.subarray(start, spans[2 * e + 1]!);
  }
  const missing = out.findIndex((b) => b === undefined);
  if (missing !== -1) return `no answer for id ${JSON.stringify(members[missing]!.call.id)}`;
  return out as Buffer[];
}
