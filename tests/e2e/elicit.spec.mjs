// A tool that asks its user (ctx.elicit) during a call from the notebook's test-call form,
// in a real headless Chromium: the form generated from the requested schema appears in the
// result pane, the person fills it in and presses Submit, the tool finishes with the answer.
//
// Run by tests/e2e/test_elicit_browser.py, which starts JupyterLab and sets NEXUS_E2E_URL,
// NEXUS_E2E_TOKEN, NEXUS_E2E_SCREENSHOT, NEXUS_E2E_BROWSER.
import { launchBrowser } from './browser.mjs';

const base = process.env.NEXUS_E2E_URL;
const token = process.env.NEXUS_E2E_TOKEN;
const screenshot = process.env.NEXUS_E2E_SCREENSHOT;
const started = Date.now();
const step = m => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);

const TOOL = `%load_ext nexus_jupyter
from nexus_jupyter import ToolContext, tool

@tool
async def book(hotel: str, ctx: ToolContext) -> str:
    """Book a hotel room, asking the guest for the details."""
    answer = await ctx.elicit(f"When do you arrive at {hotel}?", {
        "type": "object",
        "properties": {
            "date": {"type": "string", "description": "Day of arrival (YYYY-MM-DD)"},
            "nights": {"type": "integer", "minimum": 1, "default": 2},
            "room": {"type": "string", "enum": ["single", "double"], "default": "double"},
            "breakfast": {"type": "boolean", "default": True},
        },
        "required": ["date"],
    })
    if not answer.accepted:
        return f"no booking ({answer.action})"
    c = answer.content
    return f"{hotel}: {c['nights']} nights, {c['room']} room, from {c['date']}"`;

const notebook = {
  nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    { cell_type: 'code', metadata: {}, source: TOOL, outputs: [], execution_count: null, id: 'c1' },
    { cell_type: 'code', metadata: {}, source: '%tool try book', outputs: [], execution_count: null, id: 'c2' },
  ],
};
const put = await fetch(`${base}api/contents/elicit.ipynb`, {
  method: 'PUT',
  headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
  body: JSON.stringify({ type: 'notebook', content: notebook }),
});
if (!put.ok) throw new Error(`could not write the notebook: ${put.status} ${await put.text()}`);

// Open a notebook in a fresh workspace, wait for an idle kernel, then Run All Cells.
async function openAndRunAll(page, path) {
  await page.goto(`${base}lab/workspaces/e-${Date.now()}/tree/${path}?reset&token=${token}`);
  await page.waitForSelector('.jp-Notebook .jp-Cell', { timeout: 60000 });
  await page.waitForFunction(
    () => /Idle/.test(document.querySelector('.jp-StatusBar-Widget, #jp-main-statusbar')?.textContent ?? ''),
    null, { timeout: 90000 });
  step(`${path} open, kernel idle`);
  await page.locator('.jp-Notebook').first().click();
  await page.keyboard.press('Control+Shift+C');
  await page.locator('.lm-CommandPalette input').waitFor({ timeout: 10000 });
  await page.keyboard.type('Run All Cells');
  await page.keyboard.press('Enter');
}

const browser = await launchBrowser();
let page;
try {
  page = await (await browser.newContext({ viewport: { width: 1280, height: 1200 } })).newPage();
  await openAndRunAll(page, 'elicit.ipynb');
  const form = page.locator('.nexus-form').first();
  await form.waitFor({ timeout: 120000 });
  step('test-call form rendered');
  await form.locator('input[type="text"]').first().fill('Ritz');
  await form.locator('button:has-text("Run")').first().click();
  const asked = page.locator('.nexus-elicit').first();
  await asked.waitFor({ timeout: 30000 });
  await page.locator('.nexus-elicit :text("When do you arrive at Ritz?")').waitFor({ timeout: 10000 });
  step('the tool asked: elicitation form shown');
  await asked.locator('input[type="text"]').first().fill('2026-12-24');
  await asked.scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshot.replace(/\.png$/, '-asked.png') });
  step('screenshot of the question saved');
  await asked.locator('button:has-text("Submit")').click();
  await page.locator('.nexus-form :text("Ritz: 2 nights, double room, from 2026-12-24")').first()
    .waitFor({ timeout: 30000 });
  step('Submit pressed: the tool finished with the answer');
  await page.screenshot({ path: screenshot });
  step('screenshot saved');

  // An upstream MCP server's task asks too: server-everything's research tool, run from the
  // form, asks to clarify inside its task; the question appears as the same kind of form.
  const everything = process.env.NEXUS_E2E_EVERYTHING;
  const node = process.env.NEXUS_E2E_NODE;
  if (everything && node) {
    const upstream = {
      ...notebook,
      cells: [
        { cell_type: 'code', metadata: {}, outputs: [], execution_count: null, id: 'u1',
          source: `%load_ext nexus_jupyter
import time
import nexus_jupyter
from nexus_jupyter.sources.mcp import McpSource
reg = nexus_jupyter.registry()
reg.add_source(McpSource("everything", command=${JSON.stringify(node)}, args=[${JSON.stringify(everything)}, "stdio"]))
for _ in range(300):
    if reg.find("mcp__everything__simulate-research-query"):
        break
    time.sleep(0.1)` },
        { cell_type: 'code', metadata: {}, outputs: [], execution_count: null, id: 'u2',
          source: '%tool try mcp__everything__simulate-research-query' },
      ],
    };
    const wrote = await fetch(`${base}api/contents/upstream.ipynb`, {
      method: 'PUT',
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'notebook', content: upstream }),
    });
    if (!wrote.ok) throw new Error(`could not write the notebook: ${wrote.status}`);
    await openAndRunAll(page, 'upstream.ipynb');
    const research = page.locator('.nexus-form').first();
    await research.waitFor({ timeout: 120000 });
    await research.locator('input[type="text"]').first().fill('tides');
    await research.locator('select').first().selectOption({ label: 'true' });
    await research.locator('button:has-text("Run")').first().click();
    const question = page.locator('.nexus-elicit').first();
    await question.waitFor({ timeout: 60000 });
    step('the upstream task asked: its question shown as a form');
    await question.locator('select').first().selectOption({ index: 1 });
    await question.scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshot.replace(/\.png$/, '-upstream.png') });
    await question.locator('button:has-text("Submit")').click();
    await page.locator('.nexus-form :text("Research Report: tides (")').first()
      .waitFor({ timeout: 60000 });
    step('the upstream task finished with the answer');
  }
} catch (err) {
  if (page) await page.screenshot({ path: screenshot.replace(/\.png$/, '-failed.png') });
  throw err;
} finally {
  await browser.close();
}
