// Unit tests of numbers typed as text in the Try form (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  notRunBecause,
  numberKind,
  numberValue,
  readNumber,
  unreadableNumbers,
  withNumberFields
} from '../lib/numbers.js';
import { clearLabel, formUiSchema, toolsFolders } from '../lib/present.js';

test('text on the way to a number is kept and named, not dropped', () => {
  assert.match(readNumber('-', 'number').error, /"-" is not a number yet: finish typing it/);
  assert.match(readNumber('1e', 'number').error, /"1e" is not a number yet/);
  assert.match(readNumber('2*3', 'integer').error, /not an integer \(the form does not work out expressions/);
  assert.match(readNumber('abc', 'number').error, /^"abc" is not a number\.$/);
  assert.match(readNumber('1.5', 'integer').error, /not an integer \(no decimals\)/);
  for (const text of ['-', '1e', '2*3', 'abc']) {
    assert.equal(numberValue(text, 'number'), text); // the form keeps what was typed
  }
});

test('numbers read as numbers; an empty box means not given', () => {
  assert.deepEqual(readNumber(' -1.5e3 ', 'number'), { value: -1500 });
  assert.deepEqual(readNumber('2.', 'number'), { value: 2 });
  assert.deepEqual(readNumber('.5', 'number'), { value: 0.5 });
  assert.deepEqual(readNumber('1e3', 'integer'), { value: 1000 });
  assert.deepEqual(readNumber('', 'integer'), { value: undefined });
  assert.equal(numberValue('42', 'integer'), 42);
  assert.equal(numberValue('  ', 'integer'), undefined);
});

test('Run names each number field that holds text', () => {
  const schema = {
    properties: { x: { type: 'number' }, n: { type: ['integer', 'null'] }, s: { type: 'string' } }
  };
  assert.deepEqual(unreadableNumbers(schema, { x: 2, n: 3, s: 'text' }), []);
  assert.deepEqual(unreadableNumbers(schema, { x: '5', s: 'abc' }), []); // "5" is a number
  const [error] = unreadableNumbers(schema, { x: 'abc', n: 4 });
  assert.deepEqual(error.loc, ['x']);
  assert.equal(error.path, '$.x');
  assert.match(error.message, /"abc" is not a number/);
  assert.equal(numberKind({ type: 'string' }), null);
});

test("Run's summary says what the fields say: decimals in an integer are not 'not a number'", () => {
  const schema = { properties: { a: { type: 'integer' }, b: { type: 'integer' }, x: { type: 'number' } } };
  const decimal = unreadableNumbers(schema, { b: '1.5' });
  assert.match(decimal[0].message, /not an integer \(no decimals\)/);
  assert.equal(notRunBecause(decimal, 0), 'Not run: one value is not an integer (it has decimals); see the field above.');
  assert.equal(
    notRunBecause(unreadableNumbers(schema, { a: '2.5', b: '1.5' }), 1),
    'Not run: 2 values are not integers (they have decimals) and one required field is empty; see the fields above.'
  );
  assert.equal(
    notRunBecause(unreadableNumbers(schema, { x: 'abc' }), 0),
    'Not run: one value is not a number; see the field above.'
  );
  assert.equal(
    notRunBecause(unreadableNumbers(schema, { x: 'abc', b: '1.5' }), 0),
    'Not run: 2 values cannot be sent as numbers; see the fields above.'
  );
});

test('number fields get the text box; enums of numbers keep their choices', () => {
  const schema = {
    properties: { x: { type: 'integer' }, level: { type: 'integer', enum: [1, 2] } },
    required: ['x']
  };
  const ui = withNumberFields(formUiSchema(schema), schema);
  assert.equal(ui.x['ui:field'], 'nexusNumber');
  assert.equal(ui.x['ui:title'], 'x *');
  assert.equal(ui.level, undefined);
});

test('the empty catalog names the tools folders and what clears a filter', () => {
  assert.deepEqual(
    toolsFolders([{ name: 'builtin', kind: 'builtin' }, { name: 'directory:tools/dynamic', kind: 'directory' }]),
    ['tools/dynamic']
  );
  assert.equal(clearLabel('weather', ''), 'Clear the search');
  assert.equal(clearLabel('', 'files'), 'Show every toolset');
  assert.equal(clearLabel('x', 'files'), 'Clear the search and show every toolset');
});
