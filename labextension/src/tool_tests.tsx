/**
 * Tool tests in the sidebar: the "Tests" section of a tool's details (its cases' last run,
 * what broke, Run tests), its calls on the server, and "Save as test" in the Try form.
 */
import React from 'react';

import { CallOutcome, IToolDetails, IToolStats, ITestStatus, runTests, saveTest } from './api';
import { TestBadge } from './badges';
import { callsLines } from './calls';
import { expectationOf, Kind, KINDS, suggestedExpectation } from './expectations';
import { notebookOf } from './notebook_tools';
import { callCommand } from './present';
import { approvalAdvice } from './skips';

/**
 * "Calls on this server: 12, 1 failed (8%), p50 2.1 ms, p95 9.8 ms" and, for a live kernel's
 * tool, "Calls from demo.ipynb: ..." (the calls its notebook made in the kernel).
 */
export function CallsLine(props: {
  stats?: IToolStats | null;
  notebook?: { name: string; stats: IToolStats | null | undefined } | null;
}): JSX.Element {
  return (
    <>
      {callsLines(props.stats, props.notebook).map((line, i) => (
        <p
          key={i}
          className={`jp-NexusTools-calls${line.empty ? ' jp-NexusTools-muted' : ''}${i ? ' jp-NexusTools-notebookCalls' : ''}`}
          title={line.title}
        >
          {line.text}
        </p>
      ))}
    </>
  );
}

/** "2 passed, 1 skipped": the counts of a run (the details are listed above them). */
function countsText(counts: Record<string, number>): string {
  return Object.entries(counts ?? {})
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ');
}

/** The tool's saved cases: how their last run went, what broke, and Run tests. */
export function TestsSection(props: { tool: IToolDetails }): JSX.Element {
  const [status, setStatus] = React.useState<ITestStatus | null>(props.tool.tests ?? null);
  const [running, setRunning] = React.useState(false);
  const [error, setError] = React.useState<string | null>(null);
  React.useEffect(() => setStatus(props.tool.tests ?? null), [props.tool]);
  // a live kernel's tool is tested in its kernel: its notebook is where to approve a case
  const notebook = props.tool.source_kind === 'kernel' ? notebookOf(props.tool) : null;

  const run = async () => {
    setRunning(true);
    setError(null);
    try {
      setStatus((await runTests(props.tool.name)).tests);
    } catch (err) {
      setError(String((err as Error).message ?? err));
    } finally {
      setRunning(false);
    }
  };

  if (!status || status.state === 'none') {
    return (
      <section className="jp-NexusTools-tests" aria-label="Tests">
        <h3 className="jp-NexusTools-sectionTitle">Tests</h3>
        <p className="jp-NexusTools-muted">
          No saved tests. Run the tool below, then <b>Save as test</b> keeps the call and what it
          must give; it runs again whenever the tool changes.
        </p>
      </section>
    );
  }
  return (
    <section className="jp-NexusTools-tests" aria-label="Tests">
      <h3 className="jp-NexusTools-sectionTitle">
        Tests <TestBadge tests={status} />
      </h3>
      {status.problem && (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-error">{status.problem}</div>
      )}
      {status.broke && (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-error jp-NexusTools-broke" role="alert">
          Broke by the last change: {status.broke.label}: <code>{status.broke.message}</code>
        </div>
      )}
      <ul className="jp-NexusTools-outcomes">
        {status.outcomes.map((outcome, i) => (
          <li key={i} className={`jp-NexusTools-outcome jp-NexusTools-outcome-${outcome.state}`}>
            <span className={`jp-NexusTools-badge jp-NexusTools-test jp-NexusTools-test-${outcome.state}`}>
              {outcome.state}
            </span>{' '}
            <span className="jp-NexusTools-outcomeLabel">{outcome.label}</span>
            {outcome.message && (
              <div className={`jp-NexusTools-outcomeMessage jp-NexusTools-outcomeMessage-${outcome.state}`}>
                {outcome.message}
                {outcome.needs_approval ? '. ' : ''}
                {approvalAdvice(outcome, notebook).map((part, j) =>
                  'code' in part ? <code key={j}>{part.code}</code> : <span key={j}>{part.text}</span>
                )}
              </div>
            )}
          </li>
        ))}
      </ul>
      <div className="jp-NexusTools-actions">
        <button
          className="jp-mod-styled jp-NexusTools-runTests"
          disabled={running}
          onClick={() => void run()}
          title="Run this tool's saved cases now, on the server"
        >
          {running ? 'Running tests…' : 'Run tests'}
        </button>
        <span className="jp-NexusTools-muted">{countsText(status.counts)}</span>
      </div>
      {error && <div className="jp-NexusTools-notice jp-NexusTools-notice-error">{error}</div>}
    </section>
  );
}

/** Why a call's outcome cannot be saved as a test (null: it can). */
function nothingToSave(outcome: CallOutcome | null): string | null {
  switch (outcome?.kind) {
    case undefined:
      return 'Run the tool, then save the call and what it gave as a test.';
    case 'result':
    case 'validation':
      return null;
    case 'cancelled':
      return 'The call was cancelled: it gave nothing to save.';
    default:
      return 'The call did not run: it gave nothing to save.';
  }
}

/**
 * "Save as test": the call that ran (`args`) and what it must give, saved where the tool's
 * cases live. Only after a run, and only that run's call: its outcome is not offered for
 * other arguments (a run refused before it reached the tool has none).
 */
export function SaveAsTest(props: {
  tool: IToolDetails;
  args: Record<string, unknown>;
  outcome: CallOutcome | null;
}): JSX.Element {
  const [kind, setKind] = React.useState<Kind>('succeeds');
  const [text, setText] = React.useState('');
  const [note, setNote] = React.useState<{ ok: boolean; text: string } | null>(null);
  const [saving, setSaving] = React.useState(false);
  React.useEffect(() => {
    const [suggestedKind, suggestedText] = suggestedExpectation(props.outcome);
    setKind(suggestedKind);
    setText(suggestedText);
    setNote(null);
  }, [props.outcome]);
  const unsaveable = nothingToSave(props.outcome);

  const save = async () => {
    setSaving(true);
    try {
      const expectation = expectationOf(kind, text);
      const answer = await saveTest(props.tool.name, props.args, expectation);
      setNote({ ok: true, text: `Saved in ${answer.saved}; it runs whenever the tool changes.` });
    } catch (err) {
      setNote({ ok: false, text: String((err as Error).message ?? err) });
    } finally {
      setSaving(false);
    }
  };

  return (
    <div className="jp-NexusTools-saveTest" aria-label="Save as test">
      <button
        className="jp-mod-styled jp-NexusTools-saveTestButton"
        disabled={saving || unsaveable !== null}
        onClick={() => void save()}
        title={unsaveable ?? `Keep this call (${callCommand(props.tool.name, props.args)}) and what it must give as a test case of the tool`}
      >
        Save as test
      </button>
      <select
        className="jp-mod-styled jp-NexusTools-saveTestKind"
        aria-label="What the call must give"
        value={kind}
        disabled={unsaveable !== null}
        onChange={event => setKind(event.target.value as Kind)}
      >
        {KINDS.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      {kind !== 'succeeds' && unsaveable === null && (
        <input
          className="jp-mod-styled jp-NexusTools-saveTestValue"
          aria-label="Expected value"
          value={text}
          placeholder={kind === 'check' ? "result['total'] > 0" : 'JSON or text'}
          onChange={event => setText(event.target.value)}
        />
      )}
      {unsaveable && <div className="jp-NexusTools-muted jp-NexusTools-saveTestWhy">{unsaveable}</div>}
      {note && (
        <div
          className={`jp-NexusTools-notice ${note.ok ? 'jp-NexusTools-notice-ok' : 'jp-NexusTools-notice-error'}`}
          role="status"
        >
          {note.text}
        </div>
      )}
    </div>
  );
}
