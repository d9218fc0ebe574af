/**
 * A dispute (a request that ended without N agreeing answers while upstreams gave different
 * answers) explained: the paths where the groups' answers differ (dispute.ts) go into the
 * error's `data.differences` and one warn log line, and, when `disputes.file` is set, the whole
 * dispute is appended to that file as one JSON line for forensics.
 *
 * The file: each line holds the time, chain, request id, the calls (id, method, params), the
 * required N, each group's hash, upstream labels (URLs redacted) and one full answer (its raw
 * body as text, provider keys scrubbed), and the differences. Appends are asynchronous (one
 * write at a time, lines queued meanwhile); under backpressure (more than `maxQueuedBytes`
 * queued) a dispute is dropped with a counted warning. When the next line would take the file
 * past `maxBytes`, it is renamed to `<file>.1` (replacing the older one) and a new file started;
 * a single dispute larger than `maxBytes` is not written (a warning says so). A write error is
 * logged once (until a write succeeds again) and never thrown.
 */
import { appendFile, rename, stat } from 'node:fs/promises';
import type { Assessed, DisputedRequest } from './question.js';
import type { Logger } from '../log.js';
import { comparableAnswers, diffAnswers, type Difference } from './dispute.js';

type Good = Extract<Assessed, { ok: true }>;

export interface DisputeFile {
  /** Queues one record as a JSON line; `build` is not called when the record would be dropped. */
  append(build: () => Record<string, unknown>): void;
  /** Disputes dropped so far (backpressure or too large). */
  readonly dropped: number;
  /** Resolves when every queued line was written (or failed). */
  flush(): Promise<void>;
}

export interface DisputeFileOptions {
  /** Rotate to `<path>.1` before the file would pass this size (bytes). */
  maxBytes: number;
  /** Lines queued, in bytes, beyond which disputes are dropped (default: min(maxBytes, 64 MiB)). */
  maxQueuedBytes?: number;
  logger: Logger;
}

export function openDisputeFile(path: string, options: DisputeFileOptions): DisputeFile {
  const { maxBytes, logger } = options;
  const maxQueued = options.maxQueuedBytes ?? Math.min(maxBytes, 64 * 1024 * 1024);
  const queue: { text: string; bytes: number }[] = [];
  let queuedBytes = 0;
  let size: number | undefined; // unknown until stat'ed (at the first write, and after an error)
  let draining: Promise<void> | undefined;
  let failing = false;
  let dropping = false;
  let dropped = 0;

  const drop = (reason: string, bytes: number) => {
    dropped++;
    if (!dropping) logger.warn({ file: path, dropped, bytes }, `dispute not written to disputes.file: ${reason}`);
    dropping = true;
  };
  const drain = async () => {
    while (queue.length > 0) {
      let n = 0;
      let bytes = 0;
      try {
        if (size === undefined) size = await sizeOf(path);
        if (size > 0 && size + queue[0]!.bytes > maxBytes) {
          await rename(path, `${path}.1`);
          size = 0;
          logger.info({ file: path, rotatedTo: `${path}.1` }, 'disputes.file reached disputes.fileMaxBytes: rotated');
        }
        // As many queued lines as fit in the file, in one write.
        while (n < queue.length && (n === 0 || size + bytes + queue[n]!.bytes <= maxBytes)) bytes += queue[n++]!.bytes;
        await appendFile(path, queue.slice(0, n).map((l) => l.text).join(''), { mode: 0o600 });
        size += bytes;
        failing = false;
        dropping = false;
      } catch (err) {
        size = undefined;
        if (!failing) logger.error({ file: path, err: (err as Error).message }, 'could not write disputes.file: disputes are not recorded until it works again');
        failing = true;
        // What could not be written is dropped: no retry loop on a broken path.
        if (n === 0) bytes = queue[n++]!.bytes;
        dropped += n;
      }
      queue.splice(0, n);
      queuedBytes -= bytes;
    }
  };
  return {
    get dropped() {
      return dropped;
    },
    append(build) {
      if (queuedBytes >= maxQueued) return drop('the file is not keeping up (backpressure)', 0); // not even built
      const text = `${JSON.stringify(build())}\n`;
      const bytes = Buffer.byteLength(text);
      if (bytes > maxBytes) return drop(`one dispute of ${bytes} bytes is larger than disputes.fileMaxBytes (${maxBytes})`, bytes);
      if (queuedBytes > 0 && queuedBytes + bytes > maxQueued) return drop('the file is not keeping up (backpressure)', bytes);
      queue.push({ text, bytes });
      queuedBytes += bytes;
      draining ??= drain().finally(() => {
        draining = undefined;
      });
    },
    flush() {
      return draining ?? Promise.resolve();
    },
  };
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

/** `[hash, members]` as quorum.ts tally() gives them, in `data.groups` order. */
export type Groups = readonly (readonly [string, readonly Good[]])[];

/**
 * The dispute of a request that got no group of N: its differences (for the error's data, scrubbed
 * of provider keys), logged at warn in one line and, with a dispute file, appended to it. Runs
 * only on that error path; the answers are read again from their raw bodies here.
 */
export function describeDispute(ctx: DisputedRequest, required: number, groups: Groups, file?: DisputeFile, deadlinePassed = false): { differences?: Difference[] } {
  try {
    return explain(ctx, required, groups, file, deadlinePassed);
  } catch (err) {
    // Explaining must never cost the client its error.
    ctx.log.error({ err: (err as Error).message }, 'could not describe a dispute');
    return {};
  }
}

function explain(ctx: DisputedRequest, required: number, groups: Groups, file: DisputeFile | undefined, deadlinePassed: boolean): { differences?: Difference[] } {
  const payload = ctx.payload;
  if (groups.length < 2 || !payload) return {};
  const scrub = groups[0]![1][0]!.upstream.secrets.scrub;
  const ignored = ctx.chain?.ignoredFields;
  const values = groups.map(([, members]) => comparableAnswers(members[0]!.body, payload, ignored));
  const differences = diffAnswers(values, { scrub, ...(payload.batch ? { batchIds: payload.calls.map((c) => c.id) } : {}) });
  const labels = groups.map(([hash, members]) => ({ hash, upstreams: members.map((m) => m.upstream.label) }));
  const methods = payload.calls.map((c) => c.method);
  ctx.log.warn({ chain: ctx.chain?.id, methods, required, groups: labels, differences }, `upstreams disagreed: no ${required} agreeing answers`);
  if (file) {
    file.append(() => ({
      time: new Date().toISOString(),
      chain: ctx.chain?.id,
      requestId: ctx.requestId,
      methods,
      batch: payload.batch,
      calls: payload.calls.map((c) => ({ id: c.id, method: c.method, params: c.params })),
      required,
      deadlinePassed,
      groups: groups.map(([hash, members]) => ({
        hash,
        upstreams: members.map((m) => m.upstream.label),
        body: members[0]!.upstream.secrets.scrub(members[0]!.body.toString('utf8')),
      })),
      differences,
    }));
  }
  return { differences };
}
