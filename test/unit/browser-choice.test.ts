// The browser tests' Chromium: an explicit path wins and must exist; otherwise the system one or
// the packaged one, which must unpack to a runnable file with the package's headless flags.
import { accessSync, constants } from "node:fs";
import { describe, expect, it } from "vitest";
import { chooseChromium, SINGLE_PROCESS } from "../e2e/browser";

describe("chooseChromium", () => {
  it("takes CHROMIUM_PATH first and refuses one that does not exist", async () => {
    const self = process.execPath;
    await expect(chooseChromium({ CHROMIUM_PATH: self })).resolves.toMatchObject({
      executablePath: self,
      source: "CHROMIUM_PATH",
    });
    await expect(chooseChromium({ CHROMIUM_PATH: "/nonexistent/chromium" })).rejects.toThrow(/does not exist/);
  });

  it("finds a runnable Chromium with no setting at all", async () => {
    const choice = await chooseChromium({});
    accessSync(choice.executablePath, constants.X_OK);
    expect(choice.args).toContain("--no-sandbox");
    if (choice.source === "@sparticuz/chromium") expect(choice.args.some((a) => a.startsWith("--headless"))).toBe(true);
    // One process for the whole browser: closing one context could end it for every test after.
    expect(choice.args).not.toContain(SINGLE_PROCESS);
  }, 60_000);
});
