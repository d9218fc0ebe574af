/**
 * `watchDatabase(db)`: is the indexer's database answering? A readiness check for GET /ready
 * (pass it to `rpcPipeline(config, { readiness: [watch] })`), and the one place that says so in
 * the log.
 *
 * - A check is `SELECT 1` under a short timeout; its result is kept for `maxAgeMs` and
 *   concurrent callers share one query, so /ready stays cheap under any request rate.
 * - With `start()`, it also checks every `intervalMs` (timer unref'd), so a database that goes
 *   away or comes back is noticed without anyone asking /ready.
 * - It logs transitions only: once at error level when the database stops answering (the
 *   redacted URL, the cause and what to do), once at info level when it answers again. The pool
 *   itself reconnects on the next query; nothing needs a restart.
 */
import { silentLogger, type Logger } from '../../log.js';
import type { ReadinessCheck, ReadinessResult } from '../../ops/readiness.js';
import type { IndexerDb } from './pool.js';
import { redactCredentials } from '../../upstream/redact.js';

export interface DatabaseWatchOptions {
  logger?: Logger;
  /** The database URL (logged redacted) or a label such as 'embedded PostgreSQL'. */
  database?: string;
  /** Time `SELECT 1` gets, ms (default 1000). */
  timeoutMs?: number;
  /** How long a result is reused, ms (default 1000). */
  maxAgeMs?: number;
  /** Period of the background check after start(), ms (default 5000). */
  intervalMs?: number;
}

export interface DatabaseWatch extends ReadinessCheck {
  /** The last result (undefined before the first check). */
  readonly last: ReadinessResult | undefined;
  /** Checks now and then every `intervalMs`, until stop(). */
  start(): Promise<ReadinessResult>;
  stop(): void;
}

export const DATABASE_FIX = 'start PostgreSQL or correct DATABASE_URL (unset it to use the embedded PostgreSQL); the balancer keeps serving, '
  + '/api and /graphql answer 503 and /ready 503 until the database answers, then recover by themselves';

/** One line for the cause of a failed check, without credentials. */
export function causeOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const nested = (err as { errors?: unknown }).errors;
  const message = err.message || (Array.isArray(nested) ? nested.map((e) => (e as Error).message).join('; ') : '') || err.name;
  const code = (err as { code?: unknown }).code;
  const text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  return redactCredentials(text);
}

export function watchDatabase(db: IndexerDb, options: DatabaseWatchOptions = {}): DatabaseWatch {
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? 1000;
  const maxAgeMs = options.maxAgeMs ?? 1000;
  const intervalMs = options.intervalMs ?? 5000;
  const database = options.database === undefined ? undefined : redactCredentials(options.database);
  let last: ReadinessResult | undefined;
  let checkedAt = 0;
  let inFlight: Promise<ReadinessResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const query = async (): Promise<void> => {
    let timeout: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        db.one('SELECT 1 AS ok'),
        new Promise<never>((_, reject) => {
          timeout = setTimeout(() => reject(new Error(`no answer to SELECT 1 within ${timeoutMs} ms`)), timeoutMs);
          timeout.unref();
        }),
      ]);
    } finally {
      clearTimeout(timeout);
    }
  };

  const run = async (): Promise<ReadinessResult> => {
    let result: ReadinessResult;
    try {
      await query();
      result = { ready: true, status: 'ok', ...(database ? { database } : {}) };
      if (last && !last.ready) logger.info({ database }, 'indexer database answers again: /api and /ready recovered');
    } catch (err) {
      const cause = causeOf(err);
      result = { ready: false, status: 'unreachable', ...(database ? { database } : {}), cause, reason: `database: unreachable (${cause})` };
      if (!last || last.ready) logger.error({ database, cause, fix: DATABASE_FIX }, 'indexer database unreachable');
    }
    last = result;
    checkedAt = Date.now();
    return result;
  };

  const check = (): Promise<ReadinessResult> => {
    if (last && Date.now() - checkedAt < maxAgeMs) return Promise.resolve(last);
    inFlight ??= run().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      check().finally(schedule);
    }, intervalMs);
    timer.unref();
  };

  return {
    name: 'database',
    get last() {
      return last;
    },
    check,
    async start() {
      const first = await check();
      schedule();
      return first;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
