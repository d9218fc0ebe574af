/**
 * The CLI's logger: pino, JSON lines on stdout, or short human lines when NODE_ENV is
 * `development`. Every line passes through a scrubber that removes the secret parts of the
 * configured upstream URLs, so a provider key never reaches the log even if some library put
 * a URL into an error message.
 */
import pino from 'pino';
import type { Logger } from '../log.js';
import { scrubberOf } from '../upstream/redact.js';

/** The levels LOG_LEVEL may name (pino's), most to least severe, and `silent`. */
export const logLevels: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface CliLoggerOptions {
  /** Strings that must never be written (provider keys and the like). */
  secrets?: readonly string[];
  pretty?: boolean;
  level?: string;
  /** Fields on every line (a cluster's worker: its pid). */
  fields?: Record<string, unknown>;
  /** Where lines go (default stdout). */
  write?: (line: string) => void;
}

export function createCliLogger(options: CliLoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const scrub = scrubberOf(options.secrets ?? []);
  const format = options.pretty ? prettyLine : (line: string) => line;
  return pino(
    {
      level: options.level ?? 'info',
      base: options.fields ?? undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: (line: string) => write(format(scrub(line))) },
  ) as unknown as Logger;
}

function prettyLine(line: string): string {
  try {
    const { time, level, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
    const extra = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    return `${String(time).slice(11, 23)} ${String(level).toUpperCase().padEnd(5)} ${msg ?? ''}${extra ? `  ${extra}` : ''}\n`;
  } catch {
    return line;
  }
}
