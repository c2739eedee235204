// Tools that need approval, as a new user meets them in a real headless Chromium
// (approvals.ipynb, written by tests/e2e/test_approvals_browser.py, defines save_note
// (workspace_write) and purge_cache (danger_full_access), then sets `%tool mode prompt`).
//
// Notebook: `%tool try purge_cache`, Run, Deny: a grey "Denied", no test offered, a history
// row "denied"; Run, Approve once: "done in <the tool's own time> after approval".
// Sidebar: purge_cache is above the sidebar's grant: Run is disabled and looks it, and the
// reason names both levels and the nex.yaml line that allows it; save_note asks first (the
// notebook's `%tool mode prompt` governs its kernel's tools), and Approve once runs it.
//
// Screenshots: approvals-notebook-denied.png, approvals-notebook-approved.png,
// approvals-sidebar-disabled.png, approvals-sidebar-dialog.png, approvals-sidebar-ran.png.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser, openNotebook, runAllCells, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();
const shots = path.dirname(screenshot);
const shot = (locator, name) => locator.screenshot({ path: path.join(shots, name) });

const browser = await launchBrowser();
let page;
const consoleErrors = [];
try {
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on('pageerror', err => consoleErrors.push(String(err)));

  // -- the notebook form ----------------------------------------------------------------------
  await openNotebook(page, base, token, 'approvals.ipynb');
  await runAllCells(page);
  const form = page.locator('.nexus-form').first();
  await form.waitFor({ timeout: 60000 });
  await form.locator('button:has-text("Run")').first().click();
  let prompt = form.locator('.nexus-approval');
  await prompt.waitFor({ timeout: 15000 });
  await prompt.locator('button:has-text("Deny")').click();
  const status = form.locator('.nexus-result-status');
  await status.filter({ hasText: 'Denied' }).waitFor({ timeout: 15000 });
  const denied = form.locator('.nexus-denied');
  const color = await denied.evaluate(e => getComputedStyle(e).color);
  assert.equal(color, 'rgb(102, 102, 102)', 'a denial is grey, as a cancel');
  assert.equal(await form.locator('text=PermissionDenied').count(), 0, 'no red PermissionDenied');
  const save = form.locator('button:has-text("Save as test")');
  assert.ok(await save.isDisabled(), 'no test of a call that did not run');
  const row = form.locator('.nexus-history-row').first();
  await row.filter({ hasText: 'denied' }).waitFor({ timeout: 10000 });
  await form.scrollIntoViewIfNeeded();
  await shot(form, 'approvals-notebook-denied.png');
  step(`Deny: "${await status.innerText()}", Save as test disabled, history: "${await row.innerText()}"`);

  await form.locator('button:has-text("Run")').first().click();
  prompt = form.locator('.nexus-approval');
  await prompt.waitFor({ timeout: 15000 });
  await page.waitForTimeout(1500); // a person reading the prompt: not the tool's time
  await prompt.locator('button:has-text("Approve once")').click();
  await status.filter({ hasText: 'after approval' }).waitFor({ timeout: 15000 });
  const done = await status.innerText();
  assert.match(done, /done in [\d.]+ ms after approval/, `the tool's own time: ${done}`);
  await shot(form, 'approvals-notebook-approved.png');
  step(`Approve once: "${done}"`);

  // -- the sidebar ----------------------------------------------------------------------------
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click({ timeout: 60000 });
  const panel = page.locator('.jp-NexusTools');
  const search = page.locator('.jp-NexusTools-search');
  await search.fill('purge');
  await page.locator('.jp-NexusTools-item[data-tool="purge_cache"]').click({ timeout: 15000 });
  const blocked = page.locator('.jp-NexusTools-blocked');
  await blocked.waitFor({ timeout: 15000 });
  const why = await blocked.innerText();
  assert.match(why, /needs permission 'danger_full_access', and the JupyterLab sidebar/);
  assert.match(why, /is granted 'workspace_write'/);
  assert.match(why, /grant: \{rest: danger_full_access\}/);
  assert.doesNotMatch(why, /rest callers|Only the person running/);
  const run = page.locator('.jp-NexusTools-run');
  assert.ok(await run.isDisabled(), 'Run is disabled');
  const look = await run.evaluate(e => getComputedStyle(e).backgroundColor);
  assert.notEqual(look, 'rgb(25, 118, 210)', 'a disabled Run is not the accept blue');
  await shot(panel, 'approvals-sidebar-disabled.png');
  step(`purge_cache in the sidebar: ${why.replace(/\s+/g, ' ')} (Run background ${look})`);

  await page.locator('.jp-NexusTools-back').click();
  await search.fill('save note');
  await page.locator('.jp-NexusTools-item[data-tool="save_note"]').click({ timeout: 15000 });
  const text = page.locator('#jp-NexusTools-save_note_text');
  await text.waitFor({ timeout: 15000 });
  await text.fill('from the sidebar');
  await page.locator('.jp-NexusTools-run').click();
  const dialog = page.locator('.jp-Dialog');
  await dialog.waitFor({ timeout: 15000 });
  const asked = await dialog.innerText();
  assert.match(asked, /save_note/);
  // why: the notebook's mode, not a flag of the tool's own
  assert.match(asked, /Why it asks: its notebook asks first \(mode: prompt says ask\)/);
  assert.doesNotMatch(asked, /requires approval for every call/);
  await shot(page, 'approvals-sidebar-dialog.png');
  step(`save_note under %tool mode prompt: the sidebar asks first: ${asked.replace(/\s+/g, ' ')}`);
  await dialog.locator('button', { hasText: 'Approve once' }).click();
  await panel.locator('.jp-NexusTools-result', { hasText: 'saved from the sidebar' }).waitFor({
    timeout: 15000
  });
  await shot(panel, 'approvals-sidebar-ran.png');
  step('Approve once: save_note ran from the sidebar');

  assert.deepEqual(consoleErrors, []);
  await page.screenshot({ path: screenshot });
  step('all steps passed');
} catch (err) {
  if (page) {
    await page.screenshot({ path: screenshot.replace(/\.png$/, '-failure.png') }).catch(() => {});
  }
  throw err;
} finally {
  await browser.close();
}
