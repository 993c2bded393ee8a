// Waits the browser tests share, on the chat page.
import type { Page } from "playwright-core";

/** Waits until no turn streams on the page and at least `n` finished turns are on it. */
export async function turnsSettled(page: Page, n: number): Promise<void> {
  await page.waitForFunction(
    (n) =>
      !document.querySelector(".turn.live") &&
      document.querySelectorAll(".turn.done").length >= n &&
      !!document.querySelector("#send:not([hidden])"),
    n,
    { timeout: 60_000 },
  );
}
