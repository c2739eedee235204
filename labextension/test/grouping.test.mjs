// Unit tests of grouping the catalog's rows by toolset (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { groupByToolset, NO_TOOLSET, toolsetTitle } from '../lib/grouping.js';

const row = (name, toolset) => ({ name, toolset });

test('groupByToolset: toolsets by name when browsing, the tools in none last', () => {
  const tools = [row('bash', 'shell'), row('add', ''), row('read', 'files'), row('ls', 'files')];
  const groups = groupByToolset(tools, false);
  assert.deepEqual(
    groups.map(([key, rows]) => [key, rows.map(r => r.name)]),
    [
      ['files', ['read', 'ls']],
      ['shell', ['bash']],
      [NO_TOOLSET, ['add']]
    ]
  );
});

test('groupByToolset: search results keep the group of the best hit first', () => {
  const tools = [row('add', undefined), row('bash', 'shell'), row('read', 'files')];
  assert.deepEqual(
    groupByToolset(tools, true).map(([key]) => key),
    [NO_TOOLSET, 'shell', 'files']
  );
});

test('toolsetTitle names the toolset, or says the tools are in none', () => {
  assert.equal(toolsetTitle('web'), 'Toolset · web');
  assert.equal(toolsetTitle(NO_TOOLSET), 'In no toolset');
});
