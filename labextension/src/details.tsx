/**
 * The details view of one tool: description, parameters, schema, versions, and the Try form.
 */
import React from 'react';

import { getTool, IToolDetails, IToolStats } from './api';
import { Badge, JsonBlock, PermissionBadge, StatusBadges, TestBadge } from './badges';
import { CodeLinks } from './codelinks';
import { NotebookFollower } from './following';
import { notebookOf } from './notebook_tools';
import { dateTime } from './times';
import { currentVersionLabel } from './versions';
import { CallsLine, TestsSection } from './tool_tests';
import { TryForm } from './tryform';
import { typeLabel } from './unions';

interface IParameterRow {
  name: string;
  type: string;
  required: boolean;
  description: string;
  default?: unknown;
}

function parameters(schema: Record<string, any>): IParameterRow[] {
  const props = schema?.properties ?? {};
  const required = new Set<string>(schema?.required ?? []);
  return Object.entries(props).map(([name, sub]: [string, any]) => ({
    name,
    type: typeLabel(sub),
    required: required.has(name),
    description: sub?.description ?? '',
    default: sub?.default
  }));
}

/** What Try runs when the details show one source's tool of several under one name. */
function sourceNote(tool: IToolDetails): string {
  const others = (tool.conflicts_with ?? []).join(', ');
  if (others) {
    return (
      `A call by name alone runs neither ${tool.name} until one is renamed; ` +
      `Try runs this one, of ${tool.source} (${others} has its own).`
    );
  }
  return (
    `Shadowed by the ${tool.shadowed_by} source: a call by name runs that one; ` +
    `Try runs this one, of ${tool.source}.`
  );
}

/**
 * Loads and shows one tool; reloads when `revision` changes (a live update). `source`: the
 * tool that source defines under the name (a row of a conflict, or a shadowed one), which
 * Try then calls; otherwise the name's winner.
 */
export function ToolDetails(props: {
  name: string;
  source?: string | null;
  revision: number;
  /** Bumped when the server saw calls of this tool (from anywhere): refresh the calls line. */
  callsRevision?: number;
  onBack: () => void;
  follower?: NotebookFollower | null;
}): JSX.Element {
  const { name, source, revision, callsRevision, onBack } = props;
  const [tool, setTool] = React.useState<IToolDetails | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  // the tool left (a 404): its last status is not shown beside why
  const [gone, setGone] = React.useState(false);
  const backRef = React.useRef<HTMLButtonElement>(null);
  // The calls lines: from the details, then fetched again after each call from the form
  // (and after each `calls` event, which covers the notebook's calls its kernel reported).
  const [stats, setStats] = React.useState<IToolStats | null | undefined>(undefined);
  const [notebookStats, setNotebookStats] = React.useState<IToolStats | null | undefined>(
    undefined
  );
  React.useEffect(() => {
    setStats(tool?.stats);
    setNotebookStats(tool?.notebook_stats);
  }, [tool]);
  const refreshStats = React.useCallback(() => {
    getTool(name, source).then(
      details => {
        setStats(details.stats);
        setNotebookStats(details.notebook_stats);
      },
      err => {
        if (err.status !== 404) {
          // (a tool that left: the details say why, once)
          console.warn(`nexus-jupyter: could not refresh the call counts of ${name}:`, err.message);
        }
      }
    );
  }, [name, source]);
  React.useEffect(() => {
    if (callsRevision) {
      refreshStats();
    }
  }, [callsRevision, refreshStats]);

  React.useEffect(() => {
    let cancelled = false;
    getTool(name, source).then(
      details => {
        if (!cancelled) {
          // Try calls the tool shown: one of a conflict (no call by name runs either), or
          // the shadowed one opened from its own row
          const conflict = (details.conflicts_with ?? []).length > 0;
          details.call_source = source ?? (conflict ? details.source : null);
          setTool(details);
          setError(null);
          setGone(false);
        }
      },
      err => {
        if (!cancelled) {
          // the server says why it is gone (its kernel restarted) and how to bring it back
          setGone(err.status === 404);
          setError(
            err.status === 404
              ? String(err.message || `The tool ${name} is gone.`)
              : String(err.message ?? err)
          );
        }
      }
    );
    return () => {
      cancelled = true;
    };
  }, [name, source, revision]);

  React.useEffect(() => backRef.current?.focus(), [name]);

  const rows = tool ? parameters(tool.input_schema) : [];
  // Run is disabled, with the reason, when the call cannot succeed from here.
  let blocked: string | null = null;
  if (error) {
    blocked = error;
  } else if (tool && tool.status !== 'ok' && !tool.call_source) {
    blocked = `Cannot run now: ${tool.reason ?? tool.status}`;
  } else if (tool?.call_policy?.action === 'deny') {
    blocked = tool.call_policy.reason;
  }
  return (
    <div
      className="jp-NexusTools-details"
      onKeyDown={event => {
        if (event.key === 'Escape') {
          event.stopPropagation();
          onBack();
        }
      }}
    >
      <div className="jp-NexusTools-detailsHeader">
        <button
          ref={backRef}
          className="jp-NexusTools-back jp-mod-styled"
          onClick={onBack}
          title="Back to the catalog (Escape)"
          aria-label="Back to the catalog"
        >
          ←
        </button>
        <h2 className="jp-NexusTools-toolName">{name}</h2>
      </div>
      {error && (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
          {error}
        </div>
      )}
      {tool && (
        <>
          <div className="jp-NexusTools-badges">
            <PermissionBadge permission={tool.permission} />
            <StatusBadges
              status={tool.status}
              reason={tool.reason}
              shadowed={tool.shadowed} shadowedBy={tool.shadowed_by} conflictsWith={tool.conflicts_with}
              stale={tool.stale}
            />
            <TestBadge tests={tool.tests} />
            <Badge kind="info" label={tool.source} title={`Source: ${tool.source}`} />
            {tool.categories.map(c => (
              <Badge key={c} kind="info" label={c} title={`Category: ${c}`} />
            ))}
          </div>
          {tool.reason && tool.status !== 'ok' && !gone && (
            // (a tool that left says why above; its last status would contradict it)
            <div className="jp-NexusTools-notice jp-NexusTools-notice-error">{tool.reason}</div>
          )}
          {tool.call_source && (
            <div className="jp-NexusTools-notice jp-NexusTools-sourceNote" role="note">
              {sourceNote(tool)}
            </div>
          )}
          {tool.stale && (
            <div className="jp-NexusTools-notice jp-NexusTools-notice-warn" role="status">
              {tool.stale.replace(/^stale: /, '')}
            </div>
          )}
          <p className="jp-NexusTools-description">{tool.description}</p>
          <CodeLinks tool={tool} follower={props.follower ?? null} />
          {tool.requires_credentials?.length > 0 && (
            <p className="jp-NexusTools-credentials">
              Needs credentials: {tool.requires_credentials.join(', ')}
            </p>
          )}
          <h3 className="jp-NexusTools-sectionTitle">Parameters</h3>
          {rows.length === 0 ? (
            <p className="jp-NexusTools-muted">No parameters.</p>
          ) : (
            <table className="jp-NexusTools-params">
              <tbody>
                {rows.map(row => (
                  <tr key={row.name}>
                    <td>
                      <code>{row.name}</code>
                      {row.required && (
                        <span className="jp-NexusTools-required" title="required">
                          *
                        </span>
                      )}
                    </td>
                    <td className="jp-NexusTools-type">{row.type}</td>
                    <td>
                      {row.description}
                      {row.default !== undefined && (
                        <span className="jp-NexusTools-muted">
                          {' '}
                          (default {JSON.stringify(row.default)})
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <details className="jp-NexusTools-schema">
            <summary>Input schema</summary>
            <JsonBlock value={tool.input_schema} />
            {tool.output_schema && (
              <>
                <div className="jp-NexusTools-muted">Output schema</div>
                <JsonBlock value={tool.output_schema} />
              </>
            )}
          </details>
          <details className="jp-NexusTools-versions">
            <summary>
              Versions ({tool.versions.length || 1})
              {currentVersionLabel(tool) ? ` — current ${currentVersionLabel(tool)}` : ''}
            </summary>
            {tool.versions.length === 0 ? (
              <p className="jp-NexusTools-muted">No earlier versions recorded.</p>
            ) : (
              <ul>
                {tool.versions.map((v, i) => (
                  <li key={`${v.version}-${i}`} className="jp-NexusTools-version">
                    {v.number !== undefined && <span>#{v.number} </span>}
                    <code>{String(v.version).slice(0, 12)}</code>
                    {v.summary ? ` ${v.summary}` : ''}
                    {v.event ? ` (${v.event})` : ''}
                    {v.time ? ` · ${dateTime(new Date(v.time * 1000))}` : ''}
                    {v.current && <strong> · current</strong>}
                  </li>
                ))}
              </ul>
            )}
            {tool.shadowed.length > 0 && (
              <p className="jp-NexusTools-muted">
                Also defined (shadowed) by: {tool.shadowed.map(s => s.source).join(', ')}
              </p>
            )}
          </details>
          <TestsSection tool={tool} />
          <CallsLine
            stats={stats === undefined ? tool.stats : stats}
            notebook={
              tool.source_kind === 'kernel'
                ? {
                    name: notebookOf(tool) ?? tool.source,
                    stats: notebookStats === undefined ? tool.notebook_stats : notebookStats
                  }
                : null
            }
          />
          <TryForm
            key={`${tool.name} ${tool.call_source ?? ''}`}
            tool={tool}
            blocked={blocked}
            onCalled={refreshStats}
          />
        </>
      )}
    </div>
  );
}
