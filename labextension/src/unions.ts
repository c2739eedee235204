/**
 * Unions in a tool's schema as the Try form and the parameters table show them. pydantic
 * writes an optional parameter (`str | None`) as `anyOf: [{type: string}, {type: null}]`,
 * other servers as `type: ["string", "null"]`; the form component would draw either as a
 * chooser "Option 1 / Option 2". Here such a union becomes the field of its one type: an
 * empty field is not sent, or sent as null when the parameter is required. A real union
 * (`int | str`) keeps its chooser, each choice named by its type. The notebook's form reads
 * schemas the same way (`split_null` in nexus_jupyter/notebook/widgets/form_fields.py).
 * Pure, so node can test it.
 */
import type { IFieldError } from './api';

type Schema = Record<string, any>;

function isSchema(value: unknown): value is Schema {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function isNull(branch: unknown): boolean {
  return isSchema(branch) && branch.type === 'null';
}

/**
 * How a schema reads in one line: `string`, `array of integer`, `integer | string`,
 * `object {room, floor}` (as the notebook's form names a union's choices).
 */
export function typeLabel(schema: unknown): string {
  if (!isSchema(schema)) {
    return 'any';
  }
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  }
  if ('const' in schema) {
    return JSON.stringify(schema.const);
  }
  if (Array.isArray(schema.type)) {
    return schema.type.join(' | ');
  }
  if (schema.type === 'array') {
    const items = typeLabel(schema.items);
    return `array of ${items.includes(' | ') ? `(${items})` : items}`;
  }
  if (schema.type === 'object' && isSchema(schema.properties)) {
    const names = Object.keys(schema.properties);
    if (names.length) {
      return `object {${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}}`;
    }
  }
  if (schema.type) {
    return String(schema.type);
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) {
    return union.map(typeLabel).join(' | ');
  }
  if (schema.$ref) {
    return String(schema.$ref).split('/').pop() || 'object';
  }
  return 'any';
}

/**
 * `[nullable, the schema without its null]` for `anyOf`/`oneOf` with a `{type: "null"}`
 * branch and for `type: [..., "null"]`; one branch left is merged with the outer keys
 * (title, description, default win), several stay a union.
 */
export function splitNull(schema: Schema): [boolean, Schema] {
  for (const key of ['anyOf', 'oneOf']) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.some(isNull)) {
      const rest = branches.filter(b => !isNull(b));
      const base = { ...schema };
      delete base[key];
      if (rest.length === 1 && isSchema(rest[0])) {
        return [true, { ...rest[0], ...base }];
      }
      return [true, rest.length ? { ...base, [key]: rest } : schema];
    }
  }
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const kinds = schema.type.filter((k: unknown) => k !== 'null');
    if (kinds.length) {
      return [true, { ...schema, type: kinds.length === 1 ? kinds[0] : kinds }];
    }
  }
  return [false, schema];
}

// The keywords of a `type: [a, b]` schema that belong to one of its types.
const TYPE_KEYWORDS: Record<string, string[]> = {
  array: ['items', 'minItems', 'maxItems', 'uniqueItems'],
  object: ['properties', 'required', 'additionalProperties'],
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']
};

/** `type: [a, b]` as `anyOf: [{type: a}, {type: b}]`, each with its own keywords. */
function typesAsUnion(schema: Schema): Schema {
  const out: Schema = {};
  const owned = new Set(Object.values(TYPE_KEYWORDS).flat());
  for (const [key, value] of Object.entries(schema)) {
    if (key !== 'type' && !owned.has(key)) {
      out[key] = value;
    }
  }
  out.anyOf = schema.type.map((kind: string) => {
    const branch: Schema = { type: kind };
    for (const key of TYPE_KEYWORDS[kind] ?? []) {
      if (key in schema) {
        branch[key] = schema[key];
      }
    }
    return branch;
  });
  return out;
}

function mapValues(record: unknown, fn: (value: unknown) => unknown): unknown {
  if (!isSchema(record)) {
    return record;
  }
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fn(v)]));
}

/**
 * The schema the form draws: nullable single-type unions as their type (a `null` default
 * dropped: an empty field is "not given"), real unions with each choice titled by its type,
 * at every depth (properties, items, `$defs`, union branches).
 */
export function formSchema(schema: unknown): any {
  if (!isSchema(schema)) {
    return schema;
  }
  const [nullable, plain] = splitNull(schema);
  let out: Schema = { ...plain };
  if (nullable && out.default === null) {
    delete out.default;
  }
  if (Array.isArray(out.type) && out.type.length > 1) {
    out = typesAsUnion(out);
  }
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions']) {
    if (key in out) {
      out[key] = mapValues(out[key], formSchema);
    }
  }
  if (Array.isArray(out.items)) {
    out.items = out.items.map(formSchema);
  } else if (isSchema(out.items)) {
    out.items = formSchema(out.items);
  }
  if (isSchema(out.additionalProperties)) {
    out.additionalProperties = formSchema(out.additionalProperties);
  }
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(out[key])) {
      out[key] = out[key].map((branch: unknown) => {
        const shown = formSchema(branch);
        return isSchema(shown) && !shown.title ? { ...shown, title: typeLabel(shown) } : shown;
      });
    }
  }
  if (Array.isArray(out.allOf)) {
    out.allOf = out.allOf.map(formSchema);
  }
  return out;
}

/** `schema` with a local `$ref` (`#/$defs/X`) followed in `root`. */
function resolveRef(schema: unknown, root: Schema): unknown {
  for (let depth = 0; isSchema(schema) && typeof schema.$ref === 'string' && depth < 20; depth++) {
    const { $ref, ...extra } = schema;
    let target: unknown = root;
    for (const part of $ref.startsWith('#/') ? $ref.slice(2).split('/') : []) {
      target = isSchema(target) ? target[part] : undefined;
    }
    schema = { ...(isSchema(target) ? target : {}), ...extra };
  }
  return schema;
}

/**
 * The arguments a call sends for what the form holds: a required parameter that may be
 * null and was left empty goes as null (the server would refuse it missing), at every
 * depth of the objects the form holds. Other empty fields are not sent.
 */
export function withNulls(
  schema: unknown,
  args: Record<string, unknown>
): Record<string, unknown> {
  const root = isSchema(schema) ? schema : {};
  const walk = (sub: unknown, value: unknown): unknown => {
    const resolved = resolveRef(sub, root);
    if (!isSchema(resolved)) {
      return value;
    }
    const [, plain] = splitNull(resolved);
    if (isSchema(value) && isSchema(plain.properties)) {
      const out: Record<string, unknown> = { ...value };
      const required = new Set<string>(Array.isArray(plain.required) ? plain.required : []);
      for (const [name, property] of Object.entries(plain.properties)) {
        if (out[name] !== undefined) {
          out[name] = walk(property, out[name]);
        } else if (required.has(name)) {
          const target = resolveRef(property, root);
          if (isSchema(target) && splitNull(target)[0]) {
            out[name] = null;
          }
        }
      }
      return out;
    }
    if (Array.isArray(value) && isSchema(plain.items)) {
      return value.map(item => walk(plain.items, item));
    }
    return value;
  };
  return walk(schema, args) as Record<string, unknown>;
}

/**
 * The required parameters, and required fields of the objects `args` holds, that `args`
 * (what a call would send, after `withNulls`) leaves out, worded as the server words them.
 * Run names them with the number fields that hold text (numbers.ts) when it does not call,
 * so one Run flags every field the form can tell is wrong.
 */
export function missingRequired(schema: unknown, args: Record<string, unknown>): IFieldError[] {
  const root = isSchema(schema) ? schema : {};
  const out: IFieldError[] = [];
  const walk = (sub: unknown, value: unknown, loc: (string | number)[]): void => {
    const resolved = resolveRef(sub, root);
    if (!isSchema(resolved)) {
      return;
    }
    const [, plain] = splitNull(resolved);
    if (isSchema(value) && isSchema(plain.properties)) {
      const required = new Set<string>(Array.isArray(plain.required) ? plain.required : []);
      for (const [name, property] of Object.entries(plain.properties)) {
        const place = [...loc, name];
        if (value[name] !== undefined) {
          walk(property, value[name], place);
        } else if (required.has(name)) {
          const what = place.length === 1 ? 'argument' : 'field';
          const path = '$' + place.map(p => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
          out.push({ path, loc: place, message: `required ${what} is missing` });
        }
      }
    } else if (Array.isArray(value) && isSchema(plain.items)) {
      value.forEach((item, i) => walk(plain.items, item, [...loc, i]));
    }
  };
  walk(schema, args, []);
  return out;
}
