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

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * `parent.child(bindings)`, made only when a line at an enabled level is first written through
 * it (or a child of it is asked for). The pipeline gives every request such a logger: with the
 * level above the lines a request writes (LOG_LEVEL=warn, no request log), no child logger is
 * built per request; pino's `child` serializes its bindings each time it is called. A parent
 * without `isLevelEnabled` has every level on.
 */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  return parent === silentLogger ? silentLogger : new LazyChild(parent, bindings);
}

class LazyChild implements Logger {
  private made: Logger | undefined = undefined;
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  private real(): Logger {
    return (this.made ??= this.parent.child(this.bindings));
  }

  isLevelEnabled(level: Level): boolean {
    return this.parent.isLevelEnabled?.(level) ?? true;
  }

  // Methods on the prototype, not closures per instance (one is made per request).
  debug(...args: [Record<string, unknown> | string, string?]): void {
    if (this.isLevelEnabled('debug')) {
      const log = this.real();
      (log.debug as (...a: unknown[]) => void).apply(log, args);
    }
  }

  info(...args: [Record<string, unknown> | string, string?]): void {
    if (this.isLevelEnabled('info')) {
      const log = this.real();
      (log.info as (...a: unknown[]) => void).apply(log, args);
    }
  }

  warn(...args: [Record<string, unknown> | string, string?]): void {
    if (this.isLevelEnabled('warn')) {
      const log = this.real();
      (log.warn as (...a: unknown[]) => void).apply(log, args);
    }
  }

  error(...args: [Record<string, unknown> | string, string?]): void {
    if (this.isLevelEnabled('error')) {
      const log = this.real();
      (log.error as (...a: unknown[]) => void).apply(log, args);
    }
  }

  child(bindings: Record<string, unknown>): Logger {
    return this.real().child(bindings);
  }
}
