import { describe, expect, it } from "vitest";
import { cronError, dueSlot, matches, parseCron } from "../../core/cron";

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

  it("explains what is wrong with a bad expression", () => {
    expect(cronError("0 * * *")).toMatch(/5 fields/);
    expect(cronError("61 * * * *")).toMatch(/0-59/);
    expect(cronError("0 * * * FUNDAY")).toMatch(/FUNDAY/);
    expect(cronError("*/0 * * * *")).toMatch(/step/);
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
