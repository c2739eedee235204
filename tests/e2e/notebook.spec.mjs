// The quickstart notebook in a real headless Chromium: run every cell, then use the
// test-call form widget (`%tool try countdown`) like a person: press Run, see the result.
//
// Run by tests/e2e/test_sidebar.py::test_quickstart_widgets_in_browser, which starts
// JupyterLab and sets NEXUS_E2E_URL, NEXUS_E2E_TOKEN, NEXUS_E2E_SCREENSHOT, NEXUS_E2E_BROWSER.
import { launchBrowser } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL;
const token = process.env.NEXUS_E2E_TOKEN;
const screenshot = process.env.NEXUS_E2E_SCREENSHOT;
const started = Date.now();
const step = m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1400 } })).newPage();
  await page.goto(`${base}lab/workspaces/nb-${Date.now()}/tree/notebooks/01-quickstart.ipynb?reset&token=${token}`);
  await page.waitForSelector('.jp-Notebook .jp-Cell', { timeout: 60000 });
  // The kernel must be ready before "Run All", or the first cells can race its start.
  await page.locator('.jp-Toolbar-kernelStatus, .jp-KernelStatus').first()
    .waitFor({ timeout: 60000 }).catch(() => {});
  await page.waitForFunction(
    () => /Idle/.test(document.querySelector('.jp-StatusBar-Widget, #jp-main-statusbar')?.textContent ?? ''),
    null, { timeout: 90000 });
  step('notebook open, kernel idle');
  await page.locator('.jp-Notebook').first().click();
  await page.keyboard.press('Control+Shift+C');
  await page.locator('.lm-CommandPalette input').waitFor({ timeout: 10000 });
  await page.keyboard.type('Run All Cells');
  await page.keyboard.press('Enter');
  step('ran all cells');
  const run = page.locator('.jupyter-widgets button:has-text("Run")').first();
  await run.waitFor({ timeout: 120000 });
  step('form widget rendered');
  const errors = await page.locator('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]').count();
  if (errors > 0) {
    const text = await page.locator('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]').first().innerText();
    // The quickstart shows one deliberate UsageError; anything else is a failure.
    if (!/UsageError/.test(text)) throw new Error(`a cell failed: ${text}`);
  }
  await run.scrollIntoViewIfNeeded();
  await run.click();
  await page.locator('.jupyter-widgets :text("liftoff")').first().waitFor({ timeout: 30000 });
  step('Run pressed: result shown in the form');
  await page.screenshot({ path: screenshot });
  step('screenshot saved');
} catch (err) {
  if (page) await page.screenshot({ path: screenshot.replace(/\.png$/, '-failed.png') });
  throw err;
} finally {
  await browser.close();
}
