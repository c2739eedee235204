// The sidebar's Resources and Prompts sections in a real headless Chromium.
//
// Run by tests/e2e/test_offers_browser.py, which starts JupyterLab with a tool file that
// defines resources, a resource template and a prompt (NEXUS_E2E_* as in sidebar.spec.mjs).
// Opens the Tools panel, reads a resource, fills and reads a template, renders a prompt with
// a choice argument, filters with the search box, then a new file's prompt appears live.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL ?? 'http://127.0.0.1:8888/';
const token = process.env.NEXUS_E2E_TOKEN ?? '';
const toolsDir = process.env.NEXUS_E2E_TOOLS_DIR;
const screenshot = process.env.NEXUS_E2E_SCREENSHOT ?? 'test-artifacts/offers.png';

const started = Date.now();
function step(message) {
  console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

const browser = await launchBrowser();
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  const errors = [];
  page.on('pageerror', err => errors.push(String(err)));
  await page.goto(`${base}lab/workspaces/offers-${Date.now()}?reset&token=${token}`, {
    waitUntil: 'domcontentloaded'
  });
  const tab = page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]');
  await tab.waitFor({ timeout: 60000 });
  await page.locator('.jp-Launcher').waitFor({ timeout: 60000 });
  await tab.click();
  const panel = page.locator('.jp-NexusTools');
  const resources = panel.locator('[data-offers="resources"]');
  const prompts = panel.locator('[data-offers="prompts"]');
  await prompts.waitFor({ timeout: 30000 });
  await resources.waitFor();
  assert.match(await resources.locator('.jp-NexusTools-groupTitle').innerText(), /Resources\s*2/);
  assert.match(await prompts.locator('.jp-NexusTools-groupTitle').innerText(), /Prompts\s*1/);
  step('the panel shows Resources (2) and Prompts (1) below the tools');

  const today = resources.locator('[data-resource="notes://today"]');
  await today.locator('.jp-NexusOffers-rowHeader').click();
  await today.getByRole('button', { name: 'Read' }).click();
  await today.locator('.jp-NexusOffers-preview', { hasText: 'ship it' }).waitFor();
  step('resource read: notes://today shows its markdown');

  const day = resources.locator('[data-resource="notes://day/{day}"]');
  await day.locator('.jp-NexusOffers-rowHeader').click();
  const read = day.getByRole('button', { name: 'Read' });
  assert.equal(await read.isDisabled(), true, 'Read waits for the template parameter');
  await day.locator('input').fill('monday');
  await read.click();
  await day.locator('.jp-NexusOffers-preview', { hasText: 'notes of monday' }).waitFor();
  step('template read: notes://day/monday');

  const review = prompts.locator('[data-prompt="review"]');
  await review.locator('.jp-NexusOffers-rowHeader').click();
  await review.locator('label', { hasText: 'code' }).locator('input').fill('x = 1');
  await review.locator('select').selectOption('thorough');
  await review.getByRole('button', { name: 'Render' }).click();
  await review.locator('.jp-NexusOffers-preview', { hasText: 'Review (thorough)' }).waitFor();
  step('prompt rendered with its arguments: user message "Review (thorough)"');
  await page.mouse.move(900, 500); // no hover highlight in the screenshot
  await review.locator('.jp-NexusOffers-preview').scrollIntoViewIfNeeded();
  await panel.screenshot({ path: screenshot });
  step(`screenshot saved to ${screenshot}`);

  await panel.locator('.jp-NexusTools-search').fill('monday notes');
  await page.waitForFunction(
    () => !document.querySelector('[data-offers="prompts"]'),
    null,
    { timeout: 5000 }
  );
  await panel.locator('.jp-NexusTools-search').fill('');
  step('the search box filters the sections too');

  fs.writeFileSync(
    path.join(toolsDir, 'later_prompts.py'),
    'from nexus_jupyter import prompt\n\n\n@prompt\ndef summarize(text: str) -> str:\n' +
      '    """Summarize a text."""\n    return f"Summarize: {text}"\n'
  );
  await prompts.locator('[data-prompt="summarize"]').waitFor({ timeout: 10000 });
  step('a prompt saved in a new tool file appears without a reload');
  assert.deepEqual(errors, []);
} catch (error) {
  if (page) {
    await page
      .screenshot({ path: screenshot.replace(/\.png$/, '-failure.png') })
      .catch(() => undefined);
  }
  throw error;
} finally {
  await browser.close();
}
