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

/** What `text` means for a field of `kind`: a number, nothing (empty), or why not. */
export function readNumber(
  text: string,
  kind: 'integer' | 'number'
): { value: number | undefined } | { error: string } {
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
    return { error: `${JSON.stringify(trimmed)} is not ${noun}${tail}.` };
  }
  const value = Number(trimmed);
  if (!Number.isFinite(value)) {
    return { error: `${JSON.stringify(trimmed)} is too large for ${noun}.` };
  }
  if (kind === 'integer' && !Number.isInteger(value)) {
    return { error: `${JSON.stringify(trimmed)} is not an integer (no decimals).` };
  }
  return { value };
}

/** The form's value for `text`: the number, `undefined` when empty, else the text itself. */
export function numberValue(text: string, kind: 'integer' | 'number'): number | string | undefined {
  const read = readNumber(text, kind);
  return 'error' in read ? text : read.value;
}

/** The number fields of `schema` whose value in `args` is text that is not a number. */
export function unreadableNumbers(
  schema: Record<string, any> | undefined,
  args: Record<string, unknown>
): IFieldError[] {
  const out: IFieldError[] = [];
  for (const [name, sub] of Object.entries<any>(schema?.properties ?? {})) {
    const kind = numberKind(sub);
    const value = args[name];
    const read = kind && typeof value === 'string' ? readNumber(value, kind) : null;
    if (read && 'error' in read) {
      out.push({ path: `$.${name}`, loc: [name], message: read.error, value });
    }
  }
  return out;
}

/** `ui` (a form's uiSchema) with the number fields of `schema` typed as text. */
export function withNumberFields(
  ui: Record<string, any>,
  schema: Record<string, any> | undefined
): Record<string, any> {
  const out: Record<string, any> = { ...ui };
  for (const [name, sub] of Object.entries<any>(schema?.properties ?? {})) {
    if (numberKind(sub) && !sub?.enum) {
      out[name] = { ...(out[name] ?? {}), 'ui:field': 'nexusNumber' };
    }
  }
  return out;
}
