import { describe, expect, it } from "vitest";
import { cronError, dueSlot, matches, nextSlot, parseCron } from "../../core/cron";

const at = (iso: string) => new Date(iso);

describe("cron expressions", () => {
  it("match minutes, hours, steps, ranges and lists in UTC", () => {
    expect(matches(parseCron("0 * * * *"), at("2026-12-02T14:00:00Z"))).toBe(true);
    expect(matches(parseCron("0 * * * *"), at("2026-12-02T14:01:00Z"))).toBe(false);
    expect(matches(parseCron("*/15 9-17 * * MON-FRI"), at("2026-12-02T09:45:00Z"))).toBe(true); // a Wednesday
    expect(matches(parseCron("*/15 9-17 * * MON-FRI"), at("2026-12-05T09:45:00Z"))).toBe(false); // Saturday
    expect(matches(parseCron("30 6 1,15 * *"), at("2026-12-15T06:30:00Z"))).toBe(true);
    expect(matches(parseCron("@daily"), at("2026-12-15T00:00:00Z"))).toBe(true);
    expect(matches(parseCron("0 0 * * 7"), at("2026-12-06T00:00:00Z"))).toBe(true); // Sunday as 7
  });

  it("treats restricted day-of-month and day-of-week as either/or", () => {
    const s = parseCron("0 12 13 * FRI");
    expect(matches(s, at("2026-12-13T12:00:00Z"))).toBe(true); // the 13th, a Sunday
    expect(matches(s, at("2026-12-04T12:00:00Z"))).toBe(true); // a Friday
    expect(matches(s, at("2026-12-05T12:00:00Z"))).toBe(false);
  });

  it("reads a day field starting with '*' as cron does: its values hold, and the other day field must match too", () => {
    const s = parseCron("0 9 */2 * MON");
    expect(matches(s, at("2026-12-07T09:00:00Z"))).toBe(true); // Monday the 7th
    expect(matches(s, at("2026-12-03T09:00:00Z"))).toBe(false); // Thursday the 3rd
    expect(matches(s, at("2026-12-14T09:00:00Z"))).toBe(false); // Monday the 14th
    const everyOtherDay = parseCron("0 9 */2 * *");
    expect(matches(everyOtherDay, at("2026-12-03T09:00:00Z"))).toBe(true);
    expect(matches(everyOtherDay, at("2026-12-04T09:00:00Z"))).toBe(false);
    expect(matches(parseCron("0 9 * * */2"), at("2026-12-08T09:00:00Z"))).toBe(true); // Tuesday (2)
    expect(matches(parseCron("0 9 * * */2"), at("2026-12-07T09:00:00Z"))).toBe(false); // Monday (1)
  });

  it("explains what is wrong with a bad expression", () => {
    expect(cronError("0 * * *")).toMatch(/5 fields/);
    expect(cronError("61 * * * *")).toMatch(/0-59/);
    expect(cronError("0 * * * FUNDAY")).toMatch(/FUNDAY/);
    expect(cronError("*/0 * * * *")).toMatch(/step/);
    // A step is digits, as a value is: not 1e1, not 0x10.
    expect(cronError("*/1e1 * * * *")).toBe('bad step "1e1"');
    expect(cronError("*/0x10 * * * *")).toBe('bad step "0x10"');
    // A day no month it names has: it would never run.
    expect(cronError("0 0 30 2 *")).toBe("never runs: day 30 does not occur in month 2");
    expect(cronError("0 0 31 2,4,6,9,11 *")).toBe("never runs: day 31 does not occur in month 2,4,6,9,11");
    expect(cronError("0 0 29 2 *")).toBeNull();
    expect(cronError("0 0 31 2 MON")).toBeNull();
    expect(cronError("*/2/30 * * * *")).toMatch(/more than one step/);
    expect(cronError("1-5-59 * * * *")).toMatch(/more than two ends/);
    expect(cronError("0 9 * * 1")).toBeNull();
  });

  it("finds the due slot within the lookback, the same one however often it is asked", () => {
    const hourly = parseCron("0 * * * *");
    const now = Date.parse("2026-12-02T14:37:12Z");
    expect(dueSlot(hourly, now, 60)!.toISOString()).toBe("2026-12-02T14:00:00.000Z");
    expect(dueSlot(hourly, now + 5_000, 60)!.toISOString()).toBe("2026-12-02T14:00:00.000Z");
    expect(dueSlot(parseCron("0 9 * * *"), now, 60)).toBeNull();
    expect(dueSlot(parseCron("37 14 * * *"), now, 0)!.toISOString()).toBe("2026-12-02T14:37:00.000Z");
  });
});

describe("the next slot", () => {
  it("is the first matching minute strictly after now, across hours, days, months and years", () => {
    const next = (expr: string, iso: string) => nextSlot(parseCron(expr), Date.parse(iso))?.toISOString() ?? null;
    expect(next("0 * * * *", "2026-12-02T14:00:00Z")).toBe("2026-12-02T15:00:00.000Z");
    expect(next("0 * * * *", "2026-12-02T14:00:59Z")).toBe("2026-12-02T15:00:00.000Z");
    expect(next("*/15 9-17 * * MON-FRI", "2026-12-04T17:50:00Z")).toBe("2026-12-07T09:00:00.000Z"); // Friday evening -> Monday
    expect(next("30 6 1,15 * *", "2026-12-15T06:30:00Z")).toBe("2027-01-01T06:30:00.000Z");
    expect(next("@yearly", "2026-06-01T00:00:00Z")).toBe("2027-01-01T00:00:00.000Z");
    expect(next("0 0 29 2 *", "2026-03-01T00:00:00Z")).toBe("2028-02-29T00:00:00.000Z");
    // A schedule that never matches (refused when written; a row stored before the rule) has none.
    const never = { ...parseCron("0 0 1 2 *"), dayOfMonth: new Set([30]) };
    expect(nextSlot(never, Date.parse("2026-03-01T00:00:00Z"))).toBeNull();
    expect(next("* * * * *", "2026-12-31T23:59:30Z")).toBe("2027-01-01T00:00:00.000Z");
  });

  it("agrees with a minute-by-minute search", () => {
    const start = Date.parse("2026-01-01T00:00:00Z");
    for (const expr of ["0 */6 * * *", "15 10 * * 1-5", "0 0 1 */3 *", "5,35 * 13 * 5", "0 12 * JAN,JUL SUN"]) {
      const s = parseCron(expr);
      let t = start;
      for (let i = 0; i < 20; i++) {
        let slow = Math.floor(t / 60_000) * 60_000 + 60_000;
        while (!matches(s, new Date(slow))) slow += 60_000;
        const fast = nextSlot(s, t)!.getTime();
        expect([expr, new Date(fast).toISOString()]).toEqual([expr, new Date(slow).toISOString()]);
        t = fast;
      }
    }
  });
});
