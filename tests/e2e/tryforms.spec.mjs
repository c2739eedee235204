// The Try forms as a new user meets them, in a real headless Chromium.
//
// Sidebar: a number box takes text in progress ("-", "1e", "2*3") and says why it is not a
// number yet instead of dropping it; Run with such a value calls nothing; a call refreshes
// the calls line, and so does a call made elsewhere (REST, an MCP client); "Save as test" waits for a run; a search that matches nothing offers to
// clear it; optional parameters (`str | None`, nested in an object or a list too) are plain
// boxes whose empty value is not sent (null for a required one), `int | str` a chooser named
// "integer" / "string".
// Notebook (tryforms.ipynb, written by tests/e2e/test_try_forms.py): the %tools catalog gives
// each summary its own line across the column; after a run refused before the call, "Save as
// test" offers nothing; the form and JSON views show the same arguments both ways; the
// catalog's calls line follows a call made from another cell's form; an empty catalog says
// what to do.
//
// Screenshots: tryforms-sidebar-number.png, tryforms-sidebar-calls.png,
// tryforms-sidebar-optional.png,
// tryforms-sidebar-no-match.png,
// tryforms-catalog.png, tryforms-form-refused.png, tryforms-form-json.png,
// tryforms-empty.png.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser, openNotebook, runAllCells, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();
const shots = path.dirname(screenshot);
const shot = (locator, name) => locator.screenshot({ path: path.join(shots, name) });

// An input's value once it settles on `expected` (a widget's or React's render can lag the
// click under load), read for up to 10 s; the assertion then says what it was.
async function valueOf(locator, expected, what, read = text => text) {
  const deadline = Date.now() + 10000;
  const seen = async () => {
    try {
      return read(await locator.inputValue());
    } catch {
      return undefined; // JSON not whole yet
    }
  };
  let value = await seen();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 100));
    value = await seen();
  }
  assert.deepEqual(value, expected, what);
}

const browser = await launchBrowser();
let page;
const consoleErrors = [];
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  page.on('pageerror', err => consoleErrors.push(String(err)));

  // -- the sidebar --------------------------------------------------------------------------
  await page.goto(`${base}lab/workspaces/tryforms-${Date.now()}?reset&token=${token}`);
  // A fresh workspace opens a Launcher, which takes the keyboard focus when it shows: on a
  // busy machine that is seconds later, in the middle of typing into the sidebar.
  await page.locator('.jp-Launcher').first().waitFor({ timeout: 60000 });
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click({ timeout: 60000 });
  const panel = page.locator('.jp-NexusTools');
  const search = page.locator('.jp-NexusTools-search');
  await search.fill('multiply');
  await page.locator('.jp-NexusTools-item[data-tool="multiply"]').click({ timeout: 15000 });
  const a = page.locator('#jp-NexusTools-multiply_a');
  const b = page.locator('#jp-NexusTools-multiply_b');
  await a.waitFor();
  const saveButton = page.locator('.jp-NexusTools-saveTestButton');
  assert.ok(await saveButton.isDisabled(), 'Save as test before any run');
  assert.match(await page.locator('.jp-NexusTools-saveTestWhy').innerText(), /Run the tool, then save/);
  step('before a run, Save as test is disabled and says to run first');

  for (const [typed, why] of [
    ['-', /"-" is not an integer yet: finish typing it/],
    ['1e', /"1e" is not an integer yet/],
    ['2*3', /does not work out expressions/],
    ['abc', /"abc" is not an integer\./]
  ]) {
    await a.fill('');
    await a.pressSequentially(typed, { delay: 20 });
    // the last key's render can lag under load: wait for it, then check it stays
    await valueOf(a, typed, `the box keeps ${typed}`);
    await page.locator('.jp-NexusTools-numberProblem', { hasText: why }).waitFor({ timeout: 5000 });
  }
  await a.fill('');
  await a.pressSequentially('2*3');
  await shot(panel, 'tryforms-sidebar-number.png');
  step('the integer box keeps "-", "1e", "2*3" and "abc" as typed, each with why it is not a number');
  const calls = page.locator('.jp-NexusTools-calls');
  const before = await calls.innerText();
  await b.fill('7');
  await page.locator('.jp-NexusTools-run').click();
  await page.locator('.jp-NexusTools-notice', { hasText: 'Not run: one value is not a number' }).waitFor();
  assert.equal(await calls.innerText(), before, 'nothing reached the server');
  assert.equal(await page.locator('.jp-NexusTools-historyEntry').count(), 0);
  step('Run with "2*3" in a: not run, the field says why, nothing reached the server');

  await a.fill('6');
  await page.locator('.jp-NexusTools-run').click();
  await page.locator('.jp-NexusTools-structured', { hasText: '42' }).waitFor({ timeout: 10000 });
  await calls.filter({ hasText: /Calls on this server: 1, 0 failed/ }).waitFor({ timeout: 5000 });
  assert.ok(!(await saveButton.isDisabled()), 'Save as test after a run');
  step(`after the call the calls line says: ${await calls.innerText()}`);

  // A call from outside the sidebar (REST from this script, as an MCP client of the same
  // server makes one): the events socket names the tool and the open calls line follows.
  const outside = await fetch(`${base}nexus/api/tools/multiply/call`, {
    method: 'POST',
    headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ arguments: { a: 2, b: 3 } })
  });
  assert.equal(outside.status, 200, await outside.text());
  await calls.filter({ hasText: /Calls on this server: 2, 0 failed/ }).waitFor({ timeout: 10000 });
  await shot(panel, 'tryforms-sidebar-calls.png');
  step(`a call from outside the sidebar: the open calls line says ${await calls.innerText()}`);

  await page.locator('.jp-NexusTools-back').click();
  await search.fill('xqzv');
  const empty = page.locator('.jp-NexusTools-empty');
  await empty.waitFor({ timeout: 5000 });
  assert.match(await empty.innerText(), /No tools match/);
  await shot(panel, 'tryforms-sidebar-no-match.png');
  await page.locator('.jp-NexusTools-clearFilter', { hasText: 'Clear the search' }).click();
  await page.locator('.jp-NexusTools-item[data-tool="multiply"]').waitFor({ timeout: 5000 });
  await valueOf(search, '', 'the search box was cleared');
  step('a search matching nothing offers "Clear the search", which brings the tools back');

  // Optional parameters (note_tool.py, written by test_try_forms.py): `str | None` and the
  // like are plain boxes, nested ones too; `int | str` is a chooser named by type.
  await search.fill('note');
  await page.locator('.jp-NexusTools-item[data-tool="note"]').click({ timeout: 15000 });
  const id = name => page.locator(`#jp-NexusTools-note_${name}`);
  await id('label').waitFor();
  const tryForm = page.locator('.jp-NexusTools-form');
  assert.doesNotMatch(await tryForm.innerText(), /Option \d/, 'no "Option 1" in the form');
  assert.equal(await id('label').getAttribute('type'), 'text', 'label is a text box');
  assert.match(await tryForm.innerText(), /label \*/);
  assert.match(await tryForm.innerText(), /A label, or none\./);
  assert.ok(await id('count').evaluate(el => el.classList.contains('jp-NexusTools-number')), 'count is the number box');
  assert.ok(await id('spot_floor').evaluate(el => el.classList.contains('jp-NexusTools-number')), 'spot.floor is the number box');
  const chooser = id('key__anyof_select');
  assert.deepEqual(await chooser.locator('option').allInnerTexts(), ['integer', 'string']);
  step('optional parameters are plain boxes (label, count, spot.room, spot.floor); key chooses between integer and string');

  const noteResult = page.locator('.jp-NexusTools-result');
  // what the tool said it got (its one line, without the quotes of a JSON string view)
  const ran = async () => {
    const text = await noteResult.locator('.jp-NexusTools-structured').textContent();
    return (text.match(/label=[^\n"]*/) ?? [text])[0].trim();
  };
  await page.locator('.jp-NexusTools-run').click();
  await noteResult.locator('.jp-NexusTools-structured', { hasText: 'label=' }).waitFor({ timeout: 10000 });
  step(`left empty: ${await ran()}`);

  await id('label').fill('hi');
  await id('count').fill('3');
  const adds = tryForm.locator('button[title="Add item"]');
  await adds.nth(0).click();
  await id('tags_0').fill('a');
  await chooser.selectOption({ label: 'string' });
  await id('key').fill('k7');
  await id('spot_room').fill('lab');
  await id('spot_floor').fill('2');
  await adds.nth(1).click();
  await adds.nth(1).click();
  await id('sizes_0').fill('5');
  await id('sizes_1').waitFor();
  // the whole form in one picture: a page tall enough for it
  await page.setViewportSize({ width: 1280, height: 2200 });
  await tryForm.scrollIntoViewIfNeeded();
  await shot(tryForm, 'tryforms-sidebar-optional.png');
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.locator('.jp-NexusTools-run').click();
  await noteResult.locator('.jp-NexusTools-structured', { hasText: "label='hi'" }).waitFor({ timeout: 10000 });
  step(`filled: ${await ran()}`);
  await page.locator('.jp-NexusTools-back').click();

  // -- the notebook -------------------------------------------------------------------------
  await openNotebook(page, base, token, 'tryforms.ipynb');
  await runAllCells(page);
  const catalog = page.locator('.nexus-catalog').first();
  const form = page.locator('.nexus-form').first();
  await form.waitFor({ timeout: 120000 });
  await page.locator('.nexus-catalog-empty').nth(1).waitFor({ timeout: 60000 });

  await catalog.scrollIntoViewIfNeeded();
  const rows = await catalog.locator('.nexus-catalog-row').evaluateAll(nodes =>
    nodes.map(row => {
      const summary = row.querySelector('.nexus-catalog-summary');
      return {
        name: row.querySelector('button').textContent.trim(),
        row: row.getBoundingClientRect().width,
        summary: summary.getBoundingClientRect().width,
        lines: Math.round(summary.getBoundingClientRect().height / parseFloat(getComputedStyle(summary).lineHeight || '17'))
      };
    })
  );
  for (const row of rows) {
    assert.ok(row.summary >= 0.9 * row.row, `${row.name}: the summary has ${row.summary} of ${row.row} px`);
    assert.ok(row.summary >= 400, `${row.name}: the summary is squeezed to ${row.summary} px`);
  }
  await catalog.locator('.nexus-catalog-row button', { hasText: /^add$/ }).click();
  await catalog.locator('.nexus-tool').waitFor();
  assert.match(await catalog.innerText(), /calls: none yet/);
  await shot(catalog, 'tryforms-catalog.png');
  step(`%tools: ${rows.length} rows, each summary on its own line, ${Math.min(...rows.map(r => r.summary))} px wide or more`);

  await form.scrollIntoViewIfNeeded();
  const inputs = form.locator('input[type="text"]');
  await inputs.nth(0).fill('20');
  await inputs.nth(1).fill('22');
  await form.locator('button:has-text("Run")').first().click();
  await form.locator('.nexus-result-output', { hasText: '42' }).waitFor({ timeout: 30000 });
  const saver = form.locator('.nexus-save-test');
  await saver.locator('input[type="text"]').first().waitFor();
  assert.equal(await saver.locator('input[type="text"]').first().inputValue(), '42');
  assert.ok(!(await saver.locator('button').isDisabled()));
  await inputs.nth(0).fill('abc');
  // the kernel has the "abc" once the form's call line is gone (it cannot read the call; a
  // Run clicked before that, on a busy machine, would run the 20 again)
  await form.locator(':text("%tool call add a=20")').waitFor({ state: 'hidden', timeout: 15000 });
  await form.locator('button:has-text("Run")').first().click();
  await saver.locator(':text("nothing to save")').waitFor({ timeout: 10000 });
  assert.ok(await saver.locator('button').isDisabled(), 'Save as test after a refused run');
  await shot(form, 'tryforms-form-refused.png');
  step('after a run refused for "abc", Save as test is disabled: it offers no stale 42');

  await catalog.scrollIntoViewIfNeeded();
  await catalog.locator(':text("calls: 1, 0 failed")').waitFor({ timeout: 10000 });
  step("the catalog's calls line counted the call made from the other cell's form");

  await form.scrollIntoViewIfNeeded();
  await inputs.nth(0).fill('6');
  // the kernel has the 6 once the form's call line says so (a busy kernel takes a while)
  await form.locator(':text("%tool call add a=6")').waitFor({ timeout: 15000 });
  await form.locator('.widget-toggle-button', { hasText: 'JSON' }).click();
  const raw = form.locator('textarea').first();
  await raw.waitFor();
  await valueOf(raw, { a: 6, b: 22 }, 'the JSON view shows the form', JSON.parse);
  await raw.fill('{"a": 3}');
  await form.locator(':text("%tool call add a=3")').waitFor({ timeout: 15000 });
  await form.locator('.widget-toggle-button', { hasText: 'form' }).click();
  await inputs.nth(0).waitFor();
  await valueOf(inputs.nth(0), '3', 'a from the JSON');
  await valueOf(inputs.nth(1), '', 'b was taken out in the JSON');
  assert.match(await form.innerText(), /%tool call add a=3/);
  await inputs.nth(1).fill('x');
  await form.locator('.widget-toggle-button', { hasText: 'JSON' }).click();
  await form.locator(':text("Fix the field marked above to switch to JSON")').waitFor({ timeout: 10000 });
  assert.match(await form.locator('.widget-toggle-button.mod-active').innerText(), /form/);
  await shot(form, 'tryforms-form-json.png');
  step('form -> JSON -> form shows the same arguments; an unreadable field keeps the form view');

  const emptyCatalog = page.locator('.nexus-catalog-empty').nth(0);
  await emptyCatalog.scrollIntoViewIfNeeded();
  assert.match(await emptyCatalog.innerText(), /No tools yet\. Add one: put @tool/);
  const noMatch = page.locator('.nexus-catalog-empty').nth(1);
  assert.match(await noMatch.innerText(), /No tool matches the search/);
  await shot(page.locator('.jp-Notebook .jp-Cell').nth(4), 'tryforms-empty.png');
  await noMatch.locator('button', { hasText: 'Clear the search' }).click();
  await page.locator('.nexus-catalog').nth(2).locator('.nexus-catalog-row').first().waitFor({ timeout: 10000 });
  step('an empty catalog says how to add a tool; a search that matches nothing clears with a click');
  assert.deepEqual(consoleErrors, [], 'errors in the page');
  step('all steps passed');
} catch (error) {
  if (page) {
    await page.screenshot({ path: path.join(shots, 'tryforms-failure.png') }).catch(() => undefined);
  }
  console.error(error);
  process.exitCode = 1;
} finally {
  await browser.close();
}
