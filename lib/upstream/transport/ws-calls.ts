/**
 * The calls in flight on a WebSocket upstream (lib/upstream/transport/ws.ts), multiplexed by id:
 * each call goes out under an id of the transport's own (clients' ids collide across requests),
 * and each answer is matched back to its call by those ids and gets the client's ids spliced in
 * place of ours; every other byte is returned as the upstream sent it.
 */
import type WebSocket from 'ws';
import { scanJson, type JsonScan } from '../../jsonrpc/scan.js';
import type { RpcId } from '../../jsonrpc/types.js';
import type { BudgetAccount } from '../budget.js';
import { overBudget, tooDeep, UpstreamCallError, type UpstreamResponse } from './contract.js';

/** Our ids are 1, 2, 3…: the number an id's JSON text is, if it is one of that form. */
function transportId(text: string | undefined): number | undefined {
  return text !== undefined && /^[1-9]\d{0,14}$/.test(text) ? Number(text) : undefined;
}

/** The upstream's text as a reason quotes it: scrubbed of provider keys, then cut (a key cut in two first would keep its first half). */
function preview(text: string | undefined, scrub: (text: string) => string): string {
  if (text === undefined) return 'an object or array';
  const t = scrub(text).replace(/\s+/g, ' ');
  return JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}…` : t);
}

/** `: message` of a small error answer with id null (parsed only when small and shallow). */
function nullIdMessage(buf: Buffer, scan: JsonScan, scrub: (text: string) => string): string {
  if (buf.length > 64 * 1024 || scan.depth > 16) return '';
  try {
    const message = (JSON.parse(buf.toString('utf8')) as { error?: { message?: unknown } }).error?.message;
    return message === undefined ? '' : `: ${scrub(String(message)).slice(0, 200)}`;
  } catch {
    return '';
  }
}

export interface PendingCall {
  /** The connection the call was written on (its close fails this call, not those of a newer one). */
  ws: WebSocket;
  /** Transport id → client id, for every call of this request. */
  ids: Map<number, RpcId>;
  maxDepth: number;
  budget: BudgetAccount | undefined;
  resolve(response: UpstreamResponse): void;
  reject(err: Error): void;
}

export class WsCalls {
  private nextId = 1;
  private readonly pending = new Map<number, PendingCall>();

  /** `scrub`: hides provider keys in what a reason quotes of a message (ws.ts WsTransportOptions). */
  constructor(private readonly scrub: (text: string) => string = (text) => text) {}

  /** Whether no call is in flight. */
  get idle(): boolean {
    return this.pending.size === 0;
  }

  /** Our id for each call (in order) → its client's id; the calls are awaited once add()ed. */
  idsFor(calls: readonly { id: RpcId }[]): Map<number, RpcId> {
    const ids = new Map<number, RpcId>();
    for (const call of calls) ids.set(this.nextId++, call.id);
    return ids;
  }

  add(call: PendingCall): void {
    for (const id of call.ids.keys()) this.pending.set(id, call);
  }

  /** The call's ids no longer awaited (its caller gave up, or its write failed). */
  remove(ids: Map<number, RpcId>): void {
    for (const id of ids.keys()) this.pending.delete(id);
  }

  /** Fails every call in flight, or only those written on `on`. */
  failAll(err: Error, on?: WebSocket): void {
    const all = new Set<PendingCall>();
    for (const [id, p] of this.pending) {
      if (on !== undefined && p.ws !== on) continue;
      all.add(p);
      this.pending.delete(id);
    }
    for (const p of all) p.reject(err);
  }

  /**
   * An answer arrives: the first id in it that names a call in flight decides whose it is. The
   * ids are located in the raw bytes (lib/jsonrpc/scan.ts) and the client's ids are spliced in
   * place of ours; every other byte is returned as the upstream sent it (a parse and
   * re-serialization would rewrite numbers such as 12345678901234567890, 1.0 or 1e400, and
   * overflowed the stack on deeply nested messages). With no call in flight a message can be
   * no one's answer: it is dropped unread, so that an upstream sending messages nobody asked
   * for (tens of MB each) costs no scan of them on the event loop every other request shares.
   */
  onMessage(data: WebSocket.RawData): void {
    if (this.pending.size === 0) return;
    const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const scan = scanJson(buf, { ids: true });
    let request: PendingCall | undefined;
    for (const span of scan.ids) {
      const id = transportId(span.text);
      request = id === undefined ? undefined : this.pending.get(id);
      if (request) break;
    }
    if (!request) return this.unmatched(buf, scan);
    this.remove(request.ids);
    this.deliver(request, buf, scan);
  }

  private deliver(request: PendingCall, buf: Buffer, scan: JsonScan): void {
    if (scan.depth > request.maxDepth) return request.reject(tooDeep(request.maxDepth));
    const seen = new Set<number>();
    for (const span of scan.ids) {
      const id = transportId(span.text);
      if (id === undefined || !request.ids.has(id)) {
        return request.reject(new UpstreamCallError('transport', `answer with id ${preview(span.text, this.scrub)}, which was not asked`));
      }
      if (seen.has(span.member)) return request.reject(new UpstreamCallError('transport', 'an answer object with "id" twice'));
      seen.add(span.member);
    }
    if (request.budget && !request.budget.take(buf.length)) return request.reject(overBudget(request.budget, buf.length));
    const parts: Buffer[] = [];
    let at = 0;
    for (const span of scan.ids) {
      parts.push(buf.subarray(at, span.start), Buffer.from(JSON.stringify(request.ids.get(transportId(span.text)!))));
      at = span.end;
    }
    parts.push(buf.subarray(at));
    request.resolve({ body: parts.length === 1 ? buf : Buffer.concat(parts) });
  }

  /**
   * A message that names no call in flight. Ignored: a message without an id (a notification)
   * and an answer under an id of ours whose call was given up on (aborted, timed out). Anything
   * else (an id we never sent: a string, null, another number; a message that is not a JSON-RPC
   * object) says the upstream is not answering our calls, and it cannot say which call it
   * answers: every call in flight on this connection fails at once (each is asked elsewhere)
   * rather than wait for its timeout.
   */
  private unmatched(buf: Buffer, scan: JsonScan): void {
    const first = scan.ids[0];
    if (!first) {
      if (scan.kind === 'object' && !scan.truncated) return;
      const what = scan.kind === 'other' || scan.truncated ? 'not JSON' : `a JSON ${scan.kind} without an id`;
      return this.failAll(new UpstreamCallError('transport', `message that is not a JSON-RPC answer (${what}): ${preview(buf.toString('utf8', 0, 4096), this.scrub)}`));
    }
    const id = transportId(first.text);
    if (id !== undefined && id < this.nextId) return;
    this.failAll(
      new UpstreamCallError(
        'transport',
        first.text === 'null' ? `upstream error with id null${nullIdMessage(buf, scan, this.scrub)}` : `answer with id ${preview(first.text, this.scrub)}, which matches no call in flight`,
      ),
    );
  }
}
