// The loop every runner of `signet worker` turns: do the next piece of work; when there was none (or
// the step failed), wait `pollMs` and look again. Stopping wakes a waiting loop and lets the piece of
// work in progress finish.
import type { Logger } from 'pino';

export type PollLoop = {
  /** true once stop() was called: work in progress may give its claim back instead of finishing */
  readonly stopping: boolean;
  stop(): Promise<void>;
};

export function startPollLoop(input: {
  pollMs: number;
  log: Logger;
  /** the log line of a step that threw (the loop goes on after the wait) */
  errorLine: string;
  /** does the next piece of work; false when there was none */
  step(): Promise<boolean>;
  /** called once stop() has set `stopping`, before the loop is woken (to abort the work in progress) */
  interrupt?(): void;
}): PollLoop {
  let stopping = false;
  let wake: (() => void) | undefined;

  const loop = (async () => {
    while (!stopping) {
      try {
        if (await input.step()) continue;
      } catch (error) {
        input.log.error({ err: error }, input.errorLine);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, input.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();

  return {
    get stopping() {
      return stopping;
    },
    async stop() {
      stopping = true;
      input.interrupt?.();
      wake?.();
      await loop;
    },
  };
}
