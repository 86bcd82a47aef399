// Each request's logger (`request.log`), made only when something is logged through it. Fastify gives
// every request a pino child logger carrying its `reqId`; making one serialises the bindings through
// the redaction paths (logging.ts), about 5 % of a userinfo request's CPU in the profiles — spent on
// every request, though at the usual levels most requests log nothing. This logger answers the level
// methods at once when the level is off, and makes the child (the same child, so every line is the
// same as before) the first time a line is written or a child of it is asked for.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString } from 'pino';

/** What a pino level method takes: (object, message?, …) or (message, …). */
type LogArgs = [objOrMsg: unknown, ...rest: unknown[]];

type Parent = FastifyBaseLogger & { levels?: { values: Record<string, number> } };

export class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: Parent;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#materialise().level = level;
  }

  #materialise(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  /** Whether a line at `level` would be written: pino's own comparison of level values. */
  #enabled(level: Level): boolean {
    const values = this.#parent.levels?.values;
    if (!values) return true;
    const threshold = values[this.level];
    return threshold === undefined || values[level]! >= threshold;
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child === undefined && !this.#enabled(level)) return;
    (this.#materialise()[level] as (...a: unknown[]) => void)(...args);
  }

  // Methods on the prototype, not closures per request.
  fatal(...args: LogArgs): void {
    this.#write('fatal', args);
  }
  error(...args: LogArgs): void {
    this.#write('error', args);
  }
  warn(...args: LogArgs): void {
    this.#write('warn', args);
  }
  info(...args: LogArgs): void {
    this.#write('info', args);
  }
  debug(...args: LogArgs): void {
    this.#write('debug', args);
  }
  trace(...args: LogArgs): void {
    this.#write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#materialise().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`. */
export function lazyRequestLogger(this: unknown, logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
