// Unit tests of how the sidebar writes times (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { clockTime, dateTime } from '../lib/times.js';

test('times read as in the notebook: a 24-hour clock, whatever the locale', () => {
  const evening = new Date(2026, 10, 27, 22, 43, 8);
  assert.equal(clockTime(evening), '22:43:08'); // not "10:43:08 PM"
  assert.equal(dateTime(evening), '2026-11-27 22:43:08');
  assert.equal(clockTime(new Date(2026, 0, 2, 7, 5, 9)), '07:05:09');
});
