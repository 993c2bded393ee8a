// Server tools lead the cached prefix: one fixed order whatever order a setting lists them in.
import { describe, expect, it } from "vitest";
import { serverToolSpecs } from "../../core/model-params";
import { catalogEntry } from "../../core/models/lookup";

describe("server tool specs", () => {
  it("come in one order for one set, and leave out what the model lacks", () => {
    const sonnet = catalogEntry("claude-sonnet-5-5")!;
    const a = serverToolSpecs(["web_search", "web_fetch"], sonnet);
    expect(serverToolSpecs(["web_fetch", "web_search"], sonnet)).toEqual(a);
    expect(a.map((t) => t.name)).toEqual(["web_search", "web_fetch"]);
    expect(serverToolSpecs(["web_fetch"], { ...sonnet, serverTools: [] })).toEqual([]);
  });
});
