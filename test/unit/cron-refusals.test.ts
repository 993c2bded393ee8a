// How a schedule is refused: each refusal carries its kind (a syntax error, a cron feature this
// one does not read, or a schedule that never runs), so callers need not read its wording; the
// L, W, # and ? of other crons are named as unsupported; and only ASCII whitespace separates fields.
import { describe, expect, it } from "vitest";
import { cronError, cronProblem, normalizeCron } from "../../core/cron";

describe("cronProblem", () => {
  it("labels each refusal by its kind, and answers null for a schedule that parses", () => {
    expect(cronProblem("61 * * * *")).toEqual({ kind: "syntax", message: '"61" is not in 0-59' });
    expect(cronProblem("0 * * *")?.kind).toBe("syntax");
    expect(cronProblem("0 0 30 2 *")).toEqual({
      kind: "never",
      message: "never runs: day 30 does not occur in month 2",
    });
    expect(cronProblem("0 0 L * *")?.kind).toBe("unsupported");
    expect(cronProblem("0 9 * * 1-5")).toBeNull();
    expect(cronProblem("@daily")).toBeNull();
  });
});

describe("the L, W, # and ? of other crons", () => {
  it("are refused as not supported, naming the character and its field", () => {
    const cases: [string, string, string][] = [
      ["0 0 L * *", "L", "day-of-month"],
      ["0 0 LW * *", "LW", "day-of-month"],
      ["0 0 15W * *", "W", "day-of-month"],
      ["0 0 * * 5L", "L", "day-of-week"],
      ["0 0 * * L", "L", "day-of-week"],
      ["0 0 * * 5#2", "#", "day-of-week"],
      ["0 0 * * MON#1", "#", "day-of-week"],
      ["0 9 ? * MON", "?", "day-of-month"],
      ["0 9 1 * ?", "?", "day-of-week"],
      ["0 0 L-3 * *", "L", "day-of-month"],
      ["0 0 1,L * *", "L", "day-of-month"],
      ["0 0 1 * 1-5L", "L", "day-of-week"],
      ["? * * * *", "?", "minute"],
      ["0 0 15w * *", "w", "day-of-month"],
    ];
    for (const [expression, char, field] of cases) {
      const problem = cronProblem(expression);
      expect(problem?.kind, expression).toBe("unsupported");
      expect(problem?.message, expression).toMatch(new RegExp(`^"${char.replace("?", "\\?")}" in ${field}\\b`));
      expect(problem?.message, expression).toContain("not supported");
    }
    expect(cronError("0 0 15W * *")).toBe(
      '"W" in day-of-month ("15W") is not supported: this cron reads no L, W, # or ? (as Cloudflare\'s and Quartz\'s do)',
    );
  });

  it("and Quartz's six and seven fields (seconds first, a year last) are refused as not supported, not miscounted", () => {
    expect(cronProblem("0 0 9 ? * MON")).toEqual({
      kind: "unsupported",
      message:
        "has 6 fields: a seconds field (as Quartz's crons have) is not supported; write 5 fields: minute hour day-of-month month day-of-week",
    });
    expect(cronProblem("0 0 12 * * ? 2027")?.kind).toBe("unsupported");
    expect(cronProblem("0 0 12 * * ? 2027")?.message).toMatch(/^has 7 fields: a seconds field and a year field /);
    // Four or eight fields are no cron's: a syntax error.
    expect(cronProblem("0 12 * *")?.kind).toBe("syntax");
    expect(cronProblem("0 0 12 * * ? 2027 x")?.kind).toBe("syntax");
  });

  it("leave names that hold those letters alone: JUL, WED, and a misspelt name is a plain syntax error", () => {
    expect(cronError("0 0 1 JUL *")).toBeNull();
    expect(cronError("0 0 * APR-JUL WED")).toBeNull();
    expect(cronError("0 0 * * TUE,WED")).toBeNull();
    expect(cronProblem("0 0 1 JULY *")).toEqual({ kind: "syntax", message: '"JULY" is not in 1-12' });
    expect(cronProblem("0 0 * * WEDS")).toEqual({ kind: "syntax", message: '"WEDS" is not in 0-7' });
  });
});

describe("whitespace between fields", () => {
  it("is ASCII whitespace: spaces, tabs and line breaks separate fields", () => {
    expect(cronError("0\t9  *\n* *")).toBeNull();
    // Around the whole expression, whitespace of any kind is trimmed.
    expect(cronError("\u00a00 9 * * *\u3000")).toBeNull();
  });

  it("refuses any other space between fields, naming it by its code point", () => {
    for (const [space, code] of [
      ["\u00a0", "U+00A0"],
      ["\u3000", "U+3000"],
      ["\u2009", "U+2009"],
      ["\u202f", "U+202F"],
      ["\ufeff", "U+FEFF"],
      ["\u2028", "U+2028"],
    ]) {
      const problem = cronProblem(`0${space}9 * * *`);
      expect(problem, code).toEqual({
        kind: "syntax",
        message: `${code} is no space this cron reads between fields: separate them with plain spaces or tabs`,
      });
      // Beside plain spaces too: it is not swallowed by them.
      expect(cronProblem(`0 ${space} 9 * * *`)?.message, code).toContain(code);
    }
  });

  it("is collapsed in the stored spelling only where it is ASCII, so a refused space stays visible", () => {
    expect(normalizeCron("0 \t 9 * * *")).toBe("0 9 * * *");
    expect(normalizeCron("0\u00a09 * * *")).toBe("0\u00a09 * * *");
  });
});
