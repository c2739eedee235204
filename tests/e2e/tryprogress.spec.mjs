// The sidebar's Try form as the trial met it, in a real headless Chromium: one Run flags a
// number box holding text and an empty required field together; a kernel's tool that reports
// progress shows a bar with its message while it runs; a kernel's tool that raises its own
// exception class shows that class and its message, worded for a person.
//
// progress.ipynb is written by tests/e2e/test_try_progress.py: the extension, `countdown`
// (reports each step) and `describe_numbers` (statistics.fmean of the values).
// Screenshots: tryprogress-bad-number.png, tryprogress-running.png, tryprogress-raises.png.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser, openNotebook, runAllCells, specSetup } from './browser.mjs';

const { base, token, screenshot, step } = specSetup();
const shots = path.dirname(screenshot);

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  page.on('pageerror', err => console.log(`page error: ${err}`));
  await openNotebook(page, base, token, 'progress.ipynb');
  await runAllCells(page);
  await page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]').click({ timeout: 60000 });
  const panel = page.locator('.jp-NexusTools');
  const search = page.locator('.jp-NexusTools-search');
  const open = async name => {
    await search.fill(name);
    await page.locator(`.jp-NexusTools-item[data-tool="${name}"]`).click({ timeout: 60000 });
  };

  // -- one Run flags every field --------------------------------------------------------
  await open('multiply');
  const a = page.locator('#jp-NexusTools-multiply_a');
  await a.waitFor();
  await a.pressSequentially('abc', { delay: 20 });
  await page.locator('.jp-NexusTools-run').click();
  const notice = page.locator('.jp-NexusTools-notice', { hasText: 'Not run:' });
  await notice.waitFor({ timeout: 10000 });
  assert.equal(
    (await notice.innerText()).trim(),
    'Not run: one value is not a number and one required field is empty; see the fields above.'
  );
  const errors = await page.locator('.jp-NexusTools-form .error-detail').allInnerTexts();
  assert.ok(errors.some(e => /"abc" is not an integer/.test(e)), JSON.stringify(errors));
  assert.ok(errors.some(e => /required argument is missing/.test(e)), JSON.stringify(errors));
  await panel.screenshot({ path: path.join(shots, 'tryprogress-bad-number.png') });
  step(`one Run flags both fields: ${JSON.stringify(errors)}`);
  await page.locator('.jp-NexusTools-back').click();

  // -- progress of a kernel's tool ------------------------------------------------------
  await open('countdown');
  const start = page.locator('#jp-NexusTools-countdown_start');
  await start.fill('8');
  await page.locator('.jp-NexusTools-run').click();
  const bar = page.locator('.jp-NexusTools-progress');
  await bar.filter({ hasText: /^[3-7]\/8 / }).waitFor({ timeout: 30000 });
  const label = (await bar.innerText()).trim();
  const value = await bar.locator('progress').evaluate(el => el.value);
  assert.ok(value > 0 && value < 1, `bar at ${value}`);
  await panel.screenshot({ path: path.join(shots, 'tryprogress-running.png') });
  step(`while countdown runs the form shows the bar at ${value.toFixed(2)} with "${label}"`);
  await page.locator('.jp-NexusTools-structured', { hasText: 'liftoff' }).waitFor({ timeout: 30000 });
  assert.equal(await bar.count(), 0, 'the bar goes when the call ends');
  step('countdown finished: liftoff, the bar is gone');
  await page.locator('.jp-NexusTools-back').click();

  // -- a kernel tool's own exception ----------------------------------------------------
  await open('describe_numbers');
  await page.locator('.jp-NexusTools-run').waitFor();
  await page.locator('.jp-NexusTools-run').click();
  const failed = page.locator('.jp-NexusTools-result-error .jp-NexusTools-errorText').first();
  await failed.waitFor({ timeout: 30000 });
  const said = (await failed.innerText()).trim();
  assert.equal(said, 'StatisticsError: fmean requires at least one data point');
  await page.locator('.jp-NexusTools-result-error').scrollIntoViewIfNeeded();
  await panel.screenshot({ path: path.join(shots, 'tryprogress-raises.png') });
  step(`describe_numbers([]) fails as: ${said}`);
  await page.screenshot({ path: screenshot });
  step('all steps passed');
} catch (err) {
  if (page) await page.screenshot({ path: path.join(shots, 'tryprogress-failed.png') });
  throw err;
} finally {
  await browser.close();
}
