// The notebook catalog (%tools) grouped and filtered by toolset, in a real headless Chromium.
//
// Run by tests/e2e/test_sidebar_toolsets.py, which writes catalog-toolsets.ipynb (it opens
// the catalog) into the server's root. Saves test-artifacts/catalog-toolsets-grouped.png and
// catalog-toolsets-filtered.png and catalog-toolsets-spelled.png.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser, openNotebook, runAllCells } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL;
const token = process.env.NEXUS_E2E_TOKEN;
const shots = path.dirname(process.env.NEXUS_E2E_SCREENSHOT);
const started = Date.now();
const step = m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);

const browser = await launchBrowser();
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  await openNotebook(page, base, token, 'catalog-toolsets.ipynb');
  await runAllCells(page);
  const catalog = page.locator('.nexus-catalog').first();
  await catalog.locator('.nexus-catalog-row').first().waitFor({ timeout: 120000 });
  step('the catalog is shown');

  const dropdown = label =>
    catalog.locator('.widget-dropdown', { has: page.locator(`label:text-is("${label}")`) }).locator('select');
  await dropdown('group').selectOption({ label: 'by toolset' });
  await page.waitForFunction(
    () => document.querySelectorAll('.nexus-catalog .nexus-catalog-group').length >= 4,
    null,
    { timeout: 10000 }
  );
  const headings = await catalog.locator('.nexus-catalog-group').allInnerTexts();
  assert.deepEqual(
    headings.map(h => h.replace(/\s+/g, ' ').trim()),
    // the tools folder's glob replaces the built-in one here (nex.yaml allows it): files has 5
    ['Toolset · files 5', 'Toolset · meta 2', 'Toolset · shell 1', 'Toolset · web 2', 'In no toolset 4']
  );
  // each heading sits above its own rows, none overlapping
  const boxes = await catalog.locator('.nexus-catalog-rows > *').evaluateAll(nodes =>
    nodes.map(n => {
      const box = n.getBoundingClientRect();
      return { heading: n.classList.contains('nexus-catalog-group'), top: box.top, bottom: box.bottom };
    })
  );
  for (let i = 1; i < boxes.length; i++) {
    assert.ok(boxes[i].top >= boxes[i - 1].bottom - 1, `row ${i} overlaps the one above`);
  }
  step(`grouped by toolset: ${headings.map(h => h.replace(/\s+/g, ' ').trim()).join(' | ')}`);
  await catalog.screenshot({ path: path.join(shots, 'catalog-toolsets-grouped.png') });

  await dropdown('toolset').selectOption('shell');
  await page.waitForFunction(
    () => document.querySelectorAll('.nexus-catalog .nexus-catalog-row').length === 1,
    null,
    { timeout: 10000 }
  );
  assert.deepEqual(
    (await catalog.locator('.nexus-catalog-group').allInnerTexts()).map(h => h.replace(/\s+/g, ' ').trim()),
    ['Toolset · shell 1']
  );
  step('the shell toolset alone: bash under its heading');
  await catalog.screenshot({ path: path.join(shots, 'catalog-toolsets-filtered.png') });

  // A misspelt search: the count line says how search read it, bash still comes first.
  await dropdown('toolset').selectOption({ index: 0 });
  await catalog.locator('input[placeholder="search tools…"]').fill('run a shell commnad');
  await page.waitForFunction(
    () =>
      document.querySelector('.nexus-catalog')?.textContent?.includes('searched for run a shell command'),
    null,
    { timeout: 10000 }
  );
  const first = catalog.locator('.nexus-catalog-row').first();
  assert.match(await first.innerText(), /^bash/);
  step('a misspelt search says what it searched for: bash first');
  await catalog.screenshot({ path: path.join(shots, 'catalog-toolsets-spelled.png') });
} finally {
  await browser.close();
}
