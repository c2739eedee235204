// Unit tests of a call's streamed progress (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LineReader, progressFraction, progressLabel, readCallStream } from '../lib/call_stream.js';

test('lines that arrive in pieces are read whole', () => {
  const reader = new LineReader();
  assert.deepEqual(reader.push('{"progress": {"current": 1'), []);
  assert.deepEqual(reader.push(', "total": 3}}\n{"progress"'), [{ progress: { current: 1, total: 3 } }]);
  assert.deepEqual(reader.push(': {"current": 2}}\n\n{"result": {"is_error": false}}'), [
    { progress: { current: 2 } }
  ]);
  assert.deepEqual(reader.end(), [{ result: { is_error: false } }]);
});

test('a streamed answer hands over each report and gives its last line', async () => {
  const text =
    '{"progress": {"current": 4, "total": 10, "message": "6 to go"}}\n' +
    '{"progress": {"current": 5, "total": 10, "message": "5 to go"}}\n' +
    '{"result": {"structured": "done"}}\n';
  const bytes = new TextEncoder().encode(text);
  // cut in the middle of a multi-byte-free line and of a line break
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.slice(0, 30));
      controller.enqueue(bytes.slice(30, 70));
      controller.enqueue(bytes.slice(70));
      controller.close();
    }
  });
  const seen = [];
  const last = await readCallStream(new Response(body), p => seen.push(p.current));
  assert.deepEqual(seen, [4, 5]);
  assert.deepEqual(last, { result: { structured: 'done' } });
});

test('progress reads as the notebook form shows it', () => {
  assert.equal(progressLabel({ current: 4, total: 10, message: '7...' }), '4/10 7...');
  assert.equal(progressLabel({ current: 3, total: null, message: null }), '3');
  assert.equal(progressLabel({ current: 0.1 + 0.2, total: 1, message: 'a' }), '0.3/1 a');
  assert.equal(progressFraction({ current: 4, total: 10, message: null }), 0.4);
  assert.equal(progressFraction({ current: 12, total: 10, message: null }), 1);
  assert.equal(progressFraction({ current: 4, total: null, message: null }), null);
});
