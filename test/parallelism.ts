// How many test files run at once, in every project that allows it (e2e runs one at a time).
// Vitest's default is one fewer than the cores: a single worker on the 2-core CI machine, where
// most of a file's time is spent waiting on workerd, the local stack or a timer. One more than the
// cores when the projects run alone: the workers project on 2 cores left the CPU idle 31% of its
// time with two files at once, 15% with three, and took 283 s instead of 338 s (vmstat beside
// `vitest run --project workers`). `npm test` (scripts/test.mjs) runs the end-to-end project beside
// the others and sets TEST_MAX_WORKERS to the cores' count, so the two together fill the machine.
// One more than the cores there was slower: in a clean-clone run beside the end-to-end project, the
// others took 721 s and the end-to-end 700 s with three files at once, against 697 s and 598 s with two
// (one run each, on 2 cores: the e2e stack and browser lose the CPU the third file takes).
// Each project resolves its own value, so each project config sets it (the projects that run
// together must agree on it).
import { availableParallelism } from "node:os";

const set = Number(process.env.TEST_MAX_WORKERS);
export const MAX_WORKERS = Number.isInteger(set) && set > 0 ? set : availableParallelism() + 1;
