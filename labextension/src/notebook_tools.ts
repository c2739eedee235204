/**
 * Pure helpers for tools that belong to notebooks: which notebook defines a tool, which
 * cell, which tools an exported notebook handed to files, and the panel's group order with
 * the current notebook first. No DOM, so node can test them.
 */
import type { IToolEntry } from './api';

/** The server-relative notebook path of a live kernel's tool (`kernel:<path>`), or null. */
export function notebookOf(tool: Pick<IToolEntry, 'source'> & { notebook?: string | null }): string | null {
  if (tool.notebook) {
    return tool.notebook;
  }
  if (!tool.source.startsWith('kernel:')) {
    return null;
  }
  // Two kernels of one notebook are told apart as `kernel:<path>#<kernel id>`.
  return tool.source.slice('kernel:'.length).replace(/#[0-9a-f]+$/, '');
}

/** The cell id of an origin `cell:<id>`, or null. */
export function cellIdOf(origin: string | null | undefined): string | null {
  return origin && origin.startsWith('cell:') ? origin.slice('cell:'.length) || null : null;
}

/** `path` relative to the server root `root` (both absolute), or null when outside it. */
export function serverRelativePath(path: string, root: string): string | null {
  const clean = (p: string) => p.replace(/\/+$/, '');
  const base = clean(root);
  if (!path.startsWith('/')) {
    return path; // already relative
  }
  if (!base || base === '/') {
    return path.slice(1);
  }
  if (path === base || !path.startsWith(base + '/')) {
    return null;
  }
  return path.slice(base.length + 1);
}

function baseName(path: string): string {
  return path.split('/').pop() ?? path;
}

/** Whether `tool` belongs to the notebook at `path`: defined in its kernel, or a file its
 * live kernel exported (`exported_by`: the server says so while that kernel lives; once it
 * restarted or stopped, the file is one of its folder's like any other). */
export function belongsTo(
  tool: Pick<IToolEntry, 'source'> & {
    notebook?: string | null;
    exported_from?: string | null;
    exported_by?: string | null;
  },
  path: string | null
): boolean {
  if (!path) {
    return false;
  }
  if (notebookOf(tool) === path) {
    return true;
  }
  return (
    !!tool.exported_from &&
    tool.exported_from === baseName(path) &&
    !!tool.exported_by &&
    notebookOf({ source: tool.exported_by }) === path
  );
}

/** The group title of the current notebook. */
export function currentNotebookTitle(path: string): string {
  return `This notebook · ${baseName(path)}`;
}

/** Key of the current notebook's group (never a real source id). */
export const CURRENT_NOTEBOOK_GROUP = 'this-notebook';

/**
 * Groups in display order: the current notebook's tools first (its kernel's tools, then
 * the files exported from it), then every other source as `rest` orders them.
 */
export function withCurrentNotebookFirst<T extends Pick<IToolEntry, 'source'>>(
  tools: T[],
  path: string | null,
  rest: (tools: T[]) => [string, T[]][]
): [string, T[]][] {
  const mine = tools.filter(t => belongsTo(t, path));
  const others = tools.filter(t => !belongsTo(t, path));
  const groups = rest(others);
  if (mine.length === 0 || path === null) {
    return groups;
  }
  const live = mine.filter(t => notebookOf(t) !== null);
  const exported = mine.filter(t => notebookOf(t) === null);
  return [[CURRENT_NOTEBOOK_GROUP, [...live, ...exported]], ...groups];
}
