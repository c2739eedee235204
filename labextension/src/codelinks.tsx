/**
 * Where a tool's code lives, with the jump to it: "Go to cell" for a tool a notebook's
 * kernel defines, "Open file" for a tool file, and for an exported notebook tool the file
 * that owns it now.
 */
import React from 'react';

import { IToolDetails } from './api';
import { NotebookFollower } from './following';
import { cellIdOf, notebookOf } from './notebook_tools';

function fileName(path: string): string {
  return path.split('/').pop() ?? path;
}

export function CodeLinks(props: {
  tool: IToolDetails;
  follower: NotebookFollower | null;
}): JSX.Element | null {
  const { tool, follower } = props;
  const [problem, setProblem] = React.useState<string | null>(null);
  const notebook = notebookOf(tool);
  const cellId = cellIdOf(tool.origin);
  const isFile = tool.source_kind === 'directory' && !!tool.origin;
  // A notebook tool whose file version waits behind it (exported, then the cell re-run).
  const exportedFile = (tool.shadowed ?? []).find(
    (s: any) => s.source_kind === 'directory' && s.origin
  ) as { origin: string } | undefined;
  if (!follower || (!(notebook && cellId) && !isFile && !exportedFile)) {
    return null;
  }
  const openFile = (path: string) =>
    follower
      .openFile(path)
      .then(ok => setProblem(ok ? null : `${path} is outside the Jupyter server's folder.`));
  return (
    <div className="jp-NexusTools-codeLinks">
      {notebook && cellId && (
        <button
          className="jp-NexusTools-link jp-NexusTools-goToCell"
          title={`Open ${notebook} at the cell that defines ${tool.name}`}
          onClick={() =>
            follower
              .goToCell(notebook, cellId)
              .then(ok =>
                setProblem(ok ? null : `The cell that defined ${tool.name} is gone from ${notebook}.`)
              )
          }
        >
          Go to cell
        </button>
      )}
      {isFile && (
        <button
          className="jp-NexusTools-link jp-NexusTools-openFile"
          title={`Open ${tool.origin}`}
          onClick={() => openFile(tool.origin)}
        >
          Open file {fileName(tool.origin)}
        </button>
      )}
      {isFile && tool.exported_from && (
        <div className="jp-NexusTools-owner">
          Exported from {tool.exported_from}: {fileName(tool.origin)} owns this tool now.
        </div>
      )}
      {exportedFile && (
        <div className="jp-NexusTools-owner">
          Exported to{' '}
          <button className="jp-NexusTools-link" onClick={() => openFile(exportedFile.origin)}>
            {fileName(exportedFile.origin)}
          </button>
          ; the cell&apos;s version runs while it is defined here.
        </div>
      )}
      {problem && <div className="jp-NexusTools-notice jp-NexusTools-notice-error">{problem}</div>}
    </div>
  );
}
