// Withholding a tool's secret header values from a result builds no pattern per secret (20 headers
// of 4,096 characters of words made 9,120 and took 7.5 s of CPU on 1 MiB; a run of backslashes made
// such a pattern backtrack without bound): plain searches in the text as written and as decoded.
// What it withholds is unchanged: a secret as written, JSON-escaped or percent-encoded, in any mix
// an encoder writes.
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SECRET_WORDS, scrub } from "../../services/tools/http-call";

const Original = globalThis.RegExp;
/** How many RegExps `fn` builds with `new RegExp` / `RegExp()` (literals are not counted). */
function regExpsBuiltBy(fn: () => void): number {
  let built = 0;
  globalThis.RegExp = new Proxy(Original, {
    construct(target, args, newTarget) {
      built++;
      return Reflect.construct(target, args, newTarget);
    },
    apply(target, self, args) {
      built++;
      return Reflect.apply(target, self, args);
    },
  });
  try {
    fn();
  } finally {
    globalThis.RegExp = Original;
  }
  return built;
}

afterEach(() => {
  globalThis.RegExp = Original;
});

describe("scrub", () => {
  it("builds no pattern per secret, however many headers and words", () => {
    const words = (h: number) =>
      Array.from({ length: 455 }, (_, i) => `w${String(h).padStart(2, "0")}${String(i).padStart(5, "0")}`).join(" ");
    const headers = Object.fromEntries(Array.from({ length: 20 }, (_, h) => [`X-H${h}`, words(h)]));
    const last = String(MAX_SECRET_WORDS - 1).padStart(5, "0");
    const past = String(MAX_SECRET_WORDS).padStart(5, "0");
    const text = `start w0700000 middle w19${last} end w03${past} ${headers["X-H4"]} ${"plain ".repeat(1000)}`;
    let out = "";
    expect(regExpsBuiltBy(() => (out = scrub(text, headers)))).toBeLessThanOrEqual(1);
    // The first MAX_SECRET_WORDS words of a value are withheld on their own; a word past them only
    // within the whole value.
    expect(out.startsWith(`start [X-H7 withheld] middle [X-H19 withheld] end w03${past} [X-H4 withheld] plain`)).toBe(
      true,
    );
  });

  it("withholds what it withheld before", () => {
    const token = "sk_live_0123456789abcdef";
    const b64 = "dGVzdC10b2tlbi/+c2VjcmV0+/YWJj";
    const headers = { authorization: `Bearer ${token}`, "x-key": "abcd", "x-b64": b64, "x-short": "abc" };
    const cases: [string, string][] = [
      [`got Bearer ${token}.`, "got [authorization withheld]."],
      [`token ${token} alone`, "token [authorization withheld] alone"],
      ["a key abcd and abc", "a key [x-key withheld] and abc"],
      ["Bearer alone is no secret", "Bearer alone is no secret"],
      [JSON.stringify({ v: b64 }).replaceAll("/", "\\/"), '{"v":"[x-b64 withheld]"}'],
      [`q=${encodeURIComponent(b64)}`, "q=[x-b64 withheld]"],
      [
        `\\u0073\\u006B_live_0123456789ABCDEF ${token.replace("_", "\\u005f")}`,
        "\\u0073\\u006B_live_0123456789ABCDEF [authorization withheld]",
      ],
      ["no secret here", "no secret here"],
    ];
    for (const [text, want] of cases) expect(scrub(text, headers)).toBe(want);
  });

  it("withholds a secret written in a mix of an encoder's escapes and a literal %XX of its own", () => {
    // Go's encoding/json writes & as \u0026; PHP's json_encode writes / as \/.
    expect(scrub('{"X-Sas":"sv=2021\\u0026sig=abc%2Bdefgh"}', { "X-Sas": "sv=2021&sig=abc%2Bdefgh" })).toBe(
      '{"X-Sas":"[X-Sas withheld]"}',
    );
    expect(scrub('{"auth":"Bearer ab\\/cdefgh%3D"}', { Authorization: "Bearer ab/cdefgh%3D" })).toBe(
      '{"auth":"[Authorization withheld]"}',
    );
    // An escape-like character just before a secret does not swallow its start.
    expect(scrub("C:\\nabcdefgh12", { "X-Key": "nabcdefgh12" })).toBe("C:\\[X-Key withheld]");
    expect(scrub("x%2fab12cd34ef", { "X-Key": "2fab12cd34ef" })).toBe("x%[X-Key withheld]");
  });

  it("stays linear on a run of backslashes shorter than a backslash secret", () => {
    // A secret of 4,096 backslashes; the text holds fewer, escaped or not: nothing to withhold, and
    // no search that backtracks over the run.
    const secret = "\\".repeat(4096);
    const text = `${"\\".repeat(4095)}x`;
    expect(scrub(text, { "X-B": secret })).toBe(text);
  });

  it("shows no character of two secrets that overlap", () => {
    expect(scrub("xxxxabcd1234yyyyyyyy!", { A: "xxxxabcd", B: "abcd1234yyyyyyyy" })).toBe("[A withheld]!");
    expect(scrub("anything abcd", {})).toBe("anything abcd");
  });
});
