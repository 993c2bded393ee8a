// One schedule, many spellings: the stored spelling (normalizeCron) and the comparison that decides
// whether a schedule sent again is a change (sameSchedule).
import { describe, expect, it } from "vitest";
import { normalizeCron, sameSchedule } from "../../core/cron";

describe("normalizeCron", () => {
  it("trims, collapses whitespace and lower-cases an @name", () => {
    expect(normalizeCron("  *  *\t* *\n* ")).toBe("* * * * *");
    expect(normalizeCron(" @HOURLY ")).toBe("@hourly");
    expect(normalizeCron("@Daily")).toBe("@daily");
    // Field names keep their case: they are read either way.
    expect(normalizeCron("0 9 * jan mon")).toBe("0 9 * jan mon");
  });
});

describe("sameSchedule", () => {
  it("is true for spellings of the same slots", () => {
    expect(sameSchedule("* * * * *", "*  * * * *")).toBe(true);
    expect(sameSchedule("@hourly", "0 * * * *")).toBe(true);
    expect(sameSchedule("@HOURLY", "0 */1 * * *")).toBe(true);
    expect(sameSchedule("0 9 * * MON", "0 9 * * mon")).toBe(true);
    expect(sameSchedule("0 0 * * 0", "0 0 * * 7")).toBe(true);
    expect(sameSchedule("0 0 * * 1-5", "0 0 * * MON,TUE,WED,THU,FRI")).toBe(true);
    // A weekday field naming every day restricts nothing: the day of the month alone decides.
    expect(sameSchedule("* * * * 0-6", "* * * * *")).toBe(true);
  });

  it("is false for schedules with other slots, or one that does not parse", () => {
    expect(sameSchedule("@hourly", "5 * * * *")).toBe(false);
    expect(sameSchedule("@daily", "@weekly")).toBe(false);
    // Both day fields restricted: either day runs, unlike the day of the month alone.
    expect(sameSchedule("0 0 1 * *", "0 0 1 * 1")).toBe(false);
    expect(sameSchedule("0 0 1 * 0-6", "0 0 1 * *")).toBe(false);
    expect(sameSchedule("* * * * *", "not cron")).toBe(false);
  });
});
