// bench:scale — many tenants on one machine: the cortex shards' size, search latency and D1
// writes per turn (scale-cortex.mjs). Not a timed test: it prints figures.
import { benchScaleCortex } from "./scale-cortex.mjs";

export async function benchScale() {
  await benchScaleCortex();
}
