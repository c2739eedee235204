// Unit tests of the panel's pure presentation helpers (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { callCommand, formUiSchema, isMultiline, sourceTitle } from '../lib/present.js';

test('callCommand writes key=value when every value reads back as itself', () => {
  assert.equal(callCommand('add', { a: 1, b: 2.5, c: true }), '%tool call add a=1 b=2.5 c=true');
  assert.equal(callCommand('read', { path: 'notebooks/x.py' }), '%tool call read path=notebooks/x.py');
  assert.equal(callCommand('list_tools', {}), '%tool call list_tools');
});

test('callCommand falls back to one JSON object on one line', () => {
  assert.equal(
    callCommand('bash', { command: 'echo one\necho two' }),
    '%tool call bash {"command":"echo one\\necho two"}'
  );
  // "123" would come back as a number from key=value
  assert.equal(callCommand('read', { path: '123' }), '%tool call read {"path":"123"}');
  assert.equal(callCommand('read', { path: 'x', offset: undefined }), '%tool call read path=x');
});

test('sourceTitle makes source ids readable', () => {
  assert.equal(sourceTitle('directory:tools/dynamic'), 'Tools folder · tools/dynamic');
  assert.equal(sourceTitle('mcp:time'), 'MCP server · time');
  assert.equal(sourceTitle('builtin'), 'Built-in');
  assert.equal(sourceTitle('skill'), 'Skills');
  assert.equal(sourceTitle('kernel:notebooks/a.ipynb'), 'Notebook kernel · notebooks/a.ipynb');
});

test('long strings get a text area and required fields an asterisk', () => {
  assert.equal(isMultiline('command', { type: 'string' }), true);
  assert.equal(isMultiline('city', { type: 'string' }), false);
  assert.equal(isMultiline('notes', { type: 'string', maxLength: 5000 }), true);
  assert.equal(isMultiline('command', { type: 'integer' }), false);
  const ui = formUiSchema({
    type: 'object',
    properties: { command: { type: 'string' }, cwd: { type: 'string' } },
    required: ['command']
  });
  assert.deepEqual(ui, {
    command: { 'ui:title': 'command *', 'ui:widget': 'textarea', 'ui:options': { rows: 3 } }
  });
});
