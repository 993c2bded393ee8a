// An R2 binding that refuses calls past a count, as an invocation's subrequest limit does.
import { env } from "cloudflare:workers";

/** env.BUCKET, counting its calls and refusing them past `limit`, as an invocation's subrequest limit does. */
export function limitedBucket(limit: number): R2Bucket {
  let calls = 0;
  return new Proxy(env.BUCKET, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls += 1;
        if (calls > limit) throw new Error("Too many subrequests.");
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
