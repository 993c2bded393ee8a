/**
 * `@stream-error … attempts=K`: only the first K requests with the same prompt fail, so a client's
 * retry succeeds. A small bounded counter per isolate, keyed by the model, the prompt and the length
 * of the conversation, like the prompt cache the offline model keeps.
 */
const MAX_KEYS = 1_000;
const served = new Map<string, number>();

/** Whether this request should fail (and counts it when it does). `attempts` null: every time. */
export function takeStreamFailure(key: string, attempts: number | null): boolean {
  const count = served.get(key) ?? 0;
  if (attempts !== null && count >= attempts) return false;
  served.delete(key);
  served.set(key, count + 1);
  if (served.size > MAX_KEYS) served.delete(served.keys().next().value as string);
  return true;
}

export function resetStreamFaults(): void {
  served.clear();
}
