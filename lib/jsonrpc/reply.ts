/**
 * An answer's bytes under another request's id: the answer one client's request got, given to
 * another client that asked the same question (a merged request, a cached answer). Only the
 * top-level `id` value is replaced (located by the byte scan, scan.ts); every other byte, numbers
 * included, stays as the upstream sent it.
 *
 * A long answer (tens of megabytes of eth_getLogs) is done a slice at a time (`withReplyIdSliced`):
 * the scan and the copy of all its bytes would otherwise hold the event loop for as long as they
 * take, for every client that gets the answer under its own id.
 */
import { newScan, scanJson, scanUpTo, type JsonScan, type ScanState } from './scan.js';
import type { RpcId } from './types.js';

/**
 * `body` (one JSON-RPC response object) with `id` in place of its own id; undefined when the
 * body is not one object with exactly one `id` member (an answer that voted always is).
 */
export function withReplyId(body: Buffer, id: RpcId): Buffer | undefined {
  return withReplyIdText(body, JSON.stringify(id));
}

/** `withReplyId` with the id's JSON text as it is to be written (`1.0` as the client wrote it). */
export function withReplyIdText(body: Buffer, text: string): Buffer | undefined {
  const scan = scanJson(body, { ids: true });
  const span = idSpan(scan);
  if (span === undefined) return undefined;
  if (span.text === text) return body;
  return Buffer.concat([body.subarray(0, span.start), Buffer.from(text), body.subarray(span.end)]);
}

/** The one id of a single answer, if it has exactly one. */
function idSpan(scan: JsonScan): JsonScan['ids'][number] | undefined {
  return scan.kind !== 'object' || scan.truncated || scan.ids.length !== 1 ? undefined : scan.ids[0];
}

/** Bytes scanned, or copied, per turn of the event loop by `withReplyIdSliced`. */
export const replySliceBytes = 1024 * 1024;

/** Where one sliced id replacement stands. */
interface Splice {
  readonly body: Buffer;
  readonly id: RpcId;
  readonly scan: ScanState;
  /** The new id's bytes, and where the old one was in `body`; set once the scan is over. */
  idBytes: Buffer;
  start: number;
  end: number;
  /** The answer being written, and how many of its bytes are. */
  out: Buffer | undefined;
  written: number;
  readonly gone: { readonly gone: boolean } | undefined;
  readonly done: (body: Buffer | undefined) => void;
}

const noBytes = Buffer.alloc(0);

/**
 * `withReplyId`'s answer given to `done`, the work done `replySliceBytes` at a time with the
 * event loop's other work (setImmediate) between slices: first the scan, then the copy into the
 * new answer. A body of one slice or less is done at once (`done` called before this returns).
 * When `owner.gone` turns true (its client left), the work stops and `done` is not called.
 */
export function withReplyIdSliced(body: Buffer, id: RpcId, done: (body: Buffer | undefined) => void, owner?: { readonly gone: boolean }): void {
  if (body.length <= replySliceBytes) return done(withReplyId(body, id));
  const job: Splice = { body, id, scan: newScan(), idBytes: noBytes, start: 0, end: 0, out: undefined, written: 0, gone: owner, done };
  setImmediate(step, job);
}

/** One slice of a splice (a shared function: setImmediate passes the job). */
function step(job: Splice): void {
  if (job.gone?.gone) return;
  if (job.out === undefined) {
    const scan = scanUpTo(job.body, job.scan, job.scan.at + replySliceBytes, true, Infinity);
    if (scan === undefined) return void setImmediate(step, job);
    const span = idSpan(scan);
    if (span === undefined) return job.done(undefined);
    const text = JSON.stringify(job.id);
    if (span.text === text) return job.done(job.body);
    job.idBytes = Buffer.from(text);
    job.start = span.start;
    job.end = span.end;
    // (allocUnsafe: every byte is written below before the buffer is handed on)
    job.out = Buffer.allocUnsafe(job.body.length - (span.end - span.start) + job.idBytes.length);
    return void setImmediate(step, job);
  }
  const { body, out, idBytes, start } = job;
  const total = out.length;
  const afterId = start + idBytes.length;
  let w = job.written;
  const stop = Math.min(total, w + replySliceBytes);
  while (w < stop) {
    if (w < start) w += body.copy(out, w, w, Math.min(start, stop));
    else if (w < afterId) w += idBytes.copy(out, w, w - start);
    else w += body.copy(out, w, job.end + (w - afterId), job.end + (stop - afterId));
  }
  job.written = w;
  if (w < total) return void setImmediate(step, job);
  job.out = undefined;
  job.done(out);
}
