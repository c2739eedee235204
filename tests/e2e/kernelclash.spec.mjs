// A kernel's tools as the trial met them in the sidebar, in a real headless Chromium: two
// notebooks defining `add` are one conflict on both rows, each row opens its own add and Try
// runs it; a kernel tool's own validator refuses (the field flagged, not "Failed", counted as
// refused); a tool whose kernel restarted says so and how to bring it back.
//
// one.ipynb and two.ipynb are written by tests/e2e/test_kernel_clash.py.
// Screenshots: kernelclash-conflict.png, kernelclash-two-add.png, kernelclash-refusal.png,
// kernelclash-restarted.png.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser, openNotebook, runAllCells, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();
const shots = path.dirname(screenshot);
const headers = { Authorization: `token ${token}` };

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  page.on('pageerror', err => console.log(`page error: ${err}`));
  page.on('console', msg => {
    if (msg.type() === 'warning' || msg.type() === 'error') console.log(`console ${msg.type()}: ${msg.text()}`);
  });
  const listed = async (name, count) => {
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline) {
      const answer = await page.request.get(`${base}nexus/api/tools?q=&limit=1000`, { headers });
      const rows = (await answer.json()).tools.filter(t => t.name === name);
      if (rows.length >= count) return rows;
      await page.waitForTimeout(200);
    }
    throw new Error(`${count} row(s) of ${name} not listed`);
  };
  await openNotebook(page, base, token, 'two.ipynb');
  await runAllCells(page);
  await listed('add', 1);
  await openNotebook(page, base, token, 'one.ipynb');
  await runAllCells(page);
  await listed('add', 2);
  await listed('half', 1);
  step('both notebooks ran: two adds listed');

  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click({ timeout: 60000 });
  const panel = page.locator('.jp-NexusTools');
  const search = page.locator('.jp-NexusTools-search');
  await search.fill('add');
  const rows = page.locator('.jp-NexusTools-item[data-tool="add"]');
  await page.waitForFunction(
    () => document.querySelectorAll('.jp-NexusTools-item[data-tool="add"]').length === 2,
    null,
    { timeout: 30000 }
  );
  const texts = await rows.allInnerTexts();
  assert.ok(texts.every(t => /conflict/.test(t)), JSON.stringify(texts));
  assert.ok(texts.every(t => !/shadow/.test(t)), JSON.stringify(texts));
  assert.equal(await page.locator('.jp-NexusTools-item-shadowed[data-tool="add"]').count(), 0);
  await panel.screenshot({ path: path.join(shots, 'kernelclash-conflict.png') });
  step(`both adds read as a conflict: ${JSON.stringify(texts.map(t => t.replace(/\s+/g, ' ')))}`);

  // two.ipynb's own add: its description, and Try runs it (times ten)
  await page.locator('.jp-NexusTools-group[data-source="kernel:two.ipynb"] .jp-NexusTools-item').click();
  await page.locator('.jp-NexusTools-description', { hasText: 'the second way' }).waitFor({ timeout: 15000 });
  const note = (await page.locator('.jp-NexusTools-sourceNote').innerText()).trim();
  assert.match(note, /Try runs this one, of kernel:two\.ipynb/);
  await page.locator('#jp-NexusTools-add_a').fill('1');
  await page.locator('#jp-NexusTools-add_b').fill('2');
  await page.locator('.jp-NexusTools-run').click();
  const result = page.locator('.jp-NexusTools-structured');
  await result.waitFor({ timeout: 15000 });
  assert.equal((await result.innerText()).trim(), '30');
  await panel.screenshot({ path: path.join(shots, 'kernelclash-two-add.png') });
  step(`two.ipynb's add opened from its own row and ran: 30 (${note})`);
  await page.locator('.jp-NexusTools-back').click();

  // one.ipynb's add, from its row in "This notebook"
  await page.locator('.jp-NexusTools-group[data-source="this-notebook"] .jp-NexusTools-item[data-tool="add"]').click();
  await page.locator('.jp-NexusTools-description', { hasText: 'Add two integers.' }).waitFor({ timeout: 15000 });
  await page.locator('#jp-NexusTools-add_a').fill('1');
  await page.locator('#jp-NexusTools-add_b').fill('2');
  await page.locator('.jp-NexusTools-run').click();
  await result.waitFor({ timeout: 15000 });
  assert.equal((await result.innerText()).trim(), '3');
  // its calls line counts its own call, not two.ipynb's add's as well
  const ownCalls = page.locator('.jp-NexusTools-calls', { hasText: 'Calls on this server' });
  await ownCalls.filter({ hasText: 'Calls on this server: 1,' }).waitFor({ timeout: 15000 });
  await panel.screenshot({ path: path.join(shots, 'kernelclash-one-add.png') });
  step(`one.ipynb's add ran its own: 3; ${(await ownCalls.innerText()).trim()}`);
  await page.locator('.jp-NexusTools-back').click();

  // the kernel tool's own validator: a refusal, like a tool file's
  await search.fill('half');
  await page.locator('.jp-NexusTools-item[data-tool="half"]').click({ timeout: 30000 });
  await page.locator('#jp-NexusTools-half_n').fill('3');
  await page.locator('.jp-NexusTools-run').click();
  const fieldError = page.locator('.jp-NexusTools-form .error-detail');
  await fieldError.first().waitFor({ timeout: 15000 });
  const flagged = (await fieldError.allInnerTexts()).join(' | ');
  assert.match(flagged, /must be even/);
  assert.equal(await page.locator('.jp-NexusTools-result-error').count(), 0, 'no "Failed" box');
  const calls = page.locator('.jp-NexusTools-calls', { hasText: 'Calls on this server' });
  await calls.filter({ hasText: '1 refused' }).waitFor({ timeout: 15000 });
  const callsText = (await calls.innerText()).trim();
  assert.doesNotMatch(callsText, /1 failed/);
  await panel.screenshot({ path: path.join(shots, 'kernelclash-refusal.png') });
  step(`half(n=3) refused by its validator: field says "${flagged}"; ${callsText}`);

  // restart one.ipynb's kernel with half open: the details say what happened
  const sessions = await (await page.request.get(`${base}api/sessions`, { headers })).json();
  const kernelId = sessions.find(s => s.path === 'one.ipynb').kernel.id;
  const restart = await page.request.post(`${base}api/kernels/${kernelId}/restart`, { headers });
  assert.equal(restart.status(), 200);
  // (the first answer may come while Jupyter has not yet said it was a restart)
  const gone = page.locator('.jp-NexusTools-details > .jp-NexusTools-notice-error', {
    hasText: 'restarted'
  });
  await gone.waitFor({ timeout: 30000 });
  assert.equal(
    await page.locator('.jp-NexusTools-details > .jp-NexusTools-notice-error').count(),
    1,
    'one notice: the tool that left does not also show its last status'
  );
  const goneText = (await gone.innerText()).trim();
  assert.match(goneText, /the kernel of one\.ipynb restarted/);
  assert.match(goneText, /Run the cell that defines half in one\.ipynb again/);
  assert.doesNotMatch(goneText, /%tool list/);
  await panel.screenshot({ path: path.join(shots, 'kernelclash-restarted.png') });
  step(`after the restart the open details say: ${goneText}`);
  await page.screenshot({ path: screenshot });
  step('all steps passed');
} catch (err) {
  if (page) await page.screenshot({ path: path.join(shots, 'kernelclash-failed.png') });
  throw err;
} finally {
  await browser.close();
}
