// The Tools panel follows the notebook, in a real headless Chromium against a real kernel.
//
// Run by tests/e2e/test_follow_notebook.py, which starts JupyterLab, starts the notebook's
// kernel through the REST API (a session) and runs its first cell (`limit = 7`), then sets
// NEXUS_E2E_URL, NEXUS_E2E_TOKEN, NEXUS_E2E_SCREENSHOT (a prefix: -N.png is added),
// NEXUS_E2E_NOTEBOOK, NEXUS_E2E_KERNEL. Prints one line per step; exits non-zero on failure.
import assert from 'node:assert/strict';
import { launchBrowser, openNotebook, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();
const shots = screenshot.replace(/\.png$/, '');
const notebook = process.env.NEXUS_E2E_NOTEBOOK;
const kernelId = process.env.NEXUS_E2E_KERNEL;

const browser = await launchBrowser();
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', err => console.log(`page error: ${err}`));
  await openNotebook(page, base, token, notebook);
  step('notebook open on the kernel started through REST; kernel idle');

  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click();
  await page.locator('.jp-NexusTools-search').waitFor();
  const mine = name =>
    page.locator(`.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-item[data-tool="${name}"]`);

  const cell = i => page.locator('.jp-Notebook .jp-Cell').nth(i);
  const runCell = async i => {
    await cell(i).locator('.jp-InputArea-prompt').click();
    await page.keyboard.press('Control+Enter');
  };
  await runCell(1); // defines get_limit, which reads the global `limit` of cell 0
  await mine('get_limit').waitFor({ timeout: 10000 });
  const title = await page.locator('.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-groupTitle').innerText();
  assert.match(title, /This notebook · follow\.ipynb/);
  const firstGroup = await page.locator('.jp-NexusTools-group').first().getAttribute('data-source');
  assert.equal(firstGroup, 'this-notebook');
  step(`ran the defining cell: get_limit listed first, under "${title.replace(/\s+/g, ' ')}"`);
  await page.screenshot({ path: `${shots}-1-listed.png` });

  // A tool exported from this notebook: listed in its group, owned by its file now.
  const exported = mine('shout');
  await exported.waitFor({ timeout: 10000 });
  assert.match(await exported.innerText(), /exported → shout\.py/);
  await exported.click();
  const owner = page.locator('.jp-NexusTools-owner');
  await owner.waitFor({ timeout: 5000 });
  assert.match(await owner.innerText(), /Exported from follow\.ipynb: shout\.py owns this tool now/);
  step(`exported shout: shout.py owns it ("${await owner.innerText()}")`);
  await page.locator('.jp-NexusTools-openFile').click();
  await page.locator('.lm-TabBar-tab.lm-mod-current', { hasText: 'shout.py' }).waitFor({ timeout: 10000 });
  step('Open file opened shout.py in an editor tab');
  await page.screenshot({ path: `${shots}-5-open-file.png` });
  await page.locator('.jp-NexusTools-back').click();
  await page.locator('.lm-TabBar-tab', { hasText: 'follow.ipynb' }).click();

  await mine('get_limit').click();
  await page.locator('.jp-NexusTools-run').click();
  const result = page.locator('.jp-NexusTools-structured');
  await result.waitFor({ timeout: 15000 });
  assert.equal((await result.innerText()).trim(), '7');
  step('Try ran it in the kernel: 7 (the live global)');
  await page.screenshot({ path: `${shots}-2-try.png` });

  // Go to cell: select another cell first, then jump back to the defining one.
  await cell(0).locator('.jp-InputArea-prompt').click();
  await page.locator('.jp-NexusTools-goToCell').click();
  await page.waitForFunction(
    () => /def get_limit/.test(document.querySelector('.jp-Notebook .jp-Cell.jp-mod-active')?.textContent ?? ''),
    null,
    { timeout: 5000 }
  );
  step('Go to cell selected the cell that defines get_limit');

  // Re-run the cell with a change: `return limit` -> `return limit * 3`.
  await cell(1).locator('.cm-content').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' * 3');
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(
    () => document.querySelector('.jp-NexusTools-toolName')?.textContent === 'get_limit',
    null,
    { timeout: 5000 }
  );
  const deadline = Date.now() + 10000;
  let value = '';
  while (Date.now() < deadline) {
    await page.locator('.jp-NexusTools-run').click();
    await page.waitForTimeout(300); // the details reload as the change event arrives
    value = (await result.innerText().catch(() => '')).trim();
    if (value === '21') break;
  }
  assert.equal(value, '21');
  step('re-ran the cell with a change: the panel runs the new version (21)');

  // A tool that raises: the traceback points at the notebook cell and line.
  await page.locator('.jp-NexusTools-back').click();
  await runCell(2);
  await mine('ratio').waitFor({ timeout: 10000 });
  await mine('ratio').click();
  await page.locator('#jp-NexusTools-ratio_x').fill('0');
  await page.locator('.jp-NexusTools-run').click();
  const trace = page.locator('.jp-NexusTools-traceback pre');
  await trace.waitFor({ timeout: 15000 });
  const traceText = await trace.innerText();
  assert.match(traceText, /Cell In\[\d+\], line 5, in ratio/);
  assert.match(traceText, /ZeroDivisionError/);
  assert.doesNotMatch(traceText, /nexus_jupyter\//);
  const errorLine = await page.locator('.jp-NexusTools-result > pre.jp-NexusTools-errorText').innerText();
  assert.match(errorLine, /^ZeroDivisionError: float division by zero/);
  step(`a failing tool shows its own traceback: ${traceText.split('\n')[1].trim()}`);
  await page.screenshot({ path: `${shots}-3-traceback.png` });
  await page.locator('.jp-NexusTools-back').click();

  // Restart the kernel (REST): its tools leave the panel.
  const restart = await page.request.post(`${base}api/kernels/${kernelId}/restart`, {
    headers: { Authorization: `token ${token}` }
  });
  assert.equal(restart.status(), 200);
  await page.waitForFunction(
    () => !document.querySelector('.jp-NexusTools-item[data-tool="get_limit"]'),
    null,
    { timeout: 15000 }
  );
  // The file it exported is no longer the notebook's (the kernel that exported it is gone):
  // it is listed with its folder's tools, and the notebook's group is gone with its tools.
  const shout = page.locator('.jp-NexusTools-group[data-source^="directory"] .jp-NexusTools-item[data-tool="shout"]');
  await shout.waitFor({ timeout: 15000 });
  assert.equal(await page.locator('.jp-NexusTools-group[data-source="this-notebook"]').count(), 0);
  step('restarted the kernel: its tools left the panel, its exported file is its folder\'s');
  await page.screenshot({ path: `${shots}-4-restarted.png` });
  step('all steps passed');
} catch (err) {
  if (page) await page.screenshot({ path: `${shots}-failed.png` });
  throw err;
} finally {
  await browser.close();
}
