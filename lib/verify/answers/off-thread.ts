/**
 * Large answers judged away from the event loop. Reading, checking and hashing an answer of tens
 * of megabytes takes the main thread long enough to hold up every other client; an answer of
 * `offThreadFrom` bytes or more is judged instead in one worker thread (assess-worker.ts), which
 * runs the same functions on the same inputs, and the call's promise resolves with the verdict
 * beside the body (a JudgedResponse). assess.ts then uses that verdict instead of computing it:
 * the agreement loop stays synchronous and its results are the same by construction.
 *
 * One thread, one answer at a time, in arrival order. The thread judges with answers.ts judgeBody:
 * a long result list (eth_getLogs and kin) is read, checked and hashed one element at a time, so
 * the memory it takes beyond the answer's bytes is one element's, not the answer's text, parsed
 * tree and canonical text; other answers are judged whole (assessBody), one at a time. The bytes
 * are transferred to the thread and back, never copied, when the body owns its whole buffer (the
 * case of every large HTTP answer); otherwise they are copied once into a buffer that is.
 *
 * The N answers of one request are often the same bytes (nodes of one client write them alike).
 * An answer whose bytes equal, byte for byte, those of an answer judged for the same request
 * (the same payload, ignored fields, secrets and head rule: every input of the judgement) takes
 * that verdict, which the judgement would give again (it is a function of those inputs); the
 * thread then only checks it for the upstream's own secret (the one input that is not shared).
 * Bytes that differ anywhere are judged on their own. The comparison runs in the event loop
 * (memcmp, ended at the first difference), `compareSliceBytes` (4 MiB) at a time with the
 * loop's other work between slices, while the answer holds the thread's turn; the verdicts compared against
 * are held through weak references, so no answer's bytes outlive the request that holds them.
 *
 * An answer the transport did not scan for its nesting (request.depthFrom, verify/calls.ts) comes
 * with the limit (`maxDepth`): the thread scans it before anything parses it, and answers one
 * found deeper with `nestedTooDeep` (the caller fails the call as the transport would have); an
 * answer that takes the verdict of the same bytes is not scanned (those bytes passed).
 *
 * When the thread cannot judge an answer (it crashed, ran out of memory, or took longer than the
 * call's timeout) that call fails as `unchecked`: our side's failure, not charged to the
 * upstream; the thread is replaced for the next answer. A call aborted while its answer waits or
 * is being judged resolves at once (its verdict is dropped when it comes). A thread that cannot
 * start at all (its constructor throws, or it fails before it says it is ready) leaves answers to
 * the main thread, the one it was started for included: a new thread is handed an answer's bytes
 * only once it is ready, so they are still here when it fails. The idle thread does not keep the process alive;
 * holdOffThread() is taken by each registry and the thread ends when the last one is released
 * (registry.close()).
 */
import { Worker } from 'node:worker_threads';
import type { RpcCall } from '../../jsonrpc/types.js';
import type { CancelSignal, UpstreamResponse } from '../../upstream/transport/contract.js';
import type { Assessment } from './answers.js';
import type { Judgement } from './sliced.js';
import type { IgnoredFields } from './compared-fields.js';
import { costScanFrom, judgingCost } from '../../jsonrpc/scan.js';

/** Answers of this many bytes or more are judged in the thread. */
export const offThreadFrom = 1024 * 1024;

export type { Judgement };
/** What the thread found: the assessment, whether the answer quotes the upstream's own secret, or why it was not judged. */
export type Judged = { judgement: Judgement; echoed: boolean; unchecked: undefined } | { judgement: undefined; echoed: false; unchecked: string };

/** A response whose answer was judged in the thread. */
export interface JudgedResponse extends UpstreamResponse {
  judged: Judged;
}

/** One answer to judge, as the thread receives it. */
export interface Task {
  id: number;
  /** The answer's bytes: [0, length) of this buffer (transferred). */
  bytes: ArrayBuffer;
  length: number;
  payload: { batch: boolean; calls: readonly RpcCall[] };
  ignored: IgnoredFields | undefined;
  beyondHeads: boolean;
  /** Every configured upstream's secrets (scrubbed from reasons) and this upstream's own (not to be echoed). */
  all: readonly string[];
  own: readonly string[];
  /** The verdict of the same bytes judged for the same request: only the echo of `own` is checked. */
  known: Judgement | undefined;
  /** The nesting limit, when the bytes were not scanned for it yet (the transport left it to us): checked before anything parses them. */
  maxDepth: number | undefined;
}

export interface Reply {
  id: number;
  judged: Judged;
  /** The task's buffer, transferred back. */
  bytes: ArrayBuffer;
}

/** The Judged of an assessment (its canonical text left out, if it has one). */
export function judgedOf(a: Assessment | Judgement, echoed: boolean): Judged {
  const judgement: Judgement = a.ok ? (a.ignored ? { ok: true, hash: a.hash, ignored: a.ignored } : { ok: true, hash: a.hash }) : a;
  return { judgement, echoed, unchecked: undefined };
}

const unchecked = (why: string): Judged => ({ judgement: undefined, echoed: false, unchecked: why });

/**
 * The `unchecked` of an answer that nests deeper than the task's `maxDepth`: not judged, and not
 * our side's failure but the upstream's (the caller fails the call as the transport would have,
 * `too-deep`). Its verdict is not kept: bytes equal to it are scanned again.
 */
export const nestedTooDeep = 'the answer nests deeper than the limit';

interface Job {
  task: Task;
  /** The body until it is sent to the thread (compared with verdicts of the same request before). */
  body: Buffer;
  /** The request's payload: which answers are for the same request. */
  payload: object;
  signal: CancelSignal;
  timeoutMs: number;
  /** The verdict and the body back; no verdict: the body as it came, to be judged in the main thread. */
  settle: (judged: Judged | undefined, body: Buffer | undefined) => void;
  onAbort: () => void;
  /** Settled (judged, failed or aborted): nothing more is done for it. */
  settled: boolean;
  /** While its bytes are compared with those of verdicts given (`compareStep`): those verdicts, the one being compared and how far. */
  compared: Verdict[];
  against: Buffer | undefined;
  at: number;
}

/** A verdict the thread gave, with what it was given: an answer of the same bytes and inputs takes it. */
interface Verdict {
  payload: object;
  ignored: IgnoredFields | undefined;
  beyondHeads: boolean;
  all: readonly string[];
  length: number;
  body: WeakRef<Buffer>;
  judgement: Judgement;
}

/** The last verdicts (newest first): the answers of one request come close together. */
const verdicts: Verdict[] = [];
const keptVerdicts = 4;

/**
 * Counts since start (tests and the bench read them): answers judged in the thread, answers that
 * took the verdict of the same bytes, and answers sent to the thread for their cost, not their size.
 */
export const offThreadCounts = { judged: 0, same: 0, costly: 0 };

const sameStrings = (a: readonly string[], b: readonly string[]): boolean => a === b || (a.length === b.length && a.every((s, i) => s === b[i]));

/** The verdicts given for the same request and inputs to bytes of the same length: the candidates for the same bytes. */
function sameInputs(job: Job): Verdict[] {
  const { task } = job;
  const found: Verdict[] = [];
  for (const v of verdicts) {
    if (v.payload !== job.payload || v.length !== task.length || v.ignored !== task.ignored || v.beyondHeads !== task.beyondHeads || !sameStrings(v.all, task.all)) continue;
    found.push(v);
  }
  return found;
}

/**
 * Bytes compared per turn of the event loop: a 46 MB comparison is not one long stall, and an
 * answer of a few megabytes is compared at once, as the thread is kept waiting meanwhile.
 */
export const compareSliceBytes = 4 * 1024 * 1024;

/**
 * The comparison of a job's bytes with those of the verdicts of the same inputs, up to
 * `compareSliceBytes` at a time (a shared function: setImmediate passes the job). Equal to the
 * end: the job takes that verdict; a byte that differs: the next candidate, from its first byte;
 * none left: the job is judged. The job keeps the thread's turn meanwhile (`running`): it is
 * given up when the job is settled (aborted) or no longer running (timed out, the thread closed).
 */
function compareStep(job: Job): void {
  if (running?.job !== job) return;
  if (job.settled) return endRunning();
  const { body } = job;
  let budget = compareSliceBytes;
  for (;;) {
    if (job.against === undefined) {
      const v = job.compared[0];
      if (v === undefined) return post(job, undefined);
      const judged = v.body.deref();
      if (judged === undefined || judged.length !== body.length) {
        job.compared.shift();
        continue;
      }
      job.against = judged;
      job.at = 0;
    }
    if (budget === 0) break;
    const from = job.at;
    const to = Math.min(body.length, from + budget);
    budget -= to - from;
    if (job.against.length !== body.length || body.compare(job.against, from, to, from, to) !== 0) {
      job.against = undefined;
      job.compared.shift();
    } else if (to === body.length) {
      job.against = undefined;
      return post(job, job.compared[0]!.judgement);
    } else job.at = to;
  }
  setImmediate(compareStep, job);
}

function remember(job: Job, body: Buffer, judged: Judged): void {
  if (judged.judgement === undefined) return;
  if (verdicts.length >= keptVerdicts) verdicts.pop();
  const { task } = job;
  verdicts.unshift({ payload: job.payload, ignored: task.ignored, beyondHeads: task.beyondHeads, all: task.all, length: task.length, body: new WeakRef(body), judgement: judged.judgement });
}

const fromSource = import.meta.url.endsWith('.ts');
const workerUrl = new URL(`./assess-worker${fromSource ? '.ts' : '.js'}`, import.meta.url);

/**
 * The thread's young generation is kept small: it reads a long list one element at a time, many
 * short-lived objects whose memory is better taken back often than let grow with the default's.
 */
const resourceLimits = { maxYoungGenerationSizeMb: 8 };

/**
 * The thread. Run from the TypeScript source (under tsx: the bench, a script importing lib/), a
 * thread's entry module is not loaded through the loader's hooks: the thread registers tsx's
 * loader first, then imports it.
 */
function newWorker(): Worker {
  if (!fromSource) return new Worker(workerUrl, { resourceLimits });
  const loader = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerUrl.href)}); })`, { eval: true, resourceLimits });
}

let worker: Worker | undefined;
/** The job being judged, its start timer. */
let running: { job: Job; timer: NodeJS.Timeout } | undefined;
const queue: Job[] = [];
let nextId = 1;
let holders = 0;
/** The thread could not start: answers are judged in the main thread. */
let broken = false;
/**
 * Whether the thread said it is ready (its module loaded). Until then the running job is not
 * posted (`unsent`): its bytes stay here, so that if the thread fails to start, the job is judged
 * in the main thread instead of failing with bytes already handed to a thread that never ran.
 */
let ready = false;
let unsent: Job | undefined;

/**
 * Whether this answer is judged in the thread: one of `offThreadFrom` bytes or more, or a shorter
 * one whose judgement is likely to cost as much as judging `costlyFrom` bytes of an ordinary
 * answer does (scan.ts judgingCost: many members, values, escapes or numbers spelled inexactly).
 * An answer under costScanFrom bytes cannot cost that much and is not scanned.
 */
export function judgedOffThread(body: Buffer): boolean {
  if (broken) return false;
  if (body.length >= offThreadFrom) return true;
  if (body.length < costScanFrom || judgingCost(body, costlyFrom) < costlyFrom) return false;
  offThreadCounts.costly++;
  return true;
}

/**
 * The estimated cost (in bytes of an ordinary answer) from which an answer shorter than
 * `offThreadFrom` is judged in the thread: about 70 ms of the event loop here; a megabyte of
 * eth_getLogs (about 1.8 million) stays on the event loop, an object of 10 000 keys does not.
 */
export const costlyFrom = 2 * offThreadFrom;

function spawn(): Worker {
  const w = newWorker();
  let online = false;
  w.on('message', (reply: Reply | 'ready') => {
    if (reply === 'ready') {
      online = true;
      if (w !== worker) return;
      ready = true;
      const job = unsent;
      unsent = undefined;
      if (job === undefined || running?.job !== job) return;
      if (job.settled) endRunning(); // aborted while the thread started
      else send(job);
      return;
    }
    if (w !== worker || running?.job.task.id !== reply.id) return;
    const { job, timer } = running;
    running = undefined;
    clearTimeout(timer);
    job.signal.removeEventListener('abort', job.onAbort);
    const body = Buffer.from(reply.bytes, 0, job.task.length);
    if (job.task.known === undefined) remember(job, body, reply.judged);
    job.settle(reply.judged, body);
    next();
  });
  const lost = (why: string) => {
    if (w !== worker) return;
    worker = undefined;
    ready = false;
    unsent = undefined;
    if (!online) {
      // It never started: nothing was handed to it. The running job, being compared or waiting
      // for the thread to be ready, still holds its bytes: judged in the main thread, as are the
      // jobs waiting and every answer from now on.
      broken = true;
      leaveRunning();
    } else failRunning(why);
    next();
  };
  w.on('error', (err: Error & { code?: string }) =>
    lost(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'the checking thread ran out of memory' : `the checking thread failed: ${err.message}`),
  );
  w.on('exit', () => lost('the checking thread stopped'));
  w.unref();
  return w;
}

/** The running job, its bytes never sent to the thread, is left to the main thread. */
function leaveRunning(): void {
  if (!running) return;
  const { job, timer } = running;
  running = undefined;
  clearTimeout(timer);
  job.signal.removeEventListener('abort', job.onAbort);
  job.settle(undefined, undefined);
}

function failRunning(why: string): void {
  if (!running) return;
  const { job, timer } = running;
  running = undefined;
  clearTimeout(timer);
  job.signal.removeEventListener('abort', job.onAbort);
  job.settle(unchecked(why), undefined);
}

/** Starts the next waiting job when the thread is free. */
function next(): void {
  if (running) return;
  const job = queue.shift();
  if (!job) {
    worker?.unref(); // idle: it does not keep the process alive
    return;
  }
  if (broken) {
    // The thread cannot start: the answers waiting are judged in the main thread, as before.
    job.signal.removeEventListener('abort', job.onAbort);
    job.settle(undefined, undefined);
    return next();
  }
  if (!worker) {
    try {
      ready = false;
      worker = spawn();
    } catch {
      // No thread to be had here (its file or loader missing): the main thread judges, as before.
      broken = true;
      job.signal.removeEventListener('abort', job.onAbort);
      job.settle(undefined, undefined);
      return next();
    }
  }
  const timer = setTimeout(() => {
    // Stuck (or far too slow): the thread is replaced, this answer is not judged.
    const w = worker;
    worker = undefined;
    unsent = undefined;
    failRunning(`not judged within ${job.timeoutMs} ms`);
    void w?.terminate();
    next();
  }, job.timeoutMs);
  timer.unref();
  running = { job, timer };
  worker.ref(); // an answer being judged is work in progress, like a socket being read
  job.compared = sameInputs(job);
  // The same bytes judged for the same request? Compared first (the first slice now), if any may be.
  if (job.compared.length > 0) compareStep(job);
  else post(job, undefined);
}

/**
 * Sends the running job to the thread: to be judged, or (`known`) only checked for its upstream's
 * key; once the thread is ready (its 'ready' sends it).
 */
function post(job: Job, known: Judgement | undefined): void {
  job.compared = noVerdicts;
  if (known !== undefined) job.task.known = known;
  if (ready) send(job);
  else unsent = job;
}

function send(job: Job): void {
  if (job.task.known !== undefined) offThreadCounts.same++;
  else offThreadCounts.judged++;
  job.body = empty; // its bytes go to the thread
  worker!.postMessage(job.task, [job.task.bytes]);
}

/** The running job was given up before it went to the thread (aborted while compared): the next one runs. */
function endRunning(): void {
  const { job, timer } = running!;
  running = undefined;
  clearTimeout(timer);
  job.compared = noVerdicts;
  job.against = undefined;
  next();
}

const noVerdicts: Verdict[] = [];

const empty = Buffer.alloc(0);

/** The bytes of a body as a buffer of their own, to transfer: the body's own when it owns it whole. */
function ownBytes(body: Buffer): ArrayBuffer {
  const b = body.buffer;
  if (b instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === b.byteLength) return b;
  const copy = new ArrayBuffer(body.length);
  body.copy(new Uint8Array(copy));
  return copy;
}

/**
 * The response with its answer judged in the thread (the caller checked judgedOffThread). Never
 * rejects: a failure of the thread is a JudgedResponse with `unchecked`. The body is the same
 * bytes, possibly in another Buffer. A thread that could not start (it never said it was ready)
 * leaves the answer unjudged: a plain response, judged in the main thread.
 */
export function judgeOffThread(
  body: Buffer,
  payload: { batch: boolean; calls: readonly RpcCall[] },
  ignored: IgnoredFields | undefined,
  beyondHeads: boolean,
  secrets: { readonly all: readonly string[]; readonly own: readonly string[] },
  signal: CancelSignal,
  timeoutMs: number,
  maxDepth?: number,
): Promise<JudgedResponse | UpstreamResponse> {
  return new Promise((resolve) => {
    const length = body.length;
    const bytes = ownBytes(body);
    const task: Task = { id: nextId++, bytes, length, payload: { batch: payload.batch, calls: payload.calls }, ignored, beyondHeads, all: secrets.all, own: secrets.own, known: undefined, maxDepth };
    const job: Job = {
      task,
      body: bytes === body.buffer ? body : Buffer.from(bytes, 0, length),
      payload,
      signal,
      timeoutMs,
      settle: (judged, back) => {
        if (job.settled) return;
        job.settled = true;
        if (!judged) resolve({ body });
        else resolve({ body: back ?? empty, judged });
      },
      onAbort: () => {
        const at = queue.indexOf(job);
        if (at !== -1) queue.splice(at, 1);
        // A job the thread is judging is left to finish (its verdict is dropped): the thread is not
        // killed for every hedged call the loop abandons.
        job.settle(unchecked('aborted'), undefined);
      },
      settled: false,
      compared: noVerdicts,
      against: undefined,
      at: 0,
    };
    if (signal.aborted) return job.settle(unchecked('aborted'), undefined);
    signal.addEventListener('abort', job.onAbort, { once: true });
    queue.push(job);
    next();
  });
}

/** A registry's hold on the thread; the returned release ends the thread when no hold is left. */
export function holdOffThread(): () => void {
  holders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) closeOffThread();
  };
}

/** Ends the thread now: jobs waiting or running are not judged (`unchecked`); the verdicts kept for comparison are dropped. */
export function closeOffThread(): void {
  const w = worker;
  worker = undefined;
  failRunning('the checking thread was closed');
  for (const job of queue.splice(0)) {
    job.signal.removeEventListener('abort', job.onAbort);
    job.settle(unchecked('the checking thread was closed'), undefined);
  }
  broken = false;
  ready = false;
  unsent = undefined;
  verdicts.length = 0;
  void w?.terminate();
}
