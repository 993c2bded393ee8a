// The 400s a schedule gets through the API: cron features of other crons named as unsupported,
// spaces cron does not read named by code point, and the 100-character bound counted on the
// spelling stored (trimmed, fields one space apart), not on the spaces sent between fields.
import { describe, expect, it } from "vitest";
import { postAutomation } from "./automation-helpers";
import { api, newTenant } from "./helpers";

describe("schedule refusals", () => {
  it("names L, W, # and ? as unsupported, with the field, in a 400 naming schedule", async () => {
    const key = await newTenant();
    for (const [schedule, expected] of [
      ["0 0 L * *", 'schedule: "L" in day-of-month is not supported'],
      ["0 0 * * 5#2", 'schedule: "#" in day-of-week ("5#2") is not supported'],
      ["0 9 ? * MON", 'schedule: "?" in day-of-month is not supported'],
      ["0 0 15W * *", 'schedule: "W" in day-of-month ("15W") is not supported'],
    ]) {
      const r = await postAutomation(key, { schedule });
      expect(r.status, schedule).toBe(400);
      expect(r.json.error?.type, schedule).toBe("invalid_request");
      expect(r.json.error?.message, schedule).toContain(expected);
    }
    // The syntax errors keep their label; a schedule that never runs keeps its own.
    expect((await postAutomation(key, { schedule: "0 0 1 JULY *" })).json.error?.message).toContain(
      'schedule: not a cron expression: "JULY" is not in 1-12',
    );
    expect((await postAutomation(key, { schedule: "0 0 31 4 *" })).json.error?.message).toContain(
      "schedule: never runs: day 31 does not occur in month 4",
    );
  });

  it("refuses a space other than ASCII whitespace between fields, naming its code point", async () => {
    const key = await newTenant();
    for (const code of ["00A0", "3000"]) {
      const r = await postAutomation(key, { schedule: `0${String.fromCodePoint(Number.parseInt(code, 16))}9 * * *` });
      expect(r.status, code).toBe(400);
      expect(r.json.error?.message, code).toContain(
        `schedule: not a cron expression: U+${code} is no space this cron reads between fields`,
      );
    }
    // A PATCH is held to it too.
    const created = await postAutomation(key, { schedule: "0 9 * * *" });
    expect(created.status).toBe(201);
    const patched = await api("PATCH", `/v1/automations/${created.json.id}`, { schedule: "0 9\u00a0* * *" }, { key });
    expect(patched.status).toBe(400);
    expect(patched.json.error?.message).toContain("U+00A0");
  });

  it("bounds the stored spelling at 100 characters: spaces sent between fields do not count", async () => {
    const key = await newTenant();
    // 119 characters as sent, 9 as stored.
    const spaced = `0${" ".repeat(100)}9 * * *  `;
    const created = await postAutomation(key, { schedule: spaced });
    expect(created.status).toBe(201);
    expect(created.json.schedule).toBe("0 9 * * *");
    const patched = await api("PATCH", `/v1/automations/${created.json.id}`, { schedule: `${spaced}\t` }, { key });
    expect(patched.status).toBe(200);
    expect(patched.json.schedule).toBe("0 9 * * *");
    // A minute list making 100 characters stored is taken; one more ("010" is 10) is not.
    const minutes = Array.from({ length: 31 }, (_, i) => String(10 + i)).join(",");
    const hundred = `${minutes} * * * *`;
    expect(hundred.length).toBe(100);
    expect((await postAutomation(key, { schedule: hundred })).status).toBe(201);
    const over = await postAutomation(key, { schedule: `0${hundred}` });
    expect(over.status).toBe(400);
    expect(over.json.error?.message).toContain(
      "schedule: at most 100 characters once trimmed and its fields one space apart",
    );
  });
});
