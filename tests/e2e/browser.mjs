// The headless Chromium every browser spec drives: Debian's /usr/bin/chromium (or
// NEXUS_E2E_BROWSER) through playwright-core, with the flags that work as root on a server.
import { chromium } from 'playwright-core';

export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.NEXUS_E2E_BROWSER ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']
    // Playwright gives every launch a fresh profile directory of its own.
  });
}
