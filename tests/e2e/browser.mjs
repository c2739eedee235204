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

// Open `path` in a fresh JupyterLab workspace and wait until its kernel is idle.
export async function openNotebook(page, base, token, path) {
  await page.goto(`${base}lab/workspaces/nb-${Date.now()}/tree/${path}?reset&token=${token}`);
  await page.waitForSelector('.jp-Notebook .jp-Cell', { timeout: 60000 });
  await page.waitForFunction(
    () => /Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent ?? ''),
    null,
    { timeout: 90000 }
  );
}

// "Run All Cells" from the command palette.
export async function runAllCells(page) {
  await page.locator('.jp-Notebook').first().click();
  await page.keyboard.press('Control+Shift+C');
  await page.locator('.lm-CommandPalette input').waitFor({ timeout: 10000 });
  await page.keyboard.type('Run All Cells');
  await page.keyboard.press('Enter');
}

// What a spec reads from its environment (set by tests/e2e/test_sidebar.py's _run_spec),
// and a step logger that prints the seconds since the spec started.
export function specSetup() {
  const started = Date.now();
  return {
    base: process.env.NEXUS_E2E_URL,
    token: process.env.NEXUS_E2E_TOKEN,
    screenshot: process.env.NEXUS_E2E_SCREENSHOT,
    step: m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`)
  };
}
