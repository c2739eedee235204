// A notebook renamed while its kernel runs: the Tools panel keeps its tools in the
// notebook's own group, under the new name, and "Go to cell" opens the renamed notebook.
//
// Run by tests/e2e/test_follow_notebook.py::test_renamed_notebook_keeps_its_tools, which
// starts JupyterLab and writes Untitled.ipynb (loads the extension, defines `draft_total`),
// then sets NEXUS_E2E_URL, NEXUS_E2E_TOKEN, NEXUS_E2E_SCREENSHOT. Prints one line per step.
import assert from 'node:assert/strict';
import { launchBrowser, openNotebook, runAllCells, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on('pageerror', err => console.log(`page error: ${err}`));
  await openNotebook(page, base, token, 'Untitled.ipynb');
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click();
  await page.locator('.jp-NexusTools-search').waitFor();
  await runAllCells(page);
  const group = page.locator('.jp-NexusTools-group[data-source="this-notebook"]');
  await group.locator('.jp-NexusTools-item[data-tool="draft_total"]').waitFor({ timeout: 20000 });
  assert.match(await group.locator('.jp-NexusTools-groupTitle').innerText(), /This notebook · Untitled\.ipynb/);
  step('draft_total listed under "This notebook · Untitled.ipynb"');

  // File > Rename Notebook…, as a person renames an untitled notebook.
  await page.locator('.jp-Notebook').first().click();
  await page.locator('.lm-MenuBar-itemLabel', { hasText: /^File$/ }).click();
  await page.locator('.lm-Menu-itemLabel', { hasText: /^Rename Notebook/ }).click();
  const input = page.locator('.jp-Dialog input');
  await input.waitFor({ timeout: 5000 });
  await input.fill('analysis.ipynb');
  await page.locator('.jp-Dialog .jp-mod-accept').click();
  await page.locator('.lm-TabBar-tab.lm-mod-current', { hasText: 'analysis.ipynb' }).waitFor({ timeout: 10000 });
  await page.waitForFunction(
    () => /This notebook · analysis\.ipynb/.test(
      document.querySelector('.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-groupTitle')?.textContent ?? ''),
    null,
    { timeout: 10000 }
  );
  await group.locator('.jp-NexusTools-item[data-tool="draft_total"]').waitFor({ timeout: 10000 });
  step('renamed to analysis.ipynb: draft_total stays in "This notebook · analysis.ipynb"');

  await group.locator('.jp-NexusTools-item[data-tool="draft_total"]').click();
  await page.locator('.jp-NexusTools-run').click();
  const result = page.locator('.jp-NexusTools-structured');
  await result.waitFor({ timeout: 15000 });
  assert.equal((await result.innerText()).trim(), '6');
  step('Try still runs it in the kernel: 6');
  await page.locator('.jp-Notebook .jp-Cell').first().locator('.jp-InputArea-prompt').click();
  await page.locator('.jp-NexusTools-goToCell').click();
  await page.waitForFunction(
    () => /def draft_total/.test(document.querySelector('.jp-Notebook .jp-Cell.jp-mod-active')?.textContent ?? ''),
    null,
    { timeout: 5000 }
  );
  const tabs = await page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab').allInnerTexts();
  assert.deepEqual(tabs.map(t => t.trim()), ['analysis.ipynb']);
  step('Go to cell selected the defining cell of analysis.ipynb (no other tab opened)');
  await page.screenshot({ path: screenshot });
  step('all steps passed');
} catch (err) {
  if (page) await page.screenshot({ path: screenshot.replace(/\.png$/, '-failed.png') });
  throw err;
} finally {
  await browser.close();
}
