/*
 * backoff.ts: the delay before a reconnect.  Exponential with full jitter
 * and a cap (docs/client.md, "Reconnecting"): attempt n waits a uniformly
 * random time between minMs and min(maxMs, minMs * 2^n).  The floor of
 * minMs is what keeps a node that refuses at once (a bad frame, a crash
 * at every start) from being met by a tight loop; the jitter spreads the
 * clients of a node that died over the window instead of all at once.
 */

export interface BackoffOptions {
  /** the first delay and the floor of every delay, in ms (default 500) */
  minMs?: number;
  /** the cap, in ms (default 30000) */
  maxMs?: number;
}

export const BACKOFF_MIN_MS = 500;
export const BACKOFF_MAX_MS = 30000;

/** The delay of attempt n (0 for the first reconnect), random in [min, min(max, min * 2^n)]. */
export function backoffDelay(attempt: number, opts: BackoffOptions = {}, random: () => number = Math.random): number {
  const min = opts.minMs ?? BACKOFF_MIN_MS;
  const max = Math.max(min, opts.maxMs ?? BACKOFF_MAX_MS);
  const ceiling = Math.min(max, min * 2 ** Math.min(attempt, 30));
  return Math.round(min + random() * (ceiling - min));
}

/** Checks the options once, at connect: a clear error instead of a loop. */
export function checkBackoff(opts: BackoffOptions): void {
  const { minMs, maxMs } = opts;
  if (minMs !== undefined && !(Number.isFinite(minMs) && minMs >= 10 && minMs <= 600000))
    throw new RangeError("backoff.minMs must be a number from 10 to 600000");
  if (maxMs !== undefined && !(Number.isFinite(maxMs) && maxMs >= (minMs ?? BACKOFF_MIN_MS) && maxMs <= 3600000))
    throw new RangeError("backoff.maxMs must be a number from backoff.minMs to 3600000");
}
