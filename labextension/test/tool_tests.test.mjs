// Unit tests of "Save as test" and the notebook metadata helpers (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { expectationOf, suggestedExpectation } from '../lib/expectations.js';
import { casesOf, withCases } from '../lib/notebook_cases.js';

const result = (extra) => ({ tool: 't', is_error: false, duration: 0, ...extra });

test('a result suggests expecting its value; text content when it has no structured value', () => {
  assert.deepEqual(suggestedExpectation({ kind: 'result', result: result({ structured: { a: [1, 2] } }) }), [
    'expect',
    '{"a":[1,2]}'
  ]);
  assert.deepEqual(
    suggestedExpectation({ kind: 'result', result: result({ content: [{ type: 'text', text: 'hi' }] }) }),
    ['expect', '"hi"']
  );
  assert.deepEqual(suggestedExpectation(null), ['succeeds', '']);
});

test('a failure suggests expecting its error, cut to one line of 80 characters', () => {
  const failed = result({ is_error: true, error: 'Boom:\n  ' + 'x'.repeat(100) });
  const [kind, text] = suggestedExpectation({ kind: 'result', result: failed });
  assert.equal(kind, 'expect_error');
  assert.equal(text.length, 80);
  assert.ok(text.startsWith('Boom: xxx'));
  // a refusal: the first field's own message and path, which the refusal's message contains
  // (the header, "Invalid arguments for tool ...", would match any refusal)
  const message = "Invalid arguments for tool 'divide' (2 errors): $.a: expected a number (got \"x\"); $.b: required argument is missing";
  const invalid = {
    kind: 'validation',
    message,
    errors: [
      { path: '$.a', message: 'expected a number' },
      { path: '$.b', message: 'required argument is missing' }
    ]
  };
  assert.deepEqual(suggestedExpectation(invalid), ['expect_error', '$.a: expected a number']);
  assert.ok(message.includes(suggestedExpectation(invalid)[1]));
  assert.deepEqual(suggestedExpectation({ kind: 'validation', message: 'bad', errors: [] }), ['expect_error', 'bad']);
});

test('the typed value becomes the request body: JSON where it parses', () => {
  assert.deepEqual(expectationOf('expect', '3'), { expect: 3 });
  assert.deepEqual(expectationOf('expect', 'plain text'), { expect: 'plain text' });
  assert.deepEqual(expectationOf('expect_subset', '{"units": "C"}'), { expect_subset: { units: 'C' } });
  assert.throws(() => expectationOf('expect_subset', 'units'), /not JSON/);
  assert.deepEqual(expectationOf('check', " result['x'] > 0 "), { check: "result['x'] > 0" });
  assert.deepEqual(expectationOf('succeeds', 'ignored'), {});
});

test('cases go into the notebook metadata beside what else is under our key', () => {
  const store = new Map([['nexus_jupyter', { other: 1 }]]);
  const model = { getMetadata: k => store.get(k), setMetadata: (k, v) => store.set(k, v) };
  assert.deepEqual(casesOf(model), []);
  withCases(model, [{ tool: 'add', arguments: { a: 1 }, expect: 1 }]);
  assert.deepEqual(store.get('nexus_jupyter'), { other: 1, tests: [{ tool: 'add', arguments: { a: 1 }, expect: 1 }] });
  assert.equal(casesOf(model).length, 1);
  assert.deepEqual(casesOf(null), []);
});

test("a kernel's tool has a second calls line: its notebook's calls, never mixed with the server's", async () => {
  const { callsLines } = await import('../lib/calls.js');
  const stats = (calls, extra) => ({
    tool: 'multiply', calls, errors: 0, refused: 0, error_rate: 0, p50_ms: 0.2, p95_ms: 1.5,
    max_ms: 2, last_call: null, ...extra
  });
  // a tool of the server's own: one line, as before
  assert.deepEqual(callsLines(null).map(l => l.text), ['No calls on this server yet.']);
  assert.deepEqual(callsLines(stats(2)).map(l => l.text), [
    'Calls on this server: 2, 0 failed (0%), p50 0.2 ms, p95 1.5 ms'
  ]);
  // a kernel's tool: the notebook's own calls on a line of their own, named after it
  const lines = callsLines(null, { name: 'work/demo.ipynb', stats: stats(3, { errors: 1, error_rate: 1 / 3 }) });
  assert.deepEqual(lines.map(l => l.text), [
    'No calls on this server yet.',
    'Calls from demo.ipynb: 3, 1 failed (33%), p50 0.2 ms, p95 1.5 ms'
  ]);
  assert.match(lines[1].title, /made in its own kernel/);
  assert.match(lines[1].title, /calls from this panel count on the server line/);
  assert.deepEqual(callsLines(stats(1), { name: 'demo.ipynb', stats: null }).map(l => [l.text, l.empty]), [
    ['Calls on this server: 1, 0 failed (0%), p50 0.2 ms, p95 1.5 ms', false],
    ['No calls from demo.ipynb yet.', true]
  ]);
  // a cancel is no failure: it counts among the calls, on its own
  const cancelled = callsLines(null, { name: 'demo.ipynb', stats: stats(2, { cancelled: 1 }) });
  assert.equal(cancelled[1].text, 'Calls from demo.ipynb: 2, 0 failed (0%), 1 cancelled, p50 0.2 ms, p95 1.5 ms');
});
