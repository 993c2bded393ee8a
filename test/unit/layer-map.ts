// The house's layers, lowest first, shared by the layers test and the architecture doc's test.
/** Lowest first. Folders on one line share a layer. data/ holds files code imports (Text and Data modules), never code. */
export const LAYERS: readonly (readonly string[])[] = [
  ["core", "r2-layout", "db", "data"],
  ["services"],
  ["agent"],
  ["durable-objects"],
  ["workers"],
];
