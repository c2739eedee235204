// Unit tests of how the Try form reads unions (run: npm test, after a build).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { unreadableNumbers, withNumberFields } from '../lib/numbers.js';
import { formUiSchema } from '../lib/present.js';
import { formSchema, missingRequired, splitNull, typeLabel, withNulls } from '../lib/unions.js';

const NULL = { type: 'null' };

// The input schema pydantic writes for
//   def describe(label: str | None, count: int | None = None, tags: list[str] | None = None,
//                key: int | str = 0, spot: Spot | None = None, sizes: list[int | None] | None = None)
const DESCRIBE = {
  type: 'object',
  properties: {
    label: { anyOf: [{ type: 'string' }, NULL], description: 'A name, or none.' },
    count: { anyOf: [{ type: 'integer' }, NULL], default: null, title: 'How many' },
    tags: { anyOf: [{ type: 'array', items: { type: 'string' } }, NULL], default: null },
    key: { anyOf: [{ type: 'integer' }, { type: 'string' }], default: 0 },
    spot: {
      anyOf: [
        {
          type: 'object',
          properties: {
            room: { anyOf: [{ type: 'string' }, NULL], default: null },
            floor: { anyOf: [{ type: 'integer' }, NULL] }
          },
          required: ['floor']
        },
        NULL
      ],
      default: null
    },
    sizes: {
      anyOf: [{ type: 'array', items: { anyOf: [{ type: 'integer' }, NULL] } }, NULL],
      default: null
    }
  },
  required: ['label']
};

test('a nullable single-type union is drawn as its type, title, description and default kept', () => {
  const shown = formSchema(DESCRIBE);
  assert.deepEqual(shown.properties.label, { type: 'string', description: 'A name, or none.' });
  // a null default is dropped: an empty box means "not given"
  assert.deepEqual(shown.properties.count, { type: 'integer', title: 'How many' });
  assert.deepEqual(shown.properties.tags, { type: 'array', items: { type: 'string' } });
  assert.deepEqual(formSchema({ type: ['string', 'null'], default: 'x' }), {
    type: 'string',
    default: 'x'
  });
  assert.deepEqual(formSchema({ oneOf: [{ type: 'boolean' }, NULL], default: true }), {
    type: 'boolean',
    default: true
  });
  assert.deepEqual(formSchema({ anyOf: [{ enum: ['a', 'b'], type: 'string' }, NULL] }), {
    enum: ['a', 'b'],
    type: 'string'
  });
  assert.deepEqual(shown.required, ['label']);
});

test('nested nullable unions are drawn as their types too', () => {
  const shown = formSchema(DESCRIBE);
  assert.equal(shown.properties.spot.type, 'object');
  assert.deepEqual(shown.properties.spot.properties, {
    room: { type: 'string' },
    floor: { type: 'integer' }
  });
  assert.deepEqual(shown.properties.sizes, { type: 'array', items: { type: 'integer' } });
  const viaRef = formSchema({
    type: 'object',
    properties: { p: { anyOf: [{ $ref: '#/$defs/P' }, NULL], default: null } },
    $defs: { P: { type: 'object', properties: { q: { type: ['number', 'null'] } } } }
  });
  assert.deepEqual(viaRef.properties.p, { $ref: '#/$defs/P' });
  assert.deepEqual(viaRef.$defs.P.properties.q, { type: 'number' });
});

test('a real union keeps its chooser, each choice named by its type', () => {
  const shown = formSchema(DESCRIBE);
  assert.deepEqual(shown.properties.key, {
    anyOf: [
      { type: 'integer', title: 'integer' },
      { type: 'string', title: 'string' }
    ],
    default: 0
  });
  // int | str | None: the null goes, the chooser stays
  const three = formSchema({ anyOf: [{ type: 'integer' }, { type: 'string' }, NULL] });
  assert.deepEqual(three.anyOf.map(b => b.title), ['integer', 'string']);
  // a branch's own title wins; arrays and models read as their types
  const named = formSchema({
    oneOf: [{ type: 'array', items: { type: 'integer' } }, { title: 'Point', type: 'object' }]
  });
  assert.deepEqual(named.oneOf.map(b => b.title), ['array of integer', 'Point']);
  // type: [a, b] becomes a chooser with each type's own keywords
  const listed = formSchema({ type: ['integer', 'array', 'null'], items: { type: 'string' } });
  assert.deepEqual(listed.anyOf, [
    { type: 'integer', title: 'integer' },
    { type: 'array', items: { type: 'string' }, title: 'array of string' }
  ]);
});

test('the parameters table reads unions the same way', () => {
  assert.equal(typeLabel(DESCRIBE.properties.label), 'string | null');
  assert.equal(typeLabel(DESCRIBE.properties.key), 'integer | string');
  assert.equal(typeLabel(DESCRIBE.properties.tags), 'array of string | null');
  assert.equal(typeLabel(DESCRIBE.properties.sizes), 'array of (integer | null) | null');
  assert.equal(typeLabel({ $ref: '#/$defs/Point' }), 'Point');
  assert.equal(typeLabel(DESCRIBE.properties.spot), 'object {room, floor} | null');
  assert.deepEqual(splitNull({ type: 'string' }), [false, { type: 'string' }]);
});

test('empty fields are not sent; a required nullable one is sent as null, at every depth', () => {
  assert.deepEqual(withNulls(DESCRIBE, {}), { label: null });
  assert.deepEqual(withNulls(DESCRIBE, { label: 'x', count: 3 }), { label: 'x', count: 3 });
  assert.deepEqual(withNulls(DESCRIBE, { label: 'x', spot: { room: 'a' } }), {
    label: 'x',
    spot: { room: 'a', floor: null }
  });
  const viaRef = {
    type: 'object',
    properties: { p: { $ref: '#/$defs/P' } },
    $defs: { P: { type: 'object', properties: { q: { type: ['number', 'null'] } }, required: ['q'] } }
  };
  assert.deepEqual(withNulls(viaRef, { p: {} }), { p: { q: null } });
  // a required parameter that may not be null stays missing: the server names it
  assert.deepEqual(withNulls({ properties: { a: { type: 'string' } }, required: ['a'] }, {}), {});
});

test('number boxes reach nested fields and the number choice of a union', () => {
  const shown = formSchema(DESCRIBE);
  const ui = withNumberFields(formUiSchema(shown), shown);
  assert.equal(ui.count['ui:field'], 'nexusNumber');
  assert.equal(ui.label['ui:title'], 'label *');
  assert.equal(ui.spot.floor['ui:field'], 'nexusNumber');
  assert.equal(ui.sizes.items['ui:field'], 'nexusNumber');
  assert.deepEqual(ui.key.anyOf, [{ 'ui:field': 'nexusNumber' }, {}]);
  assert.equal(ui.tags, undefined);
  const errors = unreadableNumbers(shown, { count: 'x', spot: { floor: '2*3' }, sizes: [1, 'y'] });
  assert.deepEqual(
    errors.map(e => e.path),
    ['$.count', '$.spot.floor', '$.sizes[1]']
  );
  assert.deepEqual(errors[1].loc, ['spot', 'floor']);
});

test('Run names every required field left empty, at every depth', () => {
  const schema = {
    type: 'object',
    properties: {
      a: { type: 'number' },
      b: { type: 'number' },
      note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      where: { $ref: '#/$defs/Place' },
      items: { type: 'array', items: { $ref: '#/$defs/Place' } }
    },
    required: ['a', 'b', 'where'],
    $defs: { Place: { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] } }
  };
  const missing = missingRequired(schema, { a: 'abc', where: {}, items: [{ room: 'x' }, {}] });
  assert.deepEqual(
    missing.map(m => [m.path, m.message]),
    [
      ['$.b', 'required argument is missing'],
      ['$.where.room', 'required field is missing'],
      ['$.items[1].room', 'required field is missing']
    ]
  );
  assert.deepEqual(missing[0].loc, ['b']);
  assert.deepEqual(missingRequired(schema, { a: 1, b: 2, where: { room: 'r' } }), []);
});
