import { describe, expect, it } from "vitest";
import { asLocationHint, locationHintFor, withLocationHint } from "../../core/location-hint";

describe("location hints from the request's origin", () => {
  it("map each continent to its region, splitting North America by longitude, Europe east/west and the Middle East out of Asia", () => {
    const cases: [Parameters<typeof locationHintFor>[0], string | null][] = [
      [{ continent: "NA", country: "US", longitude: "-122.4" }, "wnam"],
      [{ continent: "NA", country: "US", longitude: "-74.0" }, "enam"],
      [{ continent: "NA", country: "CA" }, "enam"],
      [{ continent: "SA", country: "BR" }, "sam"],
      [{ continent: "EU", country: "DE" }, "weur"],
      [{ continent: "EU", country: "GB" }, "weur"],
      [{ continent: "EU", country: "PL" }, "eeur"],
      [{ continent: "eu", country: "fi" }, "eeur"],
      [{ continent: "AS", country: "JP" }, "apac"],
      [{ continent: "AS", country: "SG" }, "apac"],
      [{ continent: "AS", country: "AE" }, "me"],
      [{ continent: "AS", country: "IL" }, "me"],
      // Turkey and Cyprus, reported as Asia or as Europe: eastern Europe either way.
      [{ continent: "AS", country: "TR" }, "eeur"],
      [{ continent: "AS", country: "CY" }, "eeur"],
      [{ continent: "EU", country: "TR" }, "eeur"],
      [{ continent: "OC", country: "AU" }, "oc"],
      [{ continent: "AF", country: "ZA" }, "afr"],
      [{ continent: "AN" }, null],
      [{}, null],
      [undefined, null],
    ];
    for (const [origin, hint] of cases) expect([origin, locationHintFor(origin)]).toEqual([origin, hint]);
  });
});

describe("stored location hints", () => {
  it("reads back only the known hints, and makes get() options only for a hint", () => {
    expect(asLocationHint("weur")).toBe("weur");
    expect(asLocationHint("mars")).toBeNull();
    expect(asLocationHint(null)).toBeNull();
    expect(withLocationHint("apac")).toEqual({ locationHint: "apac" });
    expect(withLocationHint(null)).toBeUndefined();
  });
});
