// Unit tests of the helpers that let the panel follow the notebook (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  belongsTo,
  cellIdOf,
  CURRENT_NOTEBOOK_GROUP,
  notebookOf,
  serverRelativePath,
  withCurrentNotebookFirst
} from '../lib/notebook_tools.js';

test('notebookOf reads the notebook of a live kernel tool', () => {
  assert.equal(notebookOf({ source: 'kernel:work/demo.ipynb' }), 'work/demo.ipynb');
  assert.equal(notebookOf({ source: 'kernel:demo.ipynb#0a1b2c3d' }), 'demo.ipynb');
  assert.equal(notebookOf({ source: 'x', notebook: 'n.ipynb' }), 'n.ipynb');
  assert.equal(notebookOf({ source: 'directory:tools' }), null);
});

test('cellIdOf reads cell origins only', () => {
  assert.equal(cellIdOf('cell:abc-1'), 'abc-1');
  assert.equal(cellIdOf('/srv/tools/add.py'), null);
  assert.equal(cellIdOf(null), null);
});

test('serverRelativePath keeps paths inside the root only', () => {
  assert.equal(serverRelativePath('/srv/work/tools/add.py', '/srv/work'), 'tools/add.py');
  assert.equal(serverRelativePath('/srv/work/tools/add.py', '/srv/work/'), 'tools/add.py');
  assert.equal(serverRelativePath('/etc/passwd', '/srv/work'), null);
  assert.equal(serverRelativePath('/srv/workshop/x.py', '/srv/work'), null);
  assert.equal(serverRelativePath('/a/b.py', '/'), 'a/b.py');
});

test('the current notebook group comes first: kernel tools, then files exported from it', () => {
  const tools = [
    { name: 'read', source: 'builtin' },
    {
      name: 'add',
      source: 'directory:tools',
      exported_from: 'demo.ipynb',
      exported_by: 'kernel:nb/demo.ipynb'
    },
    { name: 'other', source: 'kernel:other.ipynb' },
    { name: 'area', source: 'kernel:nb/demo.ipynb' }
  ];
  const rest = ts => [['rest', ts]];
  const groups = withCurrentNotebookFirst(tools, 'nb/demo.ipynb', rest);
  assert.equal(groups[0][0], CURRENT_NOTEBOOK_GROUP);
  assert.deepEqual(groups[0][1].map(t => t.name), ['area', 'add']);
  assert.deepEqual(groups[1][1].map(t => t.name), ['read', 'other']);
  assert.deepEqual(withCurrentNotebookFirst(tools, null, rest), [['rest', tools]]);
  assert.equal(belongsTo(tools[2], 'nb/demo.ipynb'), false);
});

test("an exported file is the notebook's only while the kernel that exported it lives", () => {
  const file = { name: 'hello', source: 'directory:tools', exported_from: 'demo.ipynb' };
  // its kernel restarted (or this server never saw the export): a file of its folder
  assert.equal(belongsTo({ ...file, exported_by: null }, 'nb/demo.ipynb'), false);
  assert.equal(belongsTo({ ...file, exported_by: 'kernel:nb/demo.ipynb' }, 'nb/demo.ipynb'), true);
  // a notebook of the same name in another folder did not export it
  assert.equal(belongsTo({ ...file, exported_by: 'kernel:nb/demo.ipynb' }, 'x/demo.ipynb'), false);
});
