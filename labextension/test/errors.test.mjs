// Unit tests of the JSONPath -> rjsf extraErrors mapping (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { clearChangedFields, parseJsonPath, toExtraErrors } from '../lib/errors.js';

test('parseJsonPath splits names, indexes and quoted keys', () => {
  assert.deepEqual(parseJsonPath('$'), []);
  assert.deepEqual(parseJsonPath('$.a'), ['a']);
  assert.deepEqual(parseJsonPath('$.a.b[0]'), ['a', 'b', 0]);
  assert.deepEqual(parseJsonPath('$.items[1].qty'), ['items', 1, 'qty']);
  assert.deepEqual(parseJsonPath("$['odd key'][2]"), ['odd key', 2]);
  assert.deepEqual(parseJsonPath('a.b'), ['a', 'b']);
});

test('toExtraErrors nests messages where rjsf shows them', () => {
  const schema = toExtraErrors([
    { path: '$.a', message: 'required argument is missing' },
    { path: '$.items[1].qty', message: 'not an integer' },
    { path: '$.items[1].qty', message: 'too small' },
    { path: '$', message: 'unexpected argument' }
  ]);
  assert.deepEqual(schema, {
    a: { __errors: ['required argument is missing'] },
    items: { 1: { qty: { __errors: ['not an integer', 'too small'] } } },
    __errors: ['unexpected argument']
  });
});

test('toExtraErrors prefers the server loc over the path', () => {
  const schema = toExtraErrors([{ path: '$.x', loc: ['a.b'], message: 'bad' }]);
  assert.deepEqual(schema, { 'a.b': { __errors: ['bad'] } });
});

test('clearChangedFields drops only the edited fields', () => {
  const extra = { a: { __errors: ['x'] }, b: { __errors: ['y'] } };
  assert.deepEqual(clearChangedFields(extra, { a: 1, b: 2 }, { a: 5, b: 2 }), {
    b: { __errors: ['y'] }
  });
  assert.equal(clearChangedFields(extra, { a: 1 }, { a: 1 }), extra);
  assert.equal(clearChangedFields({ a: { __errors: ['x'] } }, { a: 1 }, { a: 2 }), undefined);
});
