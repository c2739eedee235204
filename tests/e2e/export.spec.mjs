// A tool exported from a notebook in a subfolder stays in the Tools panel, served from its
// file by the Jupyter server (real JupyterLab, real kernel started by the page, real Chromium).
//
// Run by tests/e2e/test_export_browser.py: the root has no nex.yaml and no tools/dynamic, the
// notebook is NEXUS_E2E_NOTEBOOK (notebooks/hello.ipynb: load, define hello, export hello).
// Screenshots: NEXUS_E2E_SCREENSHOT with -1-listed, -2-exported, -3-details. Prints one line
// per step; exits non-zero on failure.
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
  step(`${notebook} open; its kernel (started by the page) is idle`);

  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click();
  await page.locator('.jp-NexusTools-search').waitFor();
  const mine = name =>
    page.locator(`.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-item[data-tool="${name}"]`);
  const cell = i => page.locator('.jp-Notebook .jp-Cell').nth(i);
  const runCell = async i => {
    await cell(i).locator('.jp-InputArea-prompt').click();
    await page.keyboard.press('Control+Enter');
  };

  await runCell(0); // %load_ext nexus_jupyter
  await runCell(1); // @tool def hello
  await mine('hello').waitFor({ timeout: 30000 });
  assert.doesNotMatch(await mine('hello').innerText(), /exported/);
  step('hello listed under "This notebook", from the kernel');
  await page.screenshot({ path: `${shots}-1-listed.png` });

  await runCell(2); // %tool export hello
  const said = cell(2).locator('.jp-OutputArea-output').first();
  await said.waitFor({ timeout: 30000 });
  await page.waitForFunction(
    () => /The Jupyter server watches this folder/.test(
      document.querySelectorAll('.jp-Notebook .jp-Cell')[2]?.textContent ?? ''),
    null,
    { timeout: 30000 }
  );
  const output = await said.innerText();
  assert.match(output, /Wrote \S*\/tools\/dynamic\/hello\.py/);
  assert.doesNotMatch(output, /notebooks\/tools/);
  step(`export said: ${output.split('\n').slice(0, 3).join(' | ')}`);

  // Still listed, now owned by its file (the server's tools folder).
  await page.waitForFunction(
    () => /exported → hello\.py/.test(
      document.querySelector('.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-item[data-tool="hello"]')?.textContent ?? ''),
    null,
    { timeout: 15000 }
  );
  step('hello still listed after the export: "exported → hello.py"');
  await page.screenshot({ path: `${shots}-2-exported.png` });

  await mine('hello').click();
  const owner = page.locator('.jp-NexusTools-owner');
  await owner.waitFor({ timeout: 10000 });
  assert.match(await owner.innerText(), /Exported from hello\.ipynb: hello\.py owns this tool now/);
  await page.locator('#jp-NexusTools-hello_name').fill('Ada');
  await page.locator('.jp-NexusTools-run').click();
  const result = page.locator('.jp-NexusTools-structured');
  await result.waitFor({ timeout: 15000 });
  assert.equal((await result.innerText()).trim(), 'Hello, Ada!');
  step(`details: "${await owner.innerText()}"; Try ran the file's hello: Hello, Ada!`);
  await page.screenshot({ path: `${shots}-3-details.png` });
  step('all steps passed');
} catch (err) {
  if (page) await page.screenshot({ path: `${shots}-failed.png` }).catch(() => {});
  throw err;
} finally {
  await browser.close();
}
