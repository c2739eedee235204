/**
 * The "Tools" sidebar: search box, results grouped by source or by toolset (one toolset can
 * be picked), source problems, and the details view of the selected tool. Follows the server's change stream, so it never
 * needs a refresh.
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import React from 'react';

import {
  followChanges,
  getStatus,
  IChangedEvent,
  IStatus,
  IToolEntry,
  IToolList,
  listTools
} from './api';
import { PermissionBadge, StatusBadges, TestBadge } from './badges';
import { ToolDetails } from './details';
import { NotebookFollower } from './following';
import { Offers } from './offers';
import {
  CURRENT_NOTEBOOK_GROUP,
  currentNotebookTitle,
  notebookOf,
  withCurrentNotebookFirst
} from './notebook_tools';
import { groupByToolset, toolsetTitle } from './grouping';
import { clearLabel, sourceTitle, toolsFolders } from './present';
import { GroupBy, ViewBar } from './toolsets';

const SEARCH_DEBOUNCE_MS = 150;

// Precedence on a name clash, strongest first: groups are shown in this order.
const KIND_ORDER = ['notebook', 'kernel', 'directory', 'mcp', 'config', 'builtin'];

function groupBySource(tools: IToolEntry[], ranked: boolean): [string, IToolEntry[]][] {
  const groups = new Map<string, IToolEntry[]>();
  const kinds = new Map<string, number>();
  for (const tool of tools) {
    const list = groups.get(tool.source) ?? [];
    list.push(tool);
    groups.set(tool.source, list);
    const rank = KIND_ORDER.indexOf(tool.source_kind);
    kinds.set(tool.source, rank === -1 ? KIND_ORDER.length : rank);
  }
  const entries = [...groups.entries()];
  // Search results: the group with the best hit comes first. Browsing: by precedence.
  return ranked ? entries : entries.sort(([a], [b]) => kinds.get(a)! - kinds.get(b)!);
}

function firstLine(text: string): string {
  return (text ?? '').split('\n')[0];
}

/** Which tool the details show: a name, and the source of one of several under it. */
interface ISelected {
  name: string;
  source: string | null;
}

/** What a row opens: its own tool; by its source when the name is not simply its own. */
function selectionOf(tool: IToolEntry): ISelected {
  const several = !!tool.shadowed_by || (tool.conflicts_with ?? []).length > 0;
  return { name: tool.name, source: several ? tool.source : null };
}

function ToolRow(props: { tool: IToolEntry; onOpen: (selected: ISelected) => void }): JSX.Element {
  const { tool, onOpen } = props;
  return (
    <li
      className={
        'jp-NexusTools-item' +
        (tool.status !== 'ok' ? ' jp-NexusTools-item-problem' : '') +
        (tool.shadowed_by ? ' jp-NexusTools-item-shadowed' : '')
      }
      data-tool={tool.name}
      tabIndex={0}
      role="button"
      aria-label={`Open tool ${tool.name}`}
      onClick={() => onOpen(selectionOf(tool))}
      onKeyDown={event => {
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          onOpen(selectionOf(tool));
        }
      }}
    >
      <div className="jp-NexusTools-itemHeader">
        <span className="jp-NexusTools-itemName">{tool.name}</span>
        <PermissionBadge permission={tool.permission} />
        <StatusBadges
          status={tool.status}
          reason={tool.reason}
          shadowed={tool.shadowed}
          shadowedBy={tool.shadowed_by}
          conflictsWith={tool.conflicts_with}
          stale={tool.stale}
        />
        <TestBadge tests={tool.tests} />
      </div>
      <div className="jp-NexusTools-itemDescription">{firstLine(tool.description)}</div>
      {tool.exported_from && notebookOf(tool) === null && (
        <div className="jp-NexusTools-itemOwner" title={tool.origin ?? ''}>
          exported → {tool.origin?.split('/').pop()}
        </div>
      )}
    </li>
  );
}

/** An empty registry: the ways to add a tool. */
function AddToolsHint(props: { folders: string[] }): JSX.Element {
  const folders = props.folders.length ? props.folders : ['tools/dynamic'];
  return (
    <div className="jp-NexusTools-empty jp-NexusTools-addHint">
      <p>
        <b>No tools yet.</b> Add one:
      </p>
      <ul>
        <li>
          in a notebook, run <code>%load_ext nexus_jupyter</code>, then put <code>@tool</code>{' '}
          (from <code>nexus_jupyter</code>) on a function and run its cell, or run a cell of
          functions under <code>%%tool</code>;
        </li>
        <li>
          or save a tool file in{' '}
          {folders.map((f, i) => (
            <React.Fragment key={f}>
              {i > 0 && ' or '}
              <code>{f.replace(/\/+$/, '')}/</code>
            </React.Fragment>
          ))}
          : it shows up here as soon as it is saved.
        </li>
      </ul>
    </div>
  );
}

function Problems(props: { status: IStatus | null }): JSX.Element | null {
  const broken = (props.status?.sources ?? []).filter(s => s.error);
  if (broken.length === 0) {
    return null;
  }
  return (
    <div className="jp-NexusTools-problems" role="alert">
      {broken.map(source => (
        <div key={source.name} className="jp-NexusTools-problem">
          <span className="jp-NexusTools-problemSource" title={`Source: ${source.name}`}>
            {sourceTitle(source.name)}
          </span>
          <pre className="jp-NexusTools-problemText">{source.error}</pre>
        </div>
      ))}
    </div>
  );
}

/** The whole panel as a React component; `searchRef` lets commands focus the box. */
export function Catalog(props: {
  searchRef: React.RefObject<HTMLInputElement>;
  follower?: NotebookFollower | null;
}): JSX.Element {
  const follower = props.follower ?? null;
  const [notebook, setNotebook] = React.useState<string | null>(follower?.path ?? null);
  React.useEffect(() => {
    if (!follower) {
      return;
    }
    const onChange = (_: NotebookFollower, path: string | null) => setNotebook(path);
    follower.changed.connect(onChange);
    return () => {
      follower.changed.disconnect(onChange);
    };
  }, [follower]);
  const [query, setQuery] = React.useState('');
  const [list, setList] = React.useState<IToolList | null>(null);
  // The query `list` answers (the search box may already hold a newer one).
  const [listedFor, setListedFor] = React.useState('');
  const [error, setError] = React.useState<string | null>(null);
  const [status, setStatus] = React.useState<IStatus | null>(null);
  const [selected, setSelected] = React.useState<ISelected | null>(null);
  const [revision, setRevision] = React.useState(0);
  const [detailsRevision, setDetailsRevision] = React.useState(0);
  const [callsRevision, setCallsRevision] = React.useState(0);
  const [connected, setConnected] = React.useState(false);
  const [groupBy, setGroupBy] = React.useState<GroupBy>('source');
  const [toolset, setToolset] = React.useState('');
  const selectedRef = React.useRef<string | null>(null);
  selectedRef.current = selected?.name ?? null;

  // Server-side search, debounced as the user types, and re-run on every registry change.
  React.useEffect(() => {
    let cancelled = false;
    const timer = window.setTimeout(() => {
      const asked = query.trim();
      listTools({ q: asked, limit: 500, toolset }).then(
        result => {
          if (!cancelled) {
            setList(result);
            setListedFor(asked);
            setError(null);
          }
        },
        err => {
          if (!cancelled) {
            setError(String(err.message ?? err));
          }
        }
      );
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [query, revision, toolset]);

  React.useEffect(() => {
    getStatus().then(setStatus, err => console.error('nexus-jupyter: status', err));
  }, [revision]);

  React.useEffect(
    () =>
      followChanges(
        (event: IChangedEvent) => {
          setRevision(r => r + 1);
          const name = selectedRef.current;
          const touched = [...event.added, ...event.removed, ...event.updated, ...(event.tests ?? [])];
          if (name && touched.includes(name)) {
            setDetailsRevision(r => r + 1);
          }
        },
        isConnected => {
          setConnected(isConnected);
          if (isConnected) {
            // Changes may have happened while the stream was down.
            setRevision(r => r + 1);
          }
        },
        called => {
          // Only the open tool's calls line is fetched again, not its form.
          const name = selectedRef.current;
          if (name && called.includes(name)) {
            setCallsRevision(r => r + 1);
          }
        }
      ),
    []
  );

  const ranked = query.trim() !== '';
  const groups = !list
    ? []
    : groupBy === 'toolset'
      ? groupByToolset(list.tools, ranked)
      : withCurrentNotebookFirst(list.tools, notebook, tools => groupBySource(tools, ranked));
  const groupTitle = (key: string): string =>
    groupBy === 'toolset'
      ? toolsetTitle(key)
      : key === CURRENT_NOTEBOOK_GROUP && notebook
        ? currentNotebookTitle(notebook)
        : sourceTitle(key);
  return (
    <div className="jp-NexusTools-root">
      <div className="jp-NexusTools-header">
        <input
          ref={props.searchRef}
          className="jp-NexusTools-search jp-mod-styled"
          type="search"
          placeholder="Search tools"
          aria-label="Search tools"
          value={query}
          onChange={event => {
            setQuery(event.target.value);
            setSelected(null);
          }}
          onKeyDown={event => {
            if (event.key === 'Escape') {
              setQuery('');
            } else if (event.key === 'ArrowDown' || event.key === 'Enter') {
              const first = event.currentTarget
                .closest('.jp-NexusTools-root')
                ?.querySelector<HTMLElement>('.jp-NexusTools-item');
              if (first) {
                event.preventDefault();
                event.key === 'Enter' ? first.click() : first.focus();
              }
            }
          }}
        />
        <span
          className={`jp-NexusTools-live ${connected ? 'jp-mod-connected' : ''}`}
          title={connected ? 'Live: updates as tools change' : 'Not connected to live updates'}
        />
      </div>
      {!selected && (
        <ViewBar
          groupBy={groupBy}
          onGroupBy={setGroupBy}
          toolset={toolset}
          onToolset={setToolset}
          toolsets={status?.toolsets ?? []}
        />
      )}
      <Problems status={status} />
      {error && (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
          {error}
        </div>
      )}
      {selected ? (
        <ToolDetails
          follower={follower}
          name={selected.name}
          source={selected.source}
          revision={detailsRevision}
          callsRevision={callsRevision}
          onBack={() => {
            setSelected(null);
            window.setTimeout(() => props.searchRef.current?.focus(), 0);
          }}
        />
      ) : (
        <div className="jp-NexusTools-list" aria-live="polite">
          {list?.searched_for && list.searched_for !== listedFor && (
            <div className="jp-NexusTools-searched-for">
              Searched for <q>{list.searched_for}</q>
            </div>
          )}
          {list && list.tools.length === 0 && (query.trim() || toolset) && (
            <div className="jp-NexusTools-empty">
              No tools match
              {query.trim() && (
                <>
                  {' '}
                  <q>{query.trim()}</q>
                </>
              )}
              {toolset && (
                <>
                  {' '}
                  in the toolset <code>{toolset}</code>
                </>
              )}
              .
              {(list.unserved ?? []).length > 0 && (
                <span className="jp-NexusTools-unserved">
                  {' '}
                  No installed tool works with {(list.unserved ?? []).join(', ')}.
                </span>
              )}
              {list.suggestions.length > 0 && (
                <>
                  {' '}
                  Did you mean{' '}
                  {list.suggestions.map((s, i) => (
                    <React.Fragment key={s}>
                      {i > 0 && ', '}
                      <button className="jp-NexusTools-link" onClick={() => setQuery(s)}>
                        {s}
                      </button>
                    </React.Fragment>
                  ))}
                  ?
                </>
              )}
              <div>
                <button
                  className="jp-mod-styled jp-NexusTools-clearFilter"
                  onClick={() => {
                    setQuery('');
                    setToolset('');
                    props.searchRef.current?.focus();
                  }}
                >
                  {clearLabel(query, toolset)}
                </button>
              </div>
            </div>
          )}
          {list && list.tools.length === 0 && !query.trim() && !toolset && (
            <AddToolsHint folders={toolsFolders(status?.sources)} />
          )}
          {groups.map(([key, tools]) => (
            <section
              key={key}
              className="jp-NexusTools-group"
              {...(groupBy === 'toolset' ? { 'data-toolset': key } : { 'data-source': key })}
            >
              <h3 className="jp-NexusTools-groupTitle" title={`${groupBy}: ${key || 'none'}`}>
                {groupTitle(key)} <span className="jp-NexusTools-count">{tools.length}</span>
              </h3>
              <ul className="jp-NexusTools-items">
                {tools.map(tool => (
                  <ToolRow key={`${tool.name} ${tool.source}`} tool={tool} onOpen={setSelected} />
                ))}
              </ul>
            </section>
          ))}
          {list && list.total > list.tools.length && (
            <div className="jp-NexusTools-muted">
              Showing {list.tools.length} of {list.total}; refine the search.
            </div>
          )}
          <Offers query={query} revision={revision} />
        </div>
      )}
    </div>
  );
}

/** The Lumino widget that hosts the catalog in the left area. */
export class ToolsPanel extends ReactWidget {
  private readonly searchRef = React.createRef<HTMLInputElement>();

  constructor(private readonly follower: NotebookFollower | null = null) {
    super();
    this.id = 'nexus-jupyter-tools';
    this.addClass('jp-NexusTools');
  }

  /** Put the keyboard focus in the search box. */
  focusSearch(): void {
    const input = this.searchRef.current;
    if (input) {
      input.focus();
      input.select();
    }
  }

  protected onActivateRequest(): void {
    this.focusSearch();
  }

  render(): JSX.Element {
    return <Catalog searchRef={this.searchRef} follower={this.follower} />;
  }
}
