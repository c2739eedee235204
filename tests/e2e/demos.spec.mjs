// The two demo notebooks and the sidebar as a user sees them, in a real headless Chromium.
//
// Run by tests/e2e/test_sidebar.py::test_demo_notebooks_as_rendered, which starts JupyterLab
// (with a copy of notebooks/) and sets NEXUS_E2E_URL, NEXUS_E2E_TOKEN, NEXUS_E2E_SCREENSHOT
// (the first screenshot; the others go next to it) and NEXUS_E2E_BROWSER.
//
// Asserts from the DOM, not from widget state: the quickstart opens unmodified; every catalog
// row of `%tools` / `%tool browse` is at least 20 px tall and does not overlap the next (with
// the 64-tool demo catalog); a text result shows real line breaks; the approval prompt shows
// the arguments it asks about; the sidebar shows text as text and disables Run where policy
// forbids the call. Prints one line per step; exits non-zero on the first failure.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL;
const token = process.env.NEXUS_E2E_TOKEN;
const shots = path.dirname(process.env.NEXUS_E2E_SCREENSHOT);
const started = Date.now();
const step = m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);
const shot = name => path.join(shots, name);
const MIN_ROW_PX = 20;

const browser = await launchBrowser();
let page;

/** Open a notebook in a fresh workspace and wait until its kernel is idle. */
async function openNotebook(file) {
  await page.goto(`${base}lab/workspaces/demo-${Date.now()}/tree/notebooks/${file}?reset&token=${token}`);
  await page.waitForSelector('.jp-Notebook .jp-Cell', { timeout: 60000 });
  await page.waitForFunction(
    () => /Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent ?? ''),
    null, { timeout: 90000 });
  step(`${file} open, kernel idle`);
}

async function runAll() {
  await page.locator('.jp-Notebook').first().click();
  await page.keyboard.press('Control+Shift+C');
  await page.locator('.lm-CommandPalette input').waitFor({ timeout: 10000 });
  await page.keyboard.type('Run All Cells');
  await page.keyboard.press('Enter');
}

/** No cell failed (the quickstart shows one deliberate UsageError). */
async function assertNoCellFailed() {
  const stderr = page.locator('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]');
  for (const text of await stderr.allInnerTexts()) {
    assert.match(text, /UsageError/, `a cell failed: ${text}`);
  }
}

/** Every catalog's rows, measured: [{name, top, bottom, height}] per catalog. */
async function catalogRows() {
  return page.evaluate(() =>
    [...document.querySelectorAll('.nexus-catalog-rows')].map(list =>
      [...list.querySelectorAll('.nexus-catalog-row')].map(row => {
        const box = row.getBoundingClientRect();
        const summary = row.querySelector('.nexus-catalog-summary');
        return {
          name: row.querySelector('button')?.textContent?.trim(),
          top: box.top, bottom: box.bottom, height: box.height,
          summaryBottom: summary ? summary.getBoundingClientRect().bottom : box.bottom
        };
      })));
}

function assertRowsLaidOut(rows, label) {
  assert.ok(rows.length > 0, `${label}: no rows`);
  rows.forEach((row, i) => {
    assert.ok(row.height >= MIN_ROW_PX, `${label}: row ${row.name} is ${row.height} px tall`);
    assert.ok(row.summaryBottom <= row.bottom + 0.5,
      `${label}: the summary of ${row.name} runs out of its row`);
    const next = rows[i + 1];
    if (next) {
      assert.ok(row.bottom <= next.top + 0.5,
        `${label}: row ${row.name} (bottom ${row.bottom}) overlaps ${next.name} (top ${next.top})`);
    }
  });
  const heights = rows.map(r => r.height);
  step(`${label}: ${rows.length} rows, ${Math.min(...heights)}–${Math.max(...heights)} px tall, none overlapping`);
}

try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();

  // -- the demo catalog: 64 tools in %tools and %tool browse ------------------------------
  await openNotebook('02-demo-catalog.ipynb');
  await runAll();
  await page.waitForFunction(
    () => [...document.querySelectorAll('.nexus-catalog-rows')].length >= 2 &&
      [...document.querySelectorAll('.nexus-catalog-rows')][0].querySelectorAll('.nexus-catalog-row').length >= 60,
    null, { timeout: 120000 });
  await page.locator('.jupyter-widgets button:has-text("Run")').last().waitFor({ timeout: 60000 });
  await assertNoCellFailed();
  step('demo catalog: every cell ran');
  const [all, browse] = await catalogRows();
  assertRowsLaidOut(all, '%tools (demo catalog)');
  assertRowsLaidOut(browse, '%tool browse temperature');
  const catalog = page.locator('.nexus-catalog').first();
  await catalog.scrollIntoViewIfNeeded();
  // the catalog draws 60 rows at first; weather is further down the list
  await catalog.locator('button:visible', { hasText: /^Show (all|\d+ more)/ }).first().click();
  await catalog.locator('.nexus-catalog-row button', { hasText: 'weather' }).first().click();
  await catalog.locator('.nexus-tool').first().waitFor({ timeout: 10000 });
  await catalog.screenshot({ path: shot('demo-catalog.png') });
  step('demo catalog: weather selected, screenshot demo-catalog.png');

  // the compound_interest form (last cell): Run, then the result and the history
  const form = page.locator('.nexus-form').last();
  await form.scrollIntoViewIfNeeded();
  const inputs = form.locator('input[type="text"]');
  await inputs.nth(0).fill('1000');
  await inputs.nth(1).fill('5');
  await inputs.nth(2).fill('10');
  await form.locator('button:has-text("Run")').click();
  await form.locator('.nexus-result-output').first().waitFor({ timeout: 30000 });
  await form.locator('.nexus-history').waitFor({ timeout: 10000 });
  await form.screenshot({ path: shot('demo-form.png') });
  step(`demo form: result shown (${(await form.locator('.nexus-result-status').innerText()).trim()}), screenshot demo-form.png`);

  // -- the quickstart ---------------------------------------------------------------------
  await openNotebook('01-quickstart.ipynb');
  const dirty = await page.locator('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty').count();
  assert.equal(dirty, 0, 'the quickstart opened marked as modified');
  step('quickstart opened unmodified');
  await runAll();
  await page.locator('.nexus-catalog-row').first().waitFor({ timeout: 120000 });
  await page.locator('.jupyter-widgets button:has-text("Run")').first().waitFor({ timeout: 60000 });
  await assertNoCellFailed();
  step('quickstart: every cell ran');
  const [quick] = await catalogRows();
  assertRowsLaidOut(quick, '%tools (quickstart)');
  const tables = await page.evaluate(() =>
    [...document.querySelectorAll('.jp-RenderedHTMLCommon td')].slice(0, 50)
      .map(td => getComputedStyle(td).textAlign));
  assert.ok(tables.length > 0 && tables.every(a => a === 'left' || a === 'start'),
    `table cells are aligned ${[...new Set(tables)]}`);
  step('HTML tables in outputs are left-aligned');

  // bash from the quickstart's catalog: a multi-line command, the approval prompt, the text
  const quickCatalog = page.locator('.nexus-catalog').first();
  await quickCatalog.scrollIntoViewIfNeeded();
  await quickCatalog.locator('input[placeholder="search tools…"]').fill('bash');
  await quickCatalog.locator('.nexus-catalog-row button', { hasText: /^bash$/ }).click();
  await quickCatalog.locator('button:has-text("Try")').click();
  const bash = quickCatalog.locator('.nexus-form');
  const command = bash.locator('textarea').first();
  await command.fill('echo one\necho two');
  await bash.locator('button:has-text("Run")').click();
  const prompt = bash.locator('.nexus-approval');
  await prompt.waitFor({ timeout: 15000 });
  const asked = await prompt.innerText();
  assert.match(asked, /echo one\necho two/, `the approval prompt must show the command: ${asked}`);
  assert.match(asked, /danger_full_access/);
  await prompt.screenshot({ path: shot('quickstart-approval.png') });
  step('approval prompt shows the tool, the permission and the multi-line command');
  await prompt.locator('button:has-text("Approve once")').click();
  const stdout = bash.locator('.nexus-result-output .nexus-text').first();
  await stdout.waitFor({ timeout: 15000 });
  const out = await stdout.innerText();
  assert.ok(out.includes('one\ntwo'), `stdout must show real line breaks: ${JSON.stringify(out)}`);
  await bash.screenshot({ path: shot('quickstart-bash.png') });
  step('bash result: stdout shown as text with real line breaks');

  // -- the sidebar: text as text, Run disabled where policy forbids ---------------------------
  await page.keyboard.press('Control+Shift+C');
  await page.locator('.lm-CommandPalette-input').fill('Tools: Search');
  await page.locator('.lm-CommandPalette-item', { hasText: 'Tools: Search' }).first().waitFor();
  await page.keyboard.press('Enter');
  const search = page.locator('.jp-NexusTools-search');
  await search.waitFor();
  const titles = await page.locator('.jp-NexusTools-groupTitle').allInnerTexts();
  assert.ok(titles.length > 0 && titles.every(t => !/^[A-Z]+:/.test(t)), `group titles: ${titles}`);
  step(`sidebar group titles: ${titles.map(t => t.replace(/\s+/g, ' ')).join(' | ')}`);
  await search.fill('read a file');
  await page.locator('.jp-NexusTools-item[data-tool="read"]').click();
  await page.locator('#jp-NexusTools-read_path').fill('notebooks/demo_catalog.py');
  await page.locator('.jp-NexusTools-run').click();
  const text = page.locator('.jp-NexusTools-text').first();
  await text.waitFor({ timeout: 10000 });
  const read = await text.innerText();
  const lines = read.split('\n');
  assert.ok(lines.length > 5 && /^\s*2\t/.test(lines[1]), `read shows ${JSON.stringify(read.slice(0, 80))}`);
  assert.equal(await page.locator('.jp-NexusTools-duration').count(), 1, 'one duration per call');
  await page.locator('.jp-NexusTools').screenshot({ path: shot('sidebar-read.png') });
  step('sidebar: read shows text with real line breaks, one labelled duration');
  await page.locator('.jp-NexusTools-back').click();
  await search.fill('bash');
  await page.locator('.jp-NexusTools-item[data-tool="bash"]').click();
  const run = page.locator('.jp-NexusTools-run');
  await run.waitFor();
  assert.equal(await run.isDisabled(), true, 'Run must be disabled where the grant forbids bash');
  const why = await page.locator('.jp-NexusTools-blocked').innerText();
  assert.match(why, /danger_full_access/);
  await page.locator('.jp-NexusTools').screenshot({ path: shot('sidebar-blocked.png') });
  step(`sidebar: bash has Run disabled: ${why}`);
  step('all steps passed');
} catch (err) {
  if (page) await page.screenshot({ path: shot('demos-failed.png') }).catch(() => undefined);
  console.error(err);
  process.exitCode = 1;
} finally {
  await browser.close();
}
