// bench:scale — how the platform's per-invocation work grows with tenants, printed, not timed.
// The cron part is scale-cron.mjs.
import { benchScaleCron } from "./scale-cron.mjs";

export async function benchScale() {
  await benchScaleCron();
}
