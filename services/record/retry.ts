// Transient storage failures (an R2 or D1 call that throws once in a while) are retried a few
// times with a short backoff before a caller sees them. Only for idempotent operations.

const DELAYS_MS = [25, 100, 400];

/** An error that retrying cannot fix (e.g. a conflict): thrown at once. */
export class PermanentError extends Error {}

export async function withRetry<T>(
  what: string,
  op: (attempt: number) => Promise<T>,
  delays: readonly number[] = DELAYS_MS,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op(attempt);
    } catch (err) {
      if (err instanceof PermanentError || attempt >= delays.length) throw err;
      console.warn(`${what} failed (attempt ${attempt + 1}); retrying:`, err instanceof Error ? err.message : err);
      await new Promise((r) => setTimeout(r, delays[attempt]));
    }
  }
}
