// The sidebar's view bar in a real headless Chromium: group the tools by toolset, show one
// toolset only, and the call summary in the result pane and the history.
//
// Run by tests/e2e/test_sidebar_toolsets.py (JupyterLab with the extension; env as for
// sidebar.spec.mjs). Saves test-artifacts/sidebar-toolsets-grouped.png,
// sidebar-toolsets-filtered.png and sidebar-toolsets-summary.png.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchBrowser } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL ?? 'http://127.0.0.1:8888/';
const token = process.env.NEXUS_E2E_TOKEN ?? '';
const shots = path.dirname(process.env.NEXUS_E2E_SCREENSHOT ?? 'test-artifacts/x.png');
const started = Date.now();
const step = message => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);

const browser = await launchBrowser();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}lab/workspaces/toolsets-${Date.now()}?reset&token=${token}`);
  const tab = page.locator('.jp-SideBar [data-id="nexus-jupyter-tools"]');
  await tab.waitFor({ timeout: 60000 });
  await page.locator('.jp-Launcher').waitFor({ timeout: 60000 });
  await tab.click();
  const item = name => page.locator(`.jp-NexusTools-item[data-tool="${name}"]`);
  await item('multiply').waitFor({ timeout: 15000 });
  const panel = page.locator('.jp-NexusTools');
  step('the Tools panel lists multiply');

  // Group by toolset: one section per toolset, by name; the tools in none last.
  await page.locator('.jp-NexusTools-groupBy').selectOption('toolset');
  await page.locator('.jp-NexusTools-group[data-toolset="files"]').waitFor({ timeout: 5000 });
  const sections = await page.locator('.jp-NexusTools-group').evaluateAll(nodes =>
    nodes.map(n => ({
      toolset: n.getAttribute('data-toolset'),
      title: n.querySelector('.jp-NexusTools-groupTitle').textContent,
      tools: [...n.querySelectorAll('.jp-NexusTools-item')].map(i => i.getAttribute('data-tool'))
    }))
  );
  assert.deepEqual(
    sections.map(s => s.toolset),
    ['files', 'meta', 'shell', 'web', '']
  );
  assert.deepEqual(sections[2].tools, ['bash']);
  assert.match(sections[0].title, /^Toolset · files 6$/);
  assert.match(sections[4].title, /^In no toolset/);
  assert.ok(sections[4].tools.includes('multiply'));
  step(`grouped by toolset: ${sections.map(s => `${s.title}`).join(' | ')}`);
  await panel.screenshot({ path: path.join(shots, 'sidebar-toolsets-grouped.png') });

  // One toolset only: the options come from the server's toolsets, with their sizes.
  const filter = page.locator('.jp-NexusTools-toolsetFilter');
  const options = await filter.locator('option').allInnerTexts();
  // files has 5 live tools: the tools folder's glob shadows the built-in one (its row stays)
  assert.deepEqual(options, ['all', 'files (5)', 'meta (2)', 'shell (1)', 'web (2)']);
  await filter.selectOption('web');
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll('.jp-NexusTools-item')]
        .map(i => i.getAttribute('data-tool'))
        .join(',') === 'web_fetch,web_search',
    null,
    { timeout: 5000 }
  );
  step('the web toolset alone: web_fetch, web_search');
  // grouped by source again, the filter still holds: one built-in group of the two
  await page.locator('.jp-NexusTools-groupBy').selectOption('source');
  await page.locator('.jp-NexusTools-group[data-source="builtin"]').waitFor({ timeout: 5000 });
  assert.equal(await page.locator('.jp-NexusTools-item').count(), 2);
  await panel.screenshot({ path: path.join(shots, 'sidebar-toolsets-filtered.png') });
  step('grouped by source with the filter kept: the two web tools');

  // The result pane and the history show what the call did, in one line.
  await filter.selectOption('files');
  await item('ls').click();
  await page.locator('.jp-NexusTools-run').click();
  const summary = page.locator('.jp-NexusTools-result .jp-NexusTools-callSummary');
  await summary.waitFor({ timeout: 10000 });
  assert.equal(await summary.innerText(), 'Listing .');
  const entry = page.locator('.jp-NexusTools-historyEntry').first();
  assert.match(await entry.innerText(), /ok/);
  assert.equal(await entry.locator('.jp-NexusTools-historySummary').innerText(), 'Listing .');
  await panel.screenshot({ path: path.join(shots, 'sidebar-toolsets-summary.png') });
  step('the result pane and the history say "Listing ."');
} finally {
  await browser.close();
}
