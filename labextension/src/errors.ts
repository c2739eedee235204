/**
 * Server-side validation errors -> rjsf `extraErrors`, so each message shows on its field.
 */
import type { ErrorSchema } from '@rjsf/utils';

import type { IFieldError } from './api';

/**
 * Split a JSONPath such as `$.a.b[0]` or `$['odd key'][2]` into segments.
 *
 * `$` alone is the root (the whole arguments object) and gives `[]`.
 */
export function parseJsonPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  let i = path.startsWith('$') ? 1 : 0;
  while (i < path.length) {
    const ch = path[i];
    if (ch === '.') {
      let j = i + 1;
      while (j < path.length && path[j] !== '.' && path[j] !== '[') {
        j++;
      }
      out.push(path.slice(i + 1, j));
      i = j;
    } else if (ch === '[') {
      const quote = path[i + 1];
      if (quote === "'" || quote === '"') {
        const end = path.indexOf(quote + ']', i + 2);
        const stop = end === -1 ? path.length : end;
        out.push(path.slice(i + 2, stop));
        i = stop + 2;
      } else {
        const end = path.indexOf(']', i);
        const stop = end === -1 ? path.length : end;
        const raw = path.slice(i + 1, stop);
        out.push(/^\d+$/.test(raw) ? Number(raw) : raw);
        i = stop + 1;
      }
    } else {
      // A bare name without a leading dot ("a.b"): read up to the next separator.
      let j = i;
      while (j < path.length && path[j] !== '.' && path[j] !== '[') {
        j++;
      }
      out.push(path.slice(i, j));
      i = j;
    }
  }
  return out;
}

/**
 * Build an rjsf error schema (`{a: {b: {0: {__errors: [...]}}}}`) from field errors.
 *
 * `loc` from the server wins when present; otherwise the JSONPath is parsed.
 */
export function toExtraErrors(errors: IFieldError[]): ErrorSchema {
  const root: any = {};
  for (const error of errors) {
    const segments = error.loc && error.loc.length ? error.loc : parseJsonPath(error.path);
    let node = root;
    for (const segment of segments) {
      const key = String(segment);
      node[key] = node[key] ?? {};
      node = node[key];
    }
    node.__errors = [...(node.__errors ?? []), error.message];
  }
  return root as ErrorSchema;
}

/** Drop the errors of top-level fields whose value changed, keeping the others. */
export function clearChangedFields(
  extra: ErrorSchema | undefined,
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined
): ErrorSchema | undefined {
  if (!extra) {
    return extra;
  }
  const next: any = { ...extra };
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  let changed = false;
  for (const key of keys) {
    if (JSON.stringify(before?.[key]) !== JSON.stringify(after?.[key]) && key in next) {
      delete next[key];
      changed = true;
    }
  }
  if (!changed) {
    return extra;
  }
  return Object.keys(next).length ? (next as ErrorSchema) : undefined;
}
