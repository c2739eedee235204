/**
 * Small presentational pieces shared by the list and the details view.
 */
import React from 'react';

const PERMISSION_LABELS: Record<string, string> = {
  read_only: 'read-only',
  workspace_write: 'writes',
  danger_full_access: 'full access'
};

/** A permission badge, colored by risk. */
export function PermissionBadge(props: { permission: string }): JSX.Element {
  const label = PERMISSION_LABELS[props.permission] ?? props.permission;
  return (
    <span
      className={`jp-NexusTools-badge jp-NexusTools-perm-${props.permission}`}
      title={`Permission: ${props.permission}`}
    >
      {label}
    </span>
  );
}

/** A badge with a tooltip; `kind` picks the color (error, warn, info). */
export function Badge(props: {
  kind: 'error' | 'warn' | 'info';
  label: string;
  title?: string;
}): JSX.Element {
  return (
    <span
      className={`jp-NexusTools-badge jp-NexusTools-badge-${props.kind}`}
      title={props.title ?? props.label}
    >
      {props.label}
    </span>
  );
}

/** A tool in error; a conflict (sources of one rank define its name) says so, on each row. */
function ErrorBadge(props: { reason: string | null; conflictsWith?: string[] | null }): JSX.Element {
  const others = (props.conflictsWith ?? []).join(', ');
  if (!others) {
    return <Badge kind="error" label="error" title={props.reason ?? 'error'} />;
  }
  return <Badge kind="error" label="conflict" title={`Also defined by ${others}: ${props.reason}`} />;
}

/** Status badges of a tool: error (or conflict) / unavailable / shadowed. */
export function StatusBadges(props: {
  status: string;
  reason: string | null;
  shadowed: unknown[];
  shadowedBy?: string | null;
  /** A conflict: the other sources that define the name (the same badge on every one). */
  conflictsWith?: string[] | null;
  /** Why the live version is an old one (its file failed to reload), if it is. */
  stale?: string | null;
}): JSX.Element {
  const { status, reason, shadowed, shadowedBy, stale } = props;
  return (
    <>
      {stale && <Badge kind="warn" label="stale" title={stale} />}
      {status === 'error' && <ErrorBadge reason={reason} conflictsWith={props.conflictsWith} />}
      {status === 'unavailable' && (
        <Badge kind="warn" label="unavailable" title={reason ?? 'unavailable'} />
      )}
      {shadowedBy && (
        <Badge kind="warn" label="shadowed" title={`Shadowed by the ${shadowedBy} source`} />
      )}
      {shadowed.length > 0 && (
        <Badge
          kind="info"
          label={`shadows ${shadowed.length}`}
          title={`Also defined by: ${shadowed.map(s => (typeof s === 'string' ? s : (s as any).source)).join(', ')}`}
        />
      )}
    </>
  );
}

const TEST_LABELS: Record<string, string> = {
  pending: 'tests pending',
  running: 'tests running',
  failed: 'tests failed',
  error: 'tests error',
  skipped: 'tests skipped'
};

/** The tool's test state; nothing for a tool without saved cases. */
export function TestBadge(props: {
  tests?: { state: string; summary: string; cases: number; counts?: Record<string, number> } | null;
}): JSX.Element | null {
  const tests = props.tests;
  if (!tests || tests.state === 'none') {
    return null;
  }
  const passed = tests.counts?.passed ?? 0;
  const label =
    tests.state === 'passed' ? `tests ${passed}/${tests.cases}` : TEST_LABELS[tests.state] ?? tests.state;
  return (
    <span
      className={`jp-NexusTools-badge jp-NexusTools-test jp-NexusTools-test-${tests.state}`}
      title={`Tests: ${tests.summary}`}
      data-test-state={tests.state}
    >
      {label}
    </span>
  );
}

/** Pretty JSON in a pre block. */
export function JsonBlock(props: { value: unknown; className?: string }): JSX.Element {
  return (
    <pre className={`jp-NexusTools-json ${props.className ?? ''}`}>
      {JSON.stringify(props.value, null, 2)}
    </pre>
  );
}
