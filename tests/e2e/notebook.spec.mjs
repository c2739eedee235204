// The quickstart notebook in a real headless Chromium: run every cell, then use the
// test-call form widget (`%tool try countdown`) like a person: press Run, see the result.
//
// Run by tests/e2e/test_sidebar.py::test_quickstart_widgets_in_browser, which starts
// JupyterLab and sets NEXUS_E2E_URL, NEXUS_E2E_TOKEN, NEXUS_E2E_SCREENSHOT, NEXUS_E2E_BROWSER.
import { launchBrowser, openNotebook, runAllCells } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL;
const token = process.env.NEXUS_E2E_TOKEN;
const screenshot = process.env.NEXUS_E2E_SCREENSHOT;
const started = Date.now();
const step = m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1400 } })).newPage();
  await openNotebook(page, base, token, 'notebooks/01-quickstart.ipynb');
  step('notebook open, kernel idle');
  await runAllCells(page);
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
