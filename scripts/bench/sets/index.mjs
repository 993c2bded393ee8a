// The recall sets bench:recall-public knows, each read from its own subfolder of RECALL_DATA_DIR
// (docs/recall-sets.md: where each comes from, its licence, the folder layout).
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import * as locomo from "./locomo.mjs";
import * as longmemeval from "./longmemeval.mjs";
import * as realmem from "./realmem.mjs";
import * as realtalk from "./realtalk.mjs";

export const LOADERS = { realmem, locomo, realtalk, longmemeval };

/** The one set the ranking may be tuned on; every other set is reported held out. */
export const TUNING_SET = "realmem";

/** Names of the sets whose subfolder exists under `dir` (all of them, in LOADERS order), or just `only`. */
export function setsIn(dir, only) {
  if (only && !LOADERS[only]) throw new Error(`--set: one of ${Object.keys(LOADERS).join(", ")} (got "${only}")`);
  return Object.keys(LOADERS).filter(
    (name) => (!only || name === only) && existsSync(join(dir, name)) && statSync(join(dir, name)).isDirectory(),
  );
}

export function loadSet(dir, name) {
  return LOADERS[name].loadSet(join(dir, name));
}
