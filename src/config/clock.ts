// Time is a parameter: domain functions take a Clock so tests can move time instead of sleeping.

/** Returns the current time in milliseconds since the epoch. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** A clock tests can move by hand. */
export function manualClock(start = Date.UTC(2026, 0, 1)): Clock & { advance(ms: number): void; set(ms: number): void } {
  let now = start;
  const clock = (() => now) as Clock & { advance(ms: number): void; set(ms: number): void };
  clock.advance = (ms) => {
    now += ms;
  };
  clock.set = (ms) => {
    now = ms;
  };
  return clock;
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
