// bench:scale — many tenants on one machine, printed, not timed: the cortex shards' size, search
// latency and D1 writes per turn (scale-cortex.mjs), then the cron tick's work per invocation at
// 100 and 1,000 tenants (scale-cron.mjs). BENCH_SCALE_PART=cortex|cron runs one part.
import { benchScaleCortex } from "./scale-cortex.mjs";
import { benchScaleCron } from "./scale-cron.mjs";

export async function benchScale() {
  const part = process.env.BENCH_SCALE_PART;
  if (!part || part === "cortex") await benchScaleCortex();
  if (!part || part === "cron") await benchScaleCron();
}
