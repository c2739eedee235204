// The notebook's widgets in a 900 px window with the "Tools" sidebar open, in a real headless
// Chromium (narrow.ipynb, written by tests/e2e/test_narrow_widgets.py).
//
// The Try form's Run and "Copy as %tool call" keep their size beside a long call line (which
// wraps); the %tools details pane wraps its text (or sits under the list) instead of clipping
// it; "Show all" reaches every tool; one refused Run flags every field; a refusal offers a test
// of the field's own message; a cancel reads "Cancelled after N s" in grey; the history names
// its numbers the session's and lists calls made from Python; a saved test shows its command as
// code; `%tool list` says "stale" for a tool whose file failed to reload.
//
// Screenshots: narrow-try-form.png, narrow-catalog-details.png, narrow-catalog-more.png,
// narrow-catalog-all.png,
// narrow-refused.png, narrow-cancelled.png, narrow-saved.png, narrow-history.png,
// narrow-list.png.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser, openNotebook, runAllCells, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();
const shots = path.dirname(screenshot);
const shot = (locator, name) => locator.screenshot({ path: path.join(shots, name) });
const box = async locator => locator.evaluate(n => {
  const r = n.getBoundingClientRect();
  return { left: r.left, right: r.right, width: r.width, top: r.top, bottom: r.bottom };
});

const browser = await launchBrowser();
let page;
const consoleErrors = [];
try {
  page = await (await browser.newContext({ viewport: { width: 900, height: 800 } })).newPage();
  page.on('pageerror', err => consoleErrors.push(String(err)));
  await openNotebook(page, base, token, 'narrow.ipynb');
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click({ timeout: 60000 });
  await page.locator('.jp-NexusTools').waitFor({ timeout: 30000 });
  await runAllCells(page);
  const outputs = i => page.locator('.jp-Notebook .jp-Cell').nth(i).locator('.jp-OutputArea');
  await outputs(10).locator('.nexus-tools').waitFor({ timeout: 120000 });

  // -- 1. the Try form: Run and Copy keep their size, the call line wraps --------------------
  const form = outputs(3).locator('.nexus-form');
  await form.scrollIntoViewIfNeeded();
  const fields = form.locator('input[type="text"]');
  await fields.nth(0).fill('1000');
  await fields.nth(1).fill('5');
  await fields.nth(2).fill('10');
  await form.locator(':text("years=10")').waitFor({ timeout: 15000 });
  const run = form.locator('button:has-text("Run")').first();
  await run.click();
  await form.locator('.nexus-result-output', { hasText: '1647.01' }).waitFor({ timeout: 30000 });
  const copy = form.locator('.nexus-copy-call button');
  await copy.click().catch(() => undefined); // the clipboard may be refused headless: the size is what counts
  const runBox = await box(run);
  const copyBox = await box(copy);
  const cell = await box(outputs(3));
  assert.ok(runBox.width >= 100, `Run is ${runBox.width} px wide`);
  for (const [name, button] of [['Run', run], ['Copy', copy]]) {
    const clipped = await button.evaluate(n => n.scrollWidth > n.clientWidth + 1);
    assert.ok(!clipped, `${name}'s label is clipped`);
  }
  assert.ok(copyBox.left >= runBox.right - 1, `Copy (${copyBox.left}) overlaps Run (${runBox.right})`);
  const line = await box(form.locator('.nexus-copy-call code'));
  assert.ok(line.right <= cell.right + 1, `the call line ends at ${line.right}, past the cell (${cell.right})`);
  assert.ok(line.bottom - line.top > 25, 'the long call line wraps onto a second line');
  const historyRow = await box(form.locator('.nexus-history-row').first());
  assert.ok(historyRow.right <= cell.right + 1, `the history row ends at ${historyRow.right}, past ${cell.right}`);
  assert.match(await form.locator('.nexus-history-row').first().innerText(), /^session #\d+/);
  await shot(form, 'narrow-try-form.png');
  step(`Run and Copy keep their size (${runBox.width} and ${copyBox.width} px); the call line wraps inside the cell`);

  // -- 2, 3. the catalog: details that wrap, every tool reachable ----------------------------
  const catalog = outputs(4).locator('.nexus-catalog');
  await catalog.scrollIntoViewIfNeeded();
  const count = await catalog.locator('.widget-html', { hasText: 'tools (showing 60' }).first().innerText();
  assert.match(count, /type to narrow them/);
  await catalog.locator('.nexus-catalog-row button', { hasText: /^compound_interest$/ }).click();
  const details = catalog.locator('.nexus-catalog-details');
  await details.locator('.nexus-tool').waitFor({ timeout: 15000 });
  const fits = await details.evaluate(n => {
    const html = n.querySelector('.widget-html-content');
    return { client: n.clientWidth, scroll: n.scrollWidth, htmlScroll: html.scrollWidth, htmlClient: html.clientWidth };
  });
  assert.ok(fits.scroll <= fits.client + 1, `details: ${fits.scroll} px of content in ${fits.client} px`);
  assert.ok(fits.htmlScroll <= fits.htmlClient + 1, `details text: ${fits.htmlScroll} px in ${fits.htmlClient} px`);
  const rowsBox = await box(catalog.locator('.nexus-catalog-rows'));
  const detailsBox = await box(details);
  const where = detailsBox.top >= rowsBox.bottom - 1 ? 'under the list' : `beside the list (${detailsBox.width} px)`;
  await details.scrollIntoViewIfNeeded();
  await shot(details, 'narrow-catalog-details.png');
  step(`the details wrap: ${fits.scroll} px of content in ${fits.client} px, ${where}`);

  const more = catalog.locator('.nexus-catalog-more');
  await more.scrollIntoViewIfNeeded();
  assert.match(await more.innerText(), /more tools? match; type in the search box to narrow the list/);
  const before = await catalog.locator('.nexus-catalog-row').count();
  await catalog.locator('.nexus-catalog-rows').evaluate(n => { n.scrollTop = n.scrollHeight; });
  await shot(catalog.locator('.nexus-catalog-rows'), 'narrow-catalog-more.png');
  await more.locator('button', { hasText: /^Show (all|\d+ more)/ }).last().click();
  await more.waitFor({ state: 'detached', timeout: 15000 });
  const after = await catalog.locator('.nexus-catalog-row').count();
  assert.ok(after > before, `${after} rows after Show all, ${before} before`);
  const total = Number((await catalog.locator('.widget-html', { hasText: / tools/ }).first().innerText()).match(/(\d+) tools/)[1]);
  assert.equal(after, total, 'every tool is drawn');
  await catalog.locator('.nexus-catalog-rows').evaluate(n => { n.scrollTop = n.scrollHeight; });
  await shot(catalog.locator('.nexus-catalog-rows'), 'narrow-catalog-all.png');
  step(`every tool can be shown: ${before} rows, then all ${after}`);

  // -- 5, 6. a refused Run -------------------------------------------------------------------
  const divide = outputs(5).locator('.nexus-form');
  await divide.scrollIntoViewIfNeeded();
  const inputs = divide.locator('input[type="text"]');
  await inputs.nth(1).fill('x');
  await divide.locator('.nexus-copy-call').waitFor({ state: 'hidden', timeout: 15000 });
  await divide.locator('button:has-text("Run")').first().click();
  await divide.locator(':text("required argument is missing")').waitFor({ timeout: 10000 });
  await divide.locator(':text(\'"x" is not a number\')').waitFor({ timeout: 10000 });
  step('one Run flags both fields: a is missing, b is not a number');
  await inputs.nth(0).fill('1');
  await inputs.nth(1).fill('');
  await divide.locator(':text("%tool call divide a=1")').waitFor({ timeout: 15000 });
  await divide.locator('button:has-text("Run")').first().click();
  const saver = divide.locator('.nexus-save-test');
  const expected = saver.locator('input[type="text"]').first();
  await expected.waitFor({ state: 'visible', timeout: 10000 });
  const deadline = Date.now() + 10000;
  while ((await expected.inputValue()) === '' && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  const prefilled = await expected.inputValue();
  assert.equal(prefilled, '$.b: required argument is missing');
  assert.ok(!(await saver.locator('button').isDisabled()));
  await shot(divide, 'narrow-refused.png');
  step(`a refusal offers a test of the field's own message: ${prefilled}`);

  // -- 8, 7. cancel, then a saved test -----------------------------------------------------------
  const countdown = outputs(6).locator('.nexus-form');
  await countdown.scrollIntoViewIfNeeded();
  await countdown.locator('button:has-text("Run")').first().click();
  await countdown.locator('.widget-label', { hasText: /\d+\/10/ }).waitFor({ timeout: 20000 });
  await countdown.locator('button:has-text("Cancel")').click();
  const status = countdown.locator('.nexus-cancelled');
  await status.waitFor({ timeout: 15000 });
  const said = await status.innerText();
  assert.match(said, /^Cancelled after \d+\.\d\d s$/);
  assert.equal(await status.evaluate(n => getComputedStyle(n).color), 'rgb(102, 102, 102)');
  assert.doesNotMatch(await countdown.innerText(), /CancelledError|the call was cancelled/);
  await countdown.locator('.nexus-history-row', { hasText: 'cancelled' }).waitFor({ timeout: 10000 });
  await shot(countdown, 'narrow-cancelled.png');
  step(`a cancel reads: ${said}, in grey; the history row says "cancelled"`);

  await countdown.locator('input[type="text"]').first().fill('1');
  await countdown.locator(':text("%tool call countdown start=1")').waitFor({ timeout: 15000 });
  await countdown.locator('button:has-text("Run")').first().click();
  await countdown.locator('.nexus-result-output', { hasText: 'liftoff' }).waitFor({ timeout: 30000 });
  await countdown.locator('.nexus-save-test button:has-text("Save as test")').click();
  const savedCode = countdown.locator('.nexus-save-test code', { hasText: '%tool test countdown' });
  await savedCode.waitFor({ timeout: 15000 });
  assert.doesNotMatch(await countdown.locator('.nexus-save-test').innerText(), /`/);
  await shot(countdown, 'narrow-saved.png');
  step('the saved test shows %tool test countdown as code, no backticks');

  // -- 4. the history lists the calls made from Python --------------------------------------------
  const history = outputs(8);
  await history.scrollIntoViewIfNeeded();
  const text = await history.innerText();
  assert.match(text, /"a": 1, "b": 4|a=1, b=4|'a': 1, 'b': 4/);
  assert.match(text, /"a": 9, "b": 3|a=9, b=3|'a': 9, 'b': 3/);
  await shot(history, 'narrow-history.png');
  step('the history lists the calls made from Python (reg.call_sync and await reg.call)');

  // -- 9. the stale tool's status -------------------------------------------------------------------
  const list = outputs(10);
  await list.scrollIntoViewIfNeeded();
  const helloRow = list.locator('tr', { hasText: 'hello' });
  const statusCell = helloRow.locator('td').nth(1);
  const badges = await statusCell.locator('span').allInnerTexts();
  assert.ok(badges.includes('stale'), `badges: ${badges}`);
  assert.ok(!badges.includes('ok'), `badges: ${badges}`);
  await shot(list, 'narrow-list.png');
  step(`the stale tool's status says stale (badges: ${badges.filter(Boolean).join(', ')})`);

  assert.deepEqual(consoleErrors, [], 'errors in the page');
  step('all steps passed');
} catch (error) {
  if (page) {
    await page.screenshot({ path: path.join(shots, 'narrow-failure.png') }).catch(() => undefined);
  }
  console.error(error);
  process.exitCode = 1;
} finally {
  await browser.close();
}
