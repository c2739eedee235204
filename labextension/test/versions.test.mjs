// Unit tests of how the sidebar names a tool's version (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { currentVersionLabel } from '../lib/versions.js';

test("a tool file's version is named as %tool versions and %tool rollback name it", () => {
  const file = {
    version: '6a94bc645d37', // the tool's content hash: rollback does not know it
    versions: [
      { version: '97c1a6b626', number: 3, current: true, event: 'rollback' },
      { version: '2fb3d8e18e', number: 2, current: false, event: 'load' }
    ]
  };
  assert.equal(currentVersionLabel(file), '#3 97c1a6b626');
  // a tool without a file history (a notebook's, an MCP server's): its content hash
  assert.equal(currentVersionLabel({ version: '6a94bc645d37', versions: [] }), 'v6a94bc645d37');
  assert.equal(
    currentVersionLabel({ version: '6a94bc645d37', versions: [{ version: '6a94bc645d37', current: true }] }),
    'v6a94bc645d37'
  );
});
