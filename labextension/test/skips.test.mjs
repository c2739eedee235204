// Unit tests of what the sidebar says about a skipped case (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { approvalAdvice } from '../lib/skips.js';

const skipped = (extra = {}) => ({
  case: { tool: 'purge_cache', arguments: {} },
  where: 'w',
  label: 'l',
  state: 'skipped',
  message: 'needs approval (danger_full_access), which a test run does not give',
  duration: 0,
  version: 'v',
  needs_approval: true,
  ...extra
});
const text = parts => parts.map(p => ('code' in p ? `[${p.code}]` : p.text)).join('');

test('a case that needs approval says how to approve it, with the real tool name', () => {
  assert.equal(
    text(approvalAdvice(skipped(), null)),
    'The sidebar cannot approve a test call. Run [%tool test purge_cache --yes] in a notebook, ' +
      'or [nexus-tools test purge_cache --yes] in a terminal, to approve it.'
  );
  // a live kernel's tool is tested in its kernel: its own notebook is the place
  assert.equal(
    text(approvalAdvice(skipped(), 'notebooks/01-quickstart.ipynb')),
    'The sidebar cannot approve a test call. Run [%tool test purge_cache --yes] in notebooks/01-quickstart.ipynb to approve it.'
  );
  for (const part of approvalAdvice(skipped(), null)) {
    assert.ok(!JSON.stringify(part).includes('`') && !JSON.stringify(part).includes('NAME'));
  }
  assert.deepEqual(approvalAdvice(skipped({ needs_approval: false }), null), []);
});
