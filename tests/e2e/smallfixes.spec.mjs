// Small things a new user met in the sidebar, in a real headless Chromium: a decimal in an
// integer field is named as such in Run's summary; the history's time reads 22:43:08 as in
// the notebook; the Versions header names the saved version as %tool versions and %tool
// rollback do (#2 <hash>); a tool whose file failed to reload says "stale" in its row and
// details; a test case that needs approval is skipped in grey, with the real command.
//
// Run by tests/e2e/test_sidebar_small_fixes.py, which starts JupyterLab (see test_sidebar.py).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL;
const token = process.env.NEXUS_E2E_TOKEN;
const toolsDir = process.env.NEXUS_E2E_TOOLS_DIR;
const shots = path.dirname(process.env.NEXUS_E2E_SCREENSHOT);
const started = Date.now();
const step = m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);
const file = path.join(toolsDir, 'multiply_tool.py');
const MULTIPLY = fs.readFileSync(file, 'utf-8');

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

async function until(what, check, ms = 10000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 100));
  }
}

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  await page.goto(`${base}lab/workspaces/smallfixes-${Date.now()}?reset&token=${token}`);
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click({ timeout: 60000 });
  const panel = page.locator('.jp-NexusTools');
  const search = page.locator('.jp-NexusTools-search');
  const item = name => page.locator(`.jp-NexusTools-item[data-tool="${name}"]`);
  await search.fill('multiply');
  await item('multiply').click({ timeout: 10000 });

  // -- a decimal in an integer field ---------------------------------------------------------
  await page.locator('#jp-NexusTools-multiply_a').fill('2');
  await page.locator('#jp-NexusTools-multiply_b').fill('1.5');
  await page.locator('.jp-NexusTools-run').click();
  const notRun = panel.locator('.jp-NexusTools-notice-warn', { hasText: 'Not run' });
  await notRun.waitFor({ timeout: 5000 });
  const said = await notRun.innerText();
  assert.match(said, /one value is not an integer \(it has decimals\)/);
  assert.doesNotMatch(said, /not a number/);
  step(`b=1.5: ${said}`);
  await panel.screenshot({ path: path.join(shots, 'smallfixes-decimal.png') });

  // -- the history's time --------------------------------------------------------------------
  await page.locator('#jp-NexusTools-multiply_b').fill('7');
  await page.locator('.jp-NexusTools-run').click();
  await page.locator('.jp-NexusTools-structured', { hasText: '14' }).waitFor({ timeout: 10000 });
  const when = await page.locator('.jp-NexusTools-historyTime').first().innerText();
  assert.match(when, /^\d\d:\d\d:\d\d$/);
  step(`the history says ${when}`);

  // -- versions: one id ----------------------------------------------------------------------
  const before = (await api('GET', 'nexus/api/tools/multiply')).versions.length;
  fs.writeFileSync(file, MULTIPLY.replace('return a * b', 'return b * a'));
  await until('a second saved version', async () => (await api('GET', 'nexus/api/tools/multiply')).versions.length > before);
  await page.locator('.jp-NexusTools-back').click();
  await item('multiply').click({ timeout: 10000 });
  const versions = panel.locator('.jp-NexusTools-versions');
  await versions.locator('summary').click();
  const header = await versions.locator('summary').innerText();
  const details = await api('GET', 'nexus/api/tools/multiply');
  const current = details.versions.find(v => v.current);
  assert.match(header, new RegExp(`current #${current.number} ${current.version}`));
  assert.doesNotMatch(header, new RegExp(details.version));
  const listed = await versions.locator('li').first().innerText();
  assert.match(listed, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
  assert.doesNotMatch(listed, /[AP]M/);
  step(`versions: "${header.replace(/\s+/g, ' ')}"; newest "${listed.replace(/\s+/g, ' ')}"`);
  await panel.screenshot({ path: path.join(shots, 'smallfixes-versions.png') });

  // -- stale ---------------------------------------------------------------------------------
  fs.writeFileSync(file, MULTIPLY.replace('def multiply(a: int, b: int) -> int:', 'def multiply(a: int, b: int -> int:'));
  await until('the stale note', async () => Boolean((await api('GET', 'nexus/api/tools/multiply')).stale));
  await page.locator('.jp-NexusTools-back').click();
  const staleBadge = item('multiply').locator('.jp-NexusTools-badge', { hasText: 'stale' });
  await staleBadge.waitFor({ timeout: 10000 });
  step(`the row says stale: ${await staleBadge.getAttribute('title')}`);
  await panel.screenshot({ path: path.join(shots, 'smallfixes-stale-row.png') });
  await item('multiply').click();
  const note = panel.locator('.jp-NexusTools-notice-warn', { hasText: 'failed to reload' });
  await note.waitFor({ timeout: 10000 });
  await panel.locator('.jp-NexusTools-badges .jp-NexusTools-badge', { hasText: 'stale' }).waitFor();
  step(`the details say: ${await note.innerText()}`);
  await panel.screenshot({ path: path.join(shots, 'smallfixes-stale-details.png') });
  fs.writeFileSync(file, MULTIPLY);

  // -- a test case that needs approval -------------------------------------------------------
  await api('POST', 'nexus/api/tools/greet/tests', { arguments: { name: 'Ann' }, expect: 'Hello, Ann!' });
  await page.locator('.jp-NexusTools-back').click();
  await search.fill('greet');
  await item('greet').click({ timeout: 10000 });
  await panel.locator('.jp-NexusTools-runTests').click();
  const skipped = panel.locator('.jp-NexusTools-outcomeMessage-skipped');
  await skipped.waitFor({ timeout: 10000 });
  const reason = await skipped.innerText();
  assert.match(reason, /needs approval \(workspace_write\)/);
  assert.match(reason, /%tool test greet --yes/);
  assert.doesNotMatch(reason, /`|NAME/);
  const color = await skipped.evaluate(el => getComputedStyle(el).color);
  const error = await panel.locator('.jp-NexusTools-tests').evaluate(el => {
    const probe = document.createElement('div');
    probe.className = 'jp-NexusTools-outcomeMessage';
    el.appendChild(probe);
    const red = getComputedStyle(probe).color;
    probe.remove();
    return red;
  });
  assert.notEqual(color, error, 'a skip is shown in the failure colour');
  step(`the skip reads: ${reason.replace(/\s+/g, ' ')} (colour ${color}, a failure's ${error})`);
  await panel.screenshot({ path: path.join(shots, 'smallfixes-skip.png') });
  await page.screenshot({ path: process.env.NEXUS_E2E_SCREENSHOT });
} catch (err) {
  if (page) await page.screenshot({ path: path.join(shots, 'smallfixes-failed.png') });
  throw err;
} finally {
  fs.writeFileSync(file, MULTIPLY);
  await browser.close();
}
