/**
 * The catalog's view bar: group the rows by source or by toolset, and show one toolset only.
 * The toolsets come from `GET status` (every toolset, with its tools and whether it is on).
 */
import React from 'react';

import { IToolsetRow } from './api';

/** What the catalog's groups are made of. */
export type GroupBy = 'source' | 'toolset';

export function ViewBar(props: {
  groupBy: GroupBy;
  onGroupBy: (groupBy: GroupBy) => void;
  toolset: string;
  onToolset: (toolset: string) => void;
  toolsets: IToolsetRow[];
}): JSX.Element {
  const offered = props.toolsets.filter(t => t.enabled && t.tools.length > 0);
  const chosen = props.toolset;
  return (
    <div className="jp-NexusTools-viewBar">
      <label className="jp-NexusTools-viewLabel">
        Group by
        <select
          className="jp-NexusTools-groupBy"
          aria-label="Group the tools by"
          value={props.groupBy}
          onChange={event => props.onGroupBy(event.target.value as GroupBy)}
        >
          <option value="source">source</option>
          <option value="toolset">toolset</option>
        </select>
      </label>
      <label className="jp-NexusTools-viewLabel">
        Toolset
        <select
          className="jp-NexusTools-toolsetFilter"
          aria-label="Show the tools of one toolset"
          value={chosen}
          onChange={event => props.onToolset(event.target.value)}
        >
          <option value="">all</option>
          {offered.map(t => (
            <option key={t.toolset} value={t.toolset} title={`from ${t.origin}`}>
              {t.toolset} ({t.tools.length})
            </option>
          ))}
          {chosen && !offered.some(t => t.toolset === chosen) && (
            // a toolset that was switched off or emptied since it was chosen stays selectable
            <option value={chosen}>{chosen} (no tools now)</option>
          )}
        </select>
      </label>
    </div>
  );
}
