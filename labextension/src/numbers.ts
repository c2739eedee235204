/**
 * Numbers typed as text in the Try form. A browser's number box drops what it cannot parse
 * ("-", "1e" on the way to "1e5") and refuses keys outright ("abc", "2*3"): the form then
 * sent nothing, or 23 for "2*3". Here the box takes any text; a number goes into the call,
 * anything else stays as typed and is named before the call (never evaluated, never
 * dropped). Pure, so node can test it.
 */
import type { IFieldError } from './api';

/** `integer`, `number`, or null for a schema that is not a plain number. */
export function numberKind(schema: Record<string, any> | undefined): 'integer' | 'number' | null {
  let kind = schema?.type;
  if (Array.isArray(kind)) {
    const rest = kind.filter((k: unknown) => k !== 'null');
    kind = rest.length === 1 ? rest[0] : null;
  }
  return kind === 'integer' || kind === 'number' ? kind : null;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** What is wrong with a number box's text: not a number at all, a number too large, or a
 * number with decimals where an integer is wanted. */
export type NumberProblem = 'text' | 'too_large' | 'decimals';

/** What `text` means for a field of `kind`: a number, nothing (empty), or why not. */
export function readNumber(
  text: string,
  kind: 'integer' | 'number'
): { value: number | undefined } | { error: string; problem: NumberProblem } {
  const trimmed = text.trim();
  if (trimmed === '') {
    return { value: undefined };
  }
  const noun = kind === 'integer' ? 'an integer' : 'a number';
  if (!NUMBER.test(trimmed)) {
    const tail = /[\d.]\s*[-+*/%()]|^[(]/.test(trimmed)
      ? ' (the form does not work out expressions: type the result)'
      : /^[+-]?\.?$|e[+-]?$/i.test(trimmed)
        ? ' yet: finish typing it'
        : '';
    return { error: `${JSON.stringify(trimmed)} is not ${noun}${tail}.`, problem: 'text' };
  }
  const value = Number(trimmed);
  if (!Number.isFinite(value)) {
    return { error: `${JSON.stringify(trimmed)} is too large for ${noun}.`, problem: 'too_large' };
  }
  if (kind === 'integer' && !Number.isInteger(value)) {
    return {
      error: `${JSON.stringify(trimmed)} is not an integer (no decimals).`,
      problem: 'decimals'
    };
  }
  return { value };
}

/** A number field whose text cannot be sent, and why. */
export type NumberError = IFieldError & { problem: NumberProblem };

const PROBLEM_WORDS: Record<NumberProblem, [string, string]> = {
  text: ['is not a number', 'are not numbers'],
  too_large: ['is too large', 'are too large'],
  decimals: ['is not an integer (it has decimals)', 'are not integers (they have decimals)']
};

/**
 * Why Run did not call, worded by what the fields actually say: `Not run: one value is not an
 * integer (it has decimals); see the field above.` (`missing`: required fields left empty).
 */
export function notRunBecause(unreadable: NumberError[], missing: number): string {
  const problems = new Set(unreadable.map(e => e.problem));
  const n = unreadable.length;
  let numbers: string;
  if (problems.size === 1) {
    const [one, many] = PROBLEM_WORDS[unreadable[0].problem];
    numbers = n === 1 ? `one value ${one}` : `${n} values ${many}`;
  } else {
    numbers = `${n} values cannot be sent as numbers`;
  }
  const empty = !missing
    ? ''
    : missing === 1
      ? ' and one required field is empty'
      : ` and ${missing} required fields are empty`;
  const fields = n + missing === 1 ? 'the field' : 'the fields';
  return `Not run: ${numbers}${empty}; see ${fields} above.`;
}

/** The form's value for `text`: the number, `undefined` when empty, else the text itself. */
export function numberValue(text: string, kind: 'integer' | 'number'): number | string | undefined {
  const read = readNumber(text, kind);
  return 'error' in read ? text : read.value;
}

/**
 * The number fields of `schema` whose value in `args` is text that is not a number, at every
 * depth of objects and arrays (a union's branch is left to the server: text there may be
 * another branch's value).
 */
export function unreadableNumbers(
  schema: Record<string, any> | undefined,
  args: Record<string, unknown>
): NumberError[] {
  const out: NumberError[] = [];
  const walk = (sub: any, value: unknown, loc: (string | number)[]): void => {
    const kind = numberKind(sub);
    const read = kind && typeof value === 'string' ? readNumber(value, kind) : null;
    if (read && 'error' in read) {
      const path = loc.map(p => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
      out.push({ path: `$${path}`, loc, message: read.error, value, problem: read.problem });
    } else if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [name, property] of Object.entries<any>(sub?.properties ?? {})) {
        const inner = (value as Record<string, unknown>)[name];
        if (inner !== undefined) {
          walk(property, inner, [...loc, name]);
        }
      }
    } else if (Array.isArray(value) && sub?.items && !Array.isArray(sub.items)) {
      value.forEach((item, i) => walk(sub.items, item, [...loc, i]));
    }
  };
  walk(schema, args, []);
  return out;
}

/**
 * `ui` (a form's uiSchema) with the number fields of `schema` typed as text: properties,
 * array items and the number choices of a union, at every depth.
 */
export function withNumberFields(
  ui: Record<string, any>,
  schema: Record<string, any> | undefined
): Record<string, any> {
  const out: Record<string, any> = { ...ui };
  if (numberKind(schema) && !schema?.enum) {
    out['ui:field'] = 'nexusNumber';
  }
  const inner = (sub: any, base: Record<string, any> | undefined) => {
    const made = withNumberFields(base ?? {}, sub);
    return Object.keys(made).length ? made : undefined;
  };
  for (const [name, sub] of Object.entries<any>(schema?.properties ?? {})) {
    const made = inner(sub, out[name]);
    if (made) {
      out[name] = made;
    }
  }
  if (schema?.items && !Array.isArray(schema.items)) {
    const made = inner(schema.items, out.items);
    if (made) {
      out.items = made;
    }
  }
  for (const key of ['anyOf', 'oneOf']) {
    const branches = schema?.[key];
    if (Array.isArray(branches)) {
      const made = branches.map((b: any, i: number) => withNumberFields(out[key]?.[i] ?? {}, b));
      if (made.some(m => Object.keys(m).length)) {
        out[key] = made;
      }
    }
  }
  return out;
}
