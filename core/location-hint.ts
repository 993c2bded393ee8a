// Where a new Durable Object should live, from where its creating request came from. A hint only
// matters on the first get() of a new object id: Cloudflare places the object then and it never
// moves, so later requests (from anywhere) find it where it was made. The caller's continent is
// the coarse answer; its country (or longitude, in North America) splits the continents that span
// two of Cloudflare's regions.

export type LocationHint = "wnam" | "enam" | "sam" | "weur" | "eeur" | "apac" | "oc" | "afr" | "me";

/** What the request says about its origin (a subset of `request.cf`). */
export interface RequestOrigin {
  continent?: string;
  country?: string;
  longitude?: string;
}

// Countries of Europe served from eastern European locations rather than western ones.
const EASTERN_EUROPE = new Set([
  "BG",
  "BY",
  "CZ",
  "EE",
  "FI",
  "GR",
  "HU",
  "LT",
  "LV",
  "MD",
  "PL",
  "RO",
  "RS",
  "RU",
  "SK",
  "UA",
  "TR",
  "CY",
  "AL",
  "BA",
  "ME",
  "MK",
  "XK",
  "HR",
  "SI",
]);
// Countries Cloudflare counts as Asia that its "me" region serves.
const MIDDLE_EAST = new Set(["AE", "BH", "IL", "IQ", "IR", "JO", "KW", "LB", "OM", "PS", "QA", "SA", "SY", "YE"]);
// West of this longitude North America is nearer the western region's locations.
const WEST_OF = -100;

const HINTS: ReadonlySet<string> = new Set<LocationHint>([
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "apac",
  "oc",
  "afr",
  "me",
]);

/** A hint read back from storage, or null when it is none of the known ones. */
export function asLocationHint(value: unknown): LocationHint | null {
  return typeof value === "string" && HINTS.has(value) ? (value as LocationHint) : null;
}

/** A namespace `get()`'s options carrying a hint, or none. */
export const withLocationHint = (hint: LocationHint | null | undefined): { locationHint: LocationHint } | undefined =>
  hint ? { locationHint: hint } : undefined;

/** The location hint for an object created by a request from `origin`, or null (no hint: Cloudflare picks). */
export function locationHintFor(origin: RequestOrigin | undefined): LocationHint | null {
  const country = origin?.country?.toUpperCase();
  switch (origin?.continent?.toUpperCase()) {
    case "NA":
      return origin?.longitude && Number(origin.longitude) < WEST_OF ? "wnam" : "enam";
    case "SA":
      return "sam";
    case "EU":
      return country && EASTERN_EUROPE.has(country) ? "eeur" : "weur";
    case "AS":
      // Turkey and Cyprus may be reported as Asia: their country decides, as it does under EU.
      if (country && EASTERN_EUROPE.has(country)) return "eeur";
      return country && MIDDLE_EAST.has(country) ? "me" : "apac";
    case "OC":
      return "oc";
    case "AF":
      return "afr";
    default:
      return null;
  }
}
