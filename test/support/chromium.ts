import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/**
 * The headless Chromium of the browser tests. It comes with the development dependencies
 * (@sparticuz/chromium ships its binary in the package and unpacks it on first use), so the tests
 * need nothing installed by hand; VIGIL_CHROMIUM names another one. The flags keep it off the
 * network this machine does not have.
 */
export async function launchChromium(): Promise<Browser> {
  const chosen = process.env["VIGIL_CHROMIUM"];
  if (chosen !== undefined && !existsSync(chosen)) throw new Error(`no browser at ${chosen} (VIGIL_CHROMIUM)`);
  const executablePath = chosen ?? (await (await import("@sparticuz/chromium")).default.executablePath());
  return chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
