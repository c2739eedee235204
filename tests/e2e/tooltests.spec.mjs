// Tool tests in a real headless Chromium, as a person uses them.
//
// Sidebar: run multiply in the Try form, "Save as test" (the case lands in
// multiply_tool.tests.yaml beside the file), the Tests section turns passed; a save that
// breaks the file turns it failed (and names the case that broke) within a second, a fix
// turns it back; the row's badge follows.
// Notebook: a tool defined in a cell, its test-call form run and "Save as test" clicked; the
// case lands in the notebook's metadata through the extension (saved to disk), and the
// %tools catalog in the notebook shows the badge.
//
// Run by tests/e2e/test_sidebar.py::test_tool_tests_in_the_sidebar_and_the_notebook, which
// starts JupyterLab and sets NEXUS_E2E_URL, NEXUS_E2E_TOKEN, NEXUS_E2E_TOOLS_DIR,
// NEXUS_E2E_SCREENSHOT (the folder of the screenshots is the artifacts folder).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, openNotebook, runAllCells } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL;
const token = process.env.NEXUS_E2E_TOKEN;
const toolsDir = process.env.NEXUS_E2E_TOOLS_DIR;
const shots = path.dirname(process.env.NEXUS_E2E_SCREENSHOT);
const LIVE_MS = 1000;
const started = Date.now();
const step = m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);

const MULTIPLY = fs.readFileSync(path.join(toolsDir, 'multiply_tool.py'), 'utf-8');

async function api(method, route, body) {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  if (!response.ok) {
    throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  }
  return response.json();
}

/** The cases saved in the notebook file's metadata ([] while JupyterLab is writing the file). */
async function testsInNotebookFile(notebookPath) {
  try {
    const model = await api('GET', `api/contents/${notebookPath}?content=1`);
    return model.content.metadata?.nexus_jupyter?.tests ?? [];
  } catch (error) {
    // A save in progress leaves the file empty for a moment, which answers 400: poll on.
    if (String(error).includes('Unreadable Notebook')) return [];
    throw error;
  }
}

const cell = source => ({ cell_type: 'code', metadata: {}, source, outputs: [], execution_count: null });

const browser = await launchBrowser();
let page;
const consoleErrors = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', err => consoleErrors.push(String(err)));

  // -- the sidebar ---------------------------------------------------------------------------
  await page.goto(`${base}lab/workspaces/tooltests-${Date.now()}?reset&token=${token}`);
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click({ timeout: 60000 });
  const search = page.locator('.jp-NexusTools-search');
  await search.fill('multiply');
  const item = name => page.locator(`.jp-NexusTools-item[data-tool="${name}"]`);
  await item('multiply').click({ timeout: 10000 });
  const tests = page.locator('.jp-NexusTools-tests');
  await tests.locator('text=No saved tests').waitFor({ timeout: 10000 });
  step('multiply has no saved tests yet');

  await page.locator('#jp-NexusTools-multiply_a').fill('6');
  await page.locator('#jp-NexusTools-multiply_b').fill('7');
  await page.locator('.jp-NexusTools-run').click();
  await page.locator('.jp-NexusTools-structured', { hasText: '42' }).waitFor({ timeout: 10000 });
  assert.equal(await page.locator('.jp-NexusTools-saveTestKind').inputValue(), 'expect');
  assert.equal(await page.locator('.jp-NexusTools-saveTestValue').inputValue(), '42');
  await page.locator('.jp-NexusTools-saveTestButton').click();
  const saved = page.locator('.jp-NexusTools-saveTest .jp-NexusTools-notice-ok');
  await saved.waitFor({ timeout: 10000 });
  assert.match(await saved.innerText(), /multiply_tool\.tests\.yaml/);
  const caseFile = path.join(toolsDir, 'multiply_tool.tests.yaml');
  const written = fs.readFileSync(caseFile, 'utf-8');
  assert.match(written, /- tool: multiply\n {2}arguments: \{a: 6, b: 7\}\n {2}expect: 42\n/);
  step('Save as test wrote the case beside the tool file');

  await tests.locator('.jp-NexusTools-test-passed').first().waitFor({ timeout: 10000 });
  await page.locator('.jp-NexusTools-calls', { hasText: 'Calls on this server:' }).waitFor();
  step('the Tests section shows the case passed; the calls line counts the Try run (test runs count in no statistics)');
  await page.locator('.jp-NexusTools').screenshot({ path: path.join(shots, 'tooltests-sidebar-passed.png') });

  const broke = Date.now();
  fs.writeFileSync(path.join(toolsDir, 'multiply_tool.py'), MULTIPLY.replace('return a * b', 'return a + b'));
  await tests.locator('.jp-NexusTools-test-failed').first().waitFor({ timeout: LIVE_MS });
  const failedAfter = Date.now() - broke;
  const brokeNote = page.locator('.jp-NexusTools-broke');
  await brokeNote.waitFor({ timeout: LIVE_MS });
  assert.match(await brokeNote.innerText(), /multiply_tool\.tests\.yaml case 1 \(line \d+\).*expected 42, got 13/s);
  step(`a breaking save turned the tests failed after ${failedAfter} ms, naming the case that broke`);
  await page.locator('.jp-NexusTools').screenshot({ path: path.join(shots, 'tooltests-sidebar-failed.png') });

  await page.locator('.jp-NexusTools-back').click();
  await item('multiply').locator('.jp-NexusTools-test-failed').waitFor({ timeout: 5000 });
  step('the catalog row carries the failed badge');
  await page.locator('.jp-NexusTools').screenshot({ path: path.join(shots, 'tooltests-sidebar-row.png') });
  const fixed = Date.now();
  fs.writeFileSync(path.join(toolsDir, 'multiply_tool.py'), MULTIPLY);
  await item('multiply').locator('.jp-NexusTools-test-passed').waitFor({ timeout: LIVE_MS });
  step(`the fix turned the row's badge back to passed after ${Date.now() - fixed} ms`);

  // -- the notebook --------------------------------------------------------------------------
  const notebookPath = 'notebooks/tooltests.ipynb';
  await api('PUT', `api/contents/${notebookPath}`, {
    type: 'notebook',
    format: 'json',
    content: {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
      cells: [
        cell('%load_ext nexus_jupyter'),
        cell('from nexus_jupyter import tool\n\n@tool\ndef add(a: int, b: int) -> int:\n    """Add two integers."""\n    return a + b'),
        cell('form = %tool try add\nform.set_arguments({"a": 20, "b": 22})\nform'),
        cell('%tools add')
      ]
    }
  });
  await openNotebook(page, base, token, notebookPath);
  await runAllCells(page);
  const form = page.locator('.nexus-form').first();
  await form.locator('button:has-text("Run")').click({ timeout: 120000 });
  await form.locator(':text("42")').first().waitFor({ timeout: 30000 });
  const saver = form.locator('.nexus-save-test');
  await saver.locator('select').waitFor();
  // the row's value widget is a separate widget: its value can land a moment after the result
  const expected = saver.locator('input[type="text"]');
  for (let i = 0; i < 100 && (await expected.inputValue()) !== '42'; i++) {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  assert.equal(await expected.inputValue(), '42');
  await saver.locator('button:has-text("Save as test")').click();
  await saver.locator(':text("Saved a test of")').waitFor({ timeout: 10000 });
  step('the notebook form saved the case');

  let tests_in_file = [];
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    tests_in_file = await testsInNotebookFile(notebookPath);
    if (tests_in_file.length) break;
    await page.waitForTimeout(200); // the extension saves the notebook; poll its file
  }
  assert.deepEqual(tests_in_file, [{ tool: 'add', arguments: { a: 20, b: 22 }, expect: 42 }]);
  step('the case is in the notebook metadata, saved to disk by the extension');
  // The sidebar shows the kernel's tool with the kernel's test status; Save as test there goes
  // through the server to the kernel and into this notebook's metadata too.
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click();
  await search.fill('');
  const kernelAdd = page.locator('.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-item[data-tool="add"]');
  await kernelAdd.locator('.jp-NexusTools-test-passed').waitFor({ timeout: 15000 });
  step("the sidebar's This notebook group shows add with its tests passed");
  await kernelAdd.click();
  await page.locator('#jp-NexusTools-add_a').fill('2');
  await page.locator('#jp-NexusTools-add_b').fill('3');
  await page.locator('.jp-NexusTools-run').click();
  await page.locator('.jp-NexusTools-structured', { hasText: '5' }).waitFor({ timeout: 15000 });
  await page.locator('.jp-NexusTools-saveTestButton').click();
  const savedInKernel = page.locator('.jp-NexusTools-saveTest .jp-NexusTools-notice-ok');
  await savedInKernel.waitFor({ timeout: 15000 });
  assert.match(await savedInKernel.innerText(), /tooltests\.ipynb \(notebook metadata\)/);
  await page.locator('.jp-NexusTools-tests .jp-NexusTools-test', { hasText: 'tests 2/2' }).waitFor({ timeout: 15000 });
  step("the sidebar's Save as test on the kernel's tool saved in the notebook; 2/2 pass");
  await page.locator('.jp-NexusTools').screenshot({ path: path.join(shots, 'tooltests-sidebar-kernel.png') });
  const waitUntil = Date.now() + 15000;
  while (Date.now() < waitUntil) {
    tests_in_file = await testsInNotebookFile(notebookPath);
    if (tests_in_file.length === 2) break;
    await page.waitForTimeout(200); // the extension saves the notebook; poll its file
  }
  assert.equal(tests_in_file.length, 2, JSON.stringify(tests_in_file));
  assert.deepEqual(tests_in_file[1], { tool: 'add', arguments: { a: 2, b: 3 }, expect: 5 });
  step('both cases are in the notebook file');

  const catalog = page.locator('.nexus-catalog').first();
  await catalog.locator('.nexus-test-badge', { hasText: 'tests 2/2' }).waitFor({ timeout: 10000 });
  step('the %tools catalog in the notebook shows the test badge');
  await form.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'tooltests-notebook.png') });
  await catalog.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'tooltests-notebook-catalog.png') });

  // A reload while the kernel runs: the kernel's comm led to the page that is gone. The new
  // page opens its own, so a case saved now still reaches the notebook (it said "saved" and
  // wrote nothing before).
  await page.reload();
  await page.waitForSelector('.jp-Notebook .jp-Cell', { timeout: 60000 });
  await page.waitForFunction(
    () => /Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent ?? ''),
    null,
    { timeout: 90000 }
  );
  const formAgain = page.locator('.nexus-form').first();
  await formAgain.waitFor({ timeout: 30000 });
  await formAgain.scrollIntoViewIfNeeded();
  const boxes = formAgain.locator('.widget-text input[type="text"]');
  await boxes.nth(0).fill('1');
  await boxes.nth(1).fill('2');
  await formAgain.locator('button:has-text("Run")').click();
  await formAgain.locator('.nexus-result-output', { hasText: '3' }).waitFor({ timeout: 30000 });
  const saverAgain = formAgain.locator('.nexus-save-test');
  await saverAgain.locator('button:has-text("Save as test")').click();
  await saverAgain.locator(':text("Saved a test of \'add\' (expect 3)")').waitFor({ timeout: 10000 });
  const afterReload = Date.now() + 15000;
  while (Date.now() < afterReload) {
    tests_in_file = await testsInNotebookFile(notebookPath);
    if (tests_in_file.length === 3) break;
    await page.waitForTimeout(200); // the new page saves the notebook; poll its file
  }
  assert.deepEqual(tests_in_file[2], { tool: 'add', arguments: { a: 1, b: 2 }, expect: 3 });
  await formAgain.screenshot({ path: path.join(shots, 'tooltests-notebook-reloaded.png') });
  step('after a page reload, the form saved a case and it is in the notebook file');
  assert.deepEqual(consoleErrors, [], 'errors in the browser console');
  step('all steps passed');
} catch (error) {
  if (page) {
    await page.screenshot({ path: path.join(shots, 'tooltests-failure.png') }).catch(() => undefined);
  }
  console.error(error);
  process.exitCode = 1;
} finally {
  await browser.close();
}
