// How many test files run at once, in every project that allows it (e2e runs one at a time).
// Vitest's default is one fewer than the cores: a single worker on the 2-core CI machine, where
// most of a file's time is spent waiting on workerd, the local stack or a timer. Each project
// resolves its own value, so each project config sets it.
import { availableParallelism } from "node:os";

export const MAX_WORKERS = Math.max(2, availableParallelism());
