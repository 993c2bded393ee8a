// Expressions that are names of the plain object's own properties ("__proto__", "constructor"):
// no shorthand, so a bad expression answered as such.
import { describe, expect, it } from "vitest";
import { cronError } from "../../core/cron";

describe("cron shorthands", () => {
  it("are only the @ names: an inherited property name is a bad expression, said plainly", () => {
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "__PROTO__"])
      expect(cronError(name)).toBe("needs 5 fields: minute hour day-of-month month day-of-week");
    expect(cronError("@daily")).toBeNull();
  });
});
