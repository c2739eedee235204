/**
 * How the catalog groups its rows by toolset (pure, so node can test it). Grouping by source
 * lives in catalog.tsx, beside the notebook-first rule it shares.
 */
import type { IToolEntry } from './api';

/** The group of the tools that belong to no toolset. */
export const NO_TOOLSET = '';

/**
 * The tools grouped by toolset. Browsing: toolsets by name, the tools in none last. Search
 * results (`ranked`): the group with the best hit first, in the order the server ranked them.
 */
export function groupByToolset(tools: IToolEntry[], ranked: boolean): [string, IToolEntry[]][] {
  const groups = new Map<string, IToolEntry[]>();
  for (const tool of tools) {
    const key = tool.toolset || NO_TOOLSET;
    const list = groups.get(key) ?? [];
    list.push(tool);
    groups.set(key, list);
  }
  const entries = [...groups.entries()];
  if (ranked) {
    return entries;
  }
  return entries.sort(([a], [b]) =>
    a === b ? 0 : a === NO_TOOLSET ? 1 : b === NO_TOOLSET ? -1 : a.localeCompare(b)
  );
}

/** A toolset as a group title: `files` -> `Toolset · files`. */
export function toolsetTitle(toolset: string): string {
  return toolset === NO_TOOLSET ? 'In no toolset' : `Toolset · ${toolset}`;
}
