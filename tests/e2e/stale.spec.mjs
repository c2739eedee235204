// Stale tool files as a notebook shows them, in a real headless Chromium: run every cell of
// stale.ipynb (it breaks a tool file, then lists, calls and browses), wait for the outputs,
// save a screenshot; then a failing tool's %tool call shows the traceback of its cell. Run by tests/e2e/test_follow_notebook.py::test_stale_file_in_notebook.
import assert from 'node:assert/strict';
import { launchBrowser, openNotebook, runAllCells, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1500 } })).newPage();
  await openNotebook(page, base, token, 'stale.ipynb');
  await runAllCells(page);
  step('ran all cells');
  const warning = page.locator('.jp-OutputArea :text("the last good version of the tool ran")');
  await warning.first().waitFor({ timeout: 60000 });
  const catalog = page.locator('.jupyter-widgets :text("circle_area.py failed to load")');
  await catalog.first().waitFor({ timeout: 30000 });
  const listed = await page.locator('.jp-OutputArea .nexus-tools').first().innerText();
  assert.match(listed, /stale/);
  assert.match(listed, /failed to reload \(SyntaxError: invalid syntax, line 7\)/);
  step('%tool list, %tool call and %tools show the stale tool with its error and line');
  const trace = page.locator('.jp-OutputArea .nexus-traceback pre');
  await trace.waitFor({ timeout: 30000 });
  const traceText = await trace.innerText();
  assert.match(traceText, /Cell In\[\d+\], line 5, in ratio/);
  assert.doesNotMatch(traceText, /nexus_jupyter\//);
  step(`%tool call of a failing tool shows its traceback: ${traceText.split('\n')[1].trim()}`);
  await page.screenshot({ path: screenshot, fullPage: true });
  step('screenshot saved');
} catch (err) {
  if (page) await page.screenshot({ path: screenshot.replace(/\.png$/, '-failed.png') });
  throw err;
} finally {
  await browser.close();
}
