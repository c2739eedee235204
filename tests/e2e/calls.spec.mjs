// The calls lines of a kernel's tool follow the notebook's own calls, in a real headless
// Chromium against a real kernel.
//
// Run by tests/e2e/test_follow_notebook.py, which starts JupyterLab, starts the notebook's
// kernel through the REST API (a session) and runs its first two cells (the extension, the
// `triple` tool), then sets NEXUS_E2E_URL, NEXUS_E2E_TOKEN, NEXUS_E2E_SCREENSHOT (a prefix:
// -N.png is added) and NEXUS_E2E_NOTEBOOK. Prints one line per step; exits non-zero on failure.
import assert from 'node:assert/strict';
import { launchBrowser, openNotebook, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();
const shots = screenshot.replace(/\.png$/, '');
const notebook = process.env.NEXUS_E2E_NOTEBOOK;

const browser = await launchBrowser();
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', err => console.log(`page error: ${err}`));
  await openNotebook(page, base, token, notebook);
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click();
  await page.locator('.jp-NexusTools-search').waitFor();
  const item = page.locator(
    '.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-item[data-tool="triple"]'
  );
  await item.waitFor({ timeout: 15000 });
  await item.click();
  const lines = page.locator('.jp-NexusTools-calls');
  const server = lines.nth(0);
  const mine = page.locator('.jp-NexusTools-notebookCalls');
  await mine.waitFor({ timeout: 10000 });
  assert.equal((await server.innerText()).trim(), 'No calls on this server yet.');
  assert.equal((await mine.innerText()).trim(), `No calls from ${notebook} yet.`);
  step(`triple open: "${await server.innerText()}" / "${await mine.innerText()}"`);
  await page.screenshot({ path: `${shots}-1-none.png` });

  // The notebook calls its own tool: `%tool call triple x=4;` (cell 2), run in the page.
  const cell = page.locator('.jp-Notebook .jp-Cell').nth(2);
  await cell.locator('.jp-InputArea-prompt').click();
  await page.keyboard.press('Control+Enter');
  await mine.filter({ hasText: /Calls from .*: 1, 0 failed \(0%\)/ }).waitFor({ timeout: 10000 });
  assert.equal((await server.innerText()).trim(), 'No calls on this server yet.');
  step(`the notebook called it: "${await mine.innerText()}"; the server line stays "No calls"`);
  const title = await mine.getAttribute('title');
  assert.match(title, /made in its own kernel/);
  await page.screenshot({ path: `${shots}-2-notebook.png` });

  // Try in the panel: a call through the server, on the server's line only.
  await page.locator('#jp-NexusTools-triple_x').fill('5');
  await page.locator('.jp-NexusTools-run').click();
  const result = page.locator('.jp-NexusTools-structured');
  await result.waitFor({ timeout: 15000 });
  assert.equal((await result.innerText()).trim(), '15');
  await server.filter({ hasText: /Calls on this server: 1, 0 failed/ }).waitFor({ timeout: 10000 });
  assert.match(await mine.innerText(), /Calls from .*: 1, 0 failed/);
  step(`Try ran it: "${await server.innerText()}"; the notebook's line stays at 1`);
  await page.locator('.jp-NexusTools-calls').first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}-3-try.png` });
  step('all steps passed');
} catch (err) {
  if (page) await page.screenshot({ path: `${shots}-failed.png` });
  throw err;
} finally {
  await browser.close();
}
