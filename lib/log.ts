/**
 * The logger every part of omnigate is handed. Its shape is pino's (`logger.info(obj, msg)`),
 * so a pino instance is accepted as is; the default does nothing, so a library user who mounts
 * a handler without a logger gets no output. Nothing under lib/ or middleware/ creates a logger
 * on its own: the CLI builds one and injects it.
 */
export interface LogFn {
  (obj: Record<string, unknown>, msg?: string): void;
  (msg: string): void;
}

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
  /** pino's: lets a caller skip building a line nobody will see. Absent means every level is on. */
  isLevelEnabled?(level: 'debug' | 'info' | 'warn' | 'error'): boolean;
}

const noop = (() => {}) as LogFn;

/** A logger that drops everything (the default for mounted handlers). */
export const silentLogger: Logger = {
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => silentLogger,
  isLevelEnabled: () => false,
};
