/**
 * Values as a person reads them: text as text (monospace, real line breaks, scrollable,
 * selectable), JSON objects and arrays as a collapsible tree whose multi-line strings are
 * text blocks again.
 */
import React from 'react';

const OPEN_DEPTH = 2; // levels unfolded at first
const MAX_ITEMS = 200;

/** Text in a scrollable monospace block. */
export function TextBlock(props: { text: string; className?: string }): JSX.Element {
  return <pre className={`jp-NexusTools-text ${props.className ?? ''}`}>{props.text}</pre>;
}

function Scalar(props: { value: unknown }): JSX.Element {
  const { value } = props;
  if (typeof value === 'string' && value.replace(/\n+$/, '').includes('\n')) {
    return <TextBlock text={value} />;
  }
  const kind = value === null ? 'null' : typeof value;
  return <span className={`jp-NexusTools-json-${kind}`}>{JSON.stringify(value)}</span>;
}

function Node(props: { name?: string; value: unknown; depth: number }): JSX.Element {
  const { name, value, depth } = props;
  const label = name !== undefined ? <span className="jp-NexusTools-jsonKey">{name}: </span> : null;
  if (value === null || typeof value !== 'object') {
    return (
      <div className="jp-NexusTools-jsonLeaf">
        {label}
        <Scalar value={value} />
      </div>
    );
  }
  const items: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  const summary = Array.isArray(value)
    ? `[…] ${items.length} item${items.length === 1 ? '' : 's'}`
    : `{…} ${items.length} key${items.length === 1 ? '' : 's'}`;
  if (items.length === 0) {
    return (
      <div className="jp-NexusTools-jsonLeaf">
        {label}
        {Array.isArray(value) ? '[]' : '{}'}
      </div>
    );
  }
  return (
    <details className="jp-NexusTools-jsonNode" open={depth < OPEN_DEPTH}>
      <summary>
        {label}
        <span className="jp-NexusTools-muted">{summary}</span>
      </summary>
      {items.slice(0, MAX_ITEMS).map(([k, v]) => (
        <Node key={k} name={k} value={v} depth={depth + 1} />
      ))}
      {items.length > MAX_ITEMS && (
        <div className="jp-NexusTools-muted">… {items.length - MAX_ITEMS} more</div>
      )}
    </details>
  );
}

/** A tool's structured value: a string as text, anything else as a JSON tree. */
export function ValueView(props: { value: unknown; className?: string }): JSX.Element {
  const { value, className } = props;
  if (typeof value === 'string') {
    return <TextBlock text={value} className={className} />;
  }
  if (value === null || typeof value !== 'object') {
    return <TextBlock text={String(value)} className={className} />;
  }
  return (
    <div className={`jp-NexusTools-jsonTree ${className ?? ''}`}>
      <Node value={value} depth={0} />
    </div>
  );
}
