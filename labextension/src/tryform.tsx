/**
 * The "Try" form: a form generated from the tool's JSON schema with the form component
 * JupyterLab ships, a Run button (and Cancel while it runs), server-side validation errors
 * on their fields, the approval prompt, the result with its duration, and the history of
 * the session's calls of the tool.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { FormComponent } from '@jupyterlab/ui-components';
import type { ErrorSchema } from '@rjsf/utils';
import validator from '@rjsf/validator-ajv8';
import React from 'react';

import { callTool, CallOutcome, IToolDetails, IToolResult } from './api';
import { IProgress, progressFraction, progressLabel } from './call_stream';
import { clearChangedFields, toExtraErrors } from './errors';
import { TextBlock, ValueView } from './json';
import { NumberTextField } from './number_field';
import { notRunBecause, unreadableNumbers, withNumberFields } from './numbers';
import { callCommand, formUiSchema } from './present';
import { SaveAsTest } from './tool_tests';
import { clockTime } from './times';
import { formSchema, missingRequired, withNulls } from './unions';

// The form's own fields: numbers typed as text (see numbers.ts).
const FIELDS = { nexusNumber: NumberTextField };
// An array the user has not touched is not sent (the tool's default applies; for
// `list[str] | None` that is None), unless the parameter is required.
const DEFAULTS = { arrayMinItems: { populate: 'requiredOnly' as const } };

/** How the user answered the approval dialog. */
type Approval = 'once' | 'always' | null;

/** What the form says when the user denied the call in the approval dialog. */
const DENIED = 'Denied: you did not approve this call, so nothing ran.';

/** `text` with its `backquoted` spans as code (a nex.yaml line in a reason). */
function WithCode(props: { text: string }): JSX.Element {
  const parts = props.text.split('`');
  return (
    <>
      {parts.map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part))}
    </>
  );
}

/** The policy's reason for asking, without the sentence's start the dialog already says
 * ("Tool 'greet' (read_only) needs approval: approvals.greet says ask." -> the rule). */
function askReason(why: string | undefined): string | null {
  return why ? why.replace(/^Tool '[^']*' \([^)]*\) needs approval: /, '') : null;
}

/** Ask the user whether a tool that needs approval may run, showing what would run and
 * why it asks. */
async function askApproval(
  tool: IToolDetails,
  args: Record<string, unknown>,
  why?: string
): Promise<Approval> {
  const entries = Object.entries(args).filter(([, v]) => v !== undefined);
  const reason = askReason(why);
  const body = (
    <div className="jp-NexusTools-approval">
      <p>
        <code>{tool.name}</code> needs permission{' '}
        <code className="jp-NexusTools-approvalPermission">{tool.permission}</code> and asks
        before it runs.
      </p>
      {reason && (
        <p className="jp-NexusTools-approvalWhy">
          Why it asks: <WithCode text={reason} />
        </p>
      )}
      <p>It will run with:</p>
      {entries.length === 0 ? (
        <p className="jp-NexusTools-muted">no arguments</p>
      ) : (
        <table className="jp-NexusTools-approvalArgs">
          <tbody>
            {entries.map(([key, value]) => (
              <tr key={key}>
                <th>
                  <code>{key}</code>
                </th>
                <td>
                  <TextBlock
                    text={typeof value === 'string' ? value : JSON.stringify(value, null, 2)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
  const answer = await showDialog({
    title: `Run ${tool.name}?`,
    body,
    buttons: [
      Dialog.cancelButton({ label: 'Deny' }),
      Dialog.okButton({
        label: 'Always for this session',
        caption: `Do not ask again for ${tool.name} until the server restarts`,
        actions: ['always']
      }),
      Dialog.warnButton({ label: 'Approve once' })
    ]
  });
  if (!answer.button.accept) {
    return null;
  }
  return answer.button.actions.includes('always') ? 'always' : 'once';
}

/** Render a tool result: error, structured value, content blocks, and how long it ran. */
export function ResultView(props: { result: IToolResult }): JSX.Element {
  const { result } = props;
  const blocks = result.content ?? [];
  return (
    <div
      className={`jp-NexusTools-result ${result.is_error ? 'jp-NexusTools-result-error' : ''}`}
      role="status"
    >
      <div className="jp-NexusTools-resultHeader">
        <span>{result.is_error ? 'Failed' : 'Result'}</span>
        <span
          className="jp-NexusTools-duration"
          title="How long the tool ran, measured on the server"
        >
          ran in {formatDuration(result.duration)}
        </span>
      </div>
      {result.summary && (
        <div className="jp-NexusTools-callSummary" title="This call, in one line">
          {result.summary}
        </div>
      )}
      {(result.notes ?? []).map((note, i) => (
        <div key={i} className="jp-NexusTools-notice jp-NexusTools-notice-warning">
          {note}
        </div>
      ))}
      {result.is_error && (
        <pre className="jp-NexusTools-errorText">
          {result.error_type ? `${result.error_type}: ` : ''}
          {result.error}
        </pre>
      )}
      {result.is_error && result.traceback && (
        <details className="jp-NexusTools-traceback" open>
          <summary>Traceback (the tool&apos;s code)</summary>
          <pre className="jp-NexusTools-errorText">{result.traceback}</pre>
        </details>
      )}
      {!result.is_error && result.structured !== undefined && result.structured !== null && (
        <ValueView value={result.structured} className="jp-NexusTools-structured" />
      )}
      {!result.is_error &&
        (result.structured === undefined || result.structured === null) &&
        blocks.map((block, i) =>
          block.type === 'image' && block.data ? (
            <img key={i} src={`data:${block.mimeType};base64,${block.data}`} alt="tool output" />
          ) : (
            <TextBlock key={i} text={block.text ?? JSON.stringify(block, null, 2)} />
          )
        )}
    </div>
  );
}

/** Seconds as "13.7 ms" or "2.31 s". */
function formatDuration(seconds: number): string {
  if (seconds >= 1) {
    return `${seconds.toFixed(2)} s`;
  }
  const ms = seconds * 1000;
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

/** "Copy as %tool call …": the call as a line to paste into a notebook cell. */
function CopyCall(props: { name: string; args: Record<string, unknown> }): JSX.Element {
  const [copied, setCopied] = React.useState(false);
  const command = callCommand(props.name, props.args);
  React.useEffect(() => setCopied(false), [command]);
  return (
    <button
      className="jp-mod-styled jp-NexusTools-copyCall"
      title={`Copy to the clipboard: ${command}`}
      onClick={() =>
        void navigator.clipboard.writeText(command).then(
          () => setCopied(true),
          () => window.prompt('Copy this line:', command)
        )
      }
    >
      {copied ? 'Copied' : 'Copy as %tool call'}
    </button>
  );
}

function Notice(props: { outcome: CallOutcome }): JSX.Element | null {
  const { outcome } = props;
  switch (outcome.kind) {
    case 'result':
      return <ResultView result={outcome.result} />;
    case 'validation':
      return (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-warn" role="alert">
          {outcome.errors.length === 1
            ? 'One argument is invalid; see the field above.'
            : `${outcome.errors.length} arguments are invalid; see the fields above.`}
        </div>
      );
    case 'approval':
      // the user's own answer (grey, as a cancel), or the server still asking after it
      return outcome.message === DENIED ? (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-neutral" role="status">
          {outcome.message}
        </div>
      ) : (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-warn" role="alert">
          Not run: {outcome.message}
        </div>
      );
    case 'denied':
      return (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
          Blocked: {outcome.message}
        </div>
      );
    case 'cancelled':
      return (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-warn" role="alert">
          {outcome.message}
        </div>
      );
    case 'error':
      return (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
          {outcome.status ? `HTTP ${outcome.status}: ` : ''}
          {outcome.message}
        </div>
      );
  }
}

/** A running tool's last progress report: a bar when it gave a total, and its message. */
function ProgressBar(props: { progress: IProgress }): JSX.Element {
  const fraction = progressFraction(props.progress);
  const label = progressLabel(props.progress);
  return (
    <div className="jp-NexusTools-progress" role="status" aria-live="polite">
      {fraction !== null ? (
        <progress max={1} value={fraction} aria-label={label} />
      ) : (
        <progress aria-label={label} />
      )}
      <span className="jp-NexusTools-progressLabel">{label}</span>
    </div>
  );
}

/** One call made from the form, kept for the session. */
interface IHistoryEntry {
  id: number;
  args: Record<string, unknown>;
  outcome: CallOutcome;
  at: Date;
}

const HISTORY_LIMIT = 20;
// Per tool, newest first; module-level so it survives switching tools and re-renders.
const histories = new Map<string, IHistoryEntry[]>();
let nextEntryId = 1;

function outcomeLabel(outcome: CallOutcome): string {
  if (outcome.kind === 'result') {
    return outcome.result.is_error ? 'error' : 'ok';
  }
  if (outcome.kind === 'approval') {
    return outcome.message === DENIED ? 'denied' : 'not approved';
  }
  return outcome.kind === 'denied' ? 'blocked' : outcome.kind;
}

/** The calls made from this form, newest first; a click brings one back. */
function History(props: {
  entries: IHistoryEntry[];
  selected: number | null;
  onPick: (entry: IHistoryEntry) => void;
}): JSX.Element | null {
  if (!props.entries.length) {
    return null;
  }
  return (
    <div className="jp-NexusTools-history" aria-label="Call history">
      <h4 className="jp-NexusTools-sectionTitle">History</h4>
      <ul>
        {props.entries.map(entry => {
          const label = outcomeLabel(entry.outcome);
          return (
            <li key={entry.id}>
              <button
                className={`jp-NexusTools-historyEntry jp-NexusTools-history-${label.replace(' ', '-')}${
                  entry.id === props.selected ? ' jp-mod-selected' : ''
                }`}
                title="Show this call again and put its arguments back in the form"
                onClick={() => props.onPick(entry)}
              >
                <span className="jp-NexusTools-historyTime">
                  {clockTime(entry.at)}
                </span>
                <span className="jp-NexusTools-historyOutcome">{label}</span>
                {entry.outcome.kind === 'result' && (
                  <span
                    className="jp-NexusTools-historyDuration"
                    title="How long the tool ran, measured on the server"
                  >
                    {formatDuration(entry.outcome.result.duration)}
                  </span>
                )}
                {entry.outcome.kind === 'result' && entry.outcome.result.summary ? (
                  <span className="jp-NexusTools-historySummary" title={JSON.stringify(entry.args)}>
                    {entry.outcome.result.summary}
                  </span>
                ) : (
                  <code className="jp-NexusTools-historyArgs">{JSON.stringify(entry.args)}</code>
                )}
              </button>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** The form for one tool; keyed by tool name so switching tools starts fresh. */
export function TryForm(props: {
  tool: IToolDetails;
  /** Why Run is disabled (policy forbids the call, the tool is gone), or null. */
  blocked?: string | null;
  /** After each call that reached the server (its call counts changed). */
  onCalled?: () => void;
}): JSX.Element {
  const { tool, blocked, onCalled } = props;
  const [formData, setFormData] = React.useState<Record<string, unknown>>({});
  const [extraErrors, setExtraErrors] = React.useState<ErrorSchema | undefined>();
  const [running, setRunning] = React.useState(false);
  // the running call's last progress report, if its tool reports any
  const [progress, setProgress] = React.useState<IProgress | null>(null);
  const [outcome, setOutcome] = React.useState<CallOutcome | null>(null);
  // why Run did not call the server (a number field holds text that is not a number)
  const [unread, setUnread] = React.useState<string | null>(null);
  // the arguments of the call `outcome` came from: what "Save as test" saves
  const [ranWith, setRanWith] = React.useState<Record<string, unknown>>({});
  const [history, setHistory] = React.useState<IHistoryEntry[]>(
    () => histories.get(tool.name) ?? []
  );
  const [selected, setSelected] = React.useState<number | null>(null);
  const abort = React.useRef<AbortController | null>(null);
  React.useEffect(() => () => abort.current?.abort(), []); // closing the panel cancels
  // Bumped when the arguments are put in from outside (Reset, a history entry): the form is
  // made anew from them. A field that keeps its own text (a number box) reads its value only
  // when made; any later change of it is the echo of its own typing, which the form can hand
  // back late, or stale, under load.
  const [generation, setGeneration] = React.useState(0);
  const formContext = React.useMemo(() => ({ defaultFormData: {} }), []);
  // `str | None` drawn as a text box, not a chooser of "Option 1 / Option 2" (unions.ts).
  const shown = React.useMemo(() => formSchema(tool.input_schema ?? {}), [tool.input_schema]);
  const schema = React.useMemo(() => {
    // The form shows the tool's name and description elsewhere; drop the duplicate title.
    const { title: _title, description: _description, ...rest } = shown;
    return { type: 'object', properties: {}, ...rest } as any;
  }, [shown]);
  const uiSchema = React.useMemo(
    () => withNumberFields(formUiSchema(shown), shown),
    [shown]
  );
  // What a call sends: the form's values, null for a required parameter left empty that
  // may be null.
  const callArgs = React.useMemo(
    () => withNulls(tool.input_schema, formData),
    [tool.input_schema, formData]
  );

  const run = async () => {
    const args = callArgs;
    const unreadable = unreadableNumbers(shown, formData);
    setSelected(null);
    if (unreadable.length) {
      // Not sent: the server would only say "not a number" too, and nothing ran to save.
      // The required fields left empty are named with them, so one Run flags both.
      const missing = missingRequired(tool.input_schema, args);
      setExtraErrors(toExtraErrors([...unreadable, ...missing]));
      setOutcome(null);
      setUnread(notRunBecause(unreadable, missing.length));
      return;
    }
    setUnread(null);
    const controller = new AbortController();
    abort.current = controller;
    setRunning(true);
    setOutcome(null);
    setProgress(null);
    try {
      // `call_source`: the details of one source's tool (of a conflict, or a shadowed one)
      const source = tool.call_source;
      let result = await callTool(tool.name, args, false, controller.signal, setProgress, source);
      if (result.kind === 'approval') {
        const approval = await askApproval(tool, args, result.why);
        if (approval) {
          const approved = approval === 'always' ? 'always' : true;
          result = await callTool(
            tool.name,
            args,
            approved,
            controller.signal,
            setProgress,
            source
          );
        } else {
          result = { kind: 'approval', message: DENIED };
        }
      }
      setExtraErrors(result.kind === 'validation' ? toExtraErrors(result.errors) : undefined);
      setOutcome(result);
      setRanWith(args);
      const entry: IHistoryEntry = {
        id: nextEntryId++,
        args,
        outcome: result,
        at: new Date()
      };
      const entries = [entry, ...(histories.get(tool.name) ?? [])].slice(0, HISTORY_LIMIT);
      histories.set(tool.name, entries);
      setHistory(entries);
      const reached = !(result.kind === 'approval' && result.message === DENIED);
      if (reached && result.kind !== 'cancelled' && !(result.kind === 'error' && !result.status)) {
        onCalled?.();
      }
    } finally {
      abort.current = null;
      setRunning(false);
      setProgress(null);
    }
  };

  return (
    <section className="jp-NexusTools-try" aria-label="Try the tool">
      <h3 className="jp-NexusTools-sectionTitle">Try</h3>
      {blocked && (
        <div className="jp-NexusTools-notice jp-NexusTools-blocked" role="note">
          Run is disabled: <WithCode text={blocked} />
        </div>
      )}
      <div
        className="jp-NexusTools-form"
        onKeyDown={event => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !running && !blocked) {
            event.preventDefault();
            void run();
          }
        }}
      >
        <FormComponent
          key={generation}
          schema={schema}
          uiSchema={uiSchema}
          formData={formData as any}
          formContext={formContext}
          validator={validator as any}
          noValidate={true}
          noHtml5Validate={true}
          showErrorList={false}
          extraErrors={extraErrors}
          fields={FIELDS}
          experimental_defaultFormStateBehavior={DEFAULTS}
          buttonStyle="icons"
          onChange={event => {
            const next = (event.formData ?? {}) as Record<string, unknown>;
            setExtraErrors(clearChangedFields(extraErrors, formData, next));
            setFormData(next);
            setUnread(null);
          }}
          idPrefix={`jp-NexusTools-${tool.name}`}
        />
      </div>
      <div className="jp-NexusTools-actions">
        <button
          className="jp-mod-styled jp-mod-accept jp-NexusTools-run"
          disabled={running || !!blocked}
          onClick={() => void run()}
          title={blocked ?? 'Run the tool (Ctrl+Enter in the form)'}
        >
          {running ? 'Running…' : 'Run'}
        </button>
        {running && (
          <button
            className="jp-mod-styled jp-mod-warn jp-NexusTools-cancel"
            onClick={() => abort.current?.abort()}
            title="Stop the call on the server"
          >
            Cancel
          </button>
        )}
        <button
          className="jp-mod-styled jp-NexusTools-reset"
          disabled={running}
          onClick={() => {
            setFormData({});
            setGeneration(g => g + 1);
            setExtraErrors(undefined);
            setOutcome(null);
            setUnread(null);
            setSelected(null);
          }}
        >
          Reset
        </button>
        <CopyCall name={tool.name} args={callArgs} />
      </div>
      {running && progress && <ProgressBar progress={progress} />}
      {unread && (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-warn" role="alert">
          {unread}
        </div>
      )}
      {outcome && <Notice outcome={outcome} />}
      <SaveAsTest tool={tool} args={ranWith} outcome={running ? null : outcome} />
      <History
        entries={history}
        selected={selected}
        onPick={entry => {
          if (running) {
            return;
          }
          setFormData(entry.args);
          setGeneration(g => g + 1);
          setExtraErrors(
            entry.outcome.kind === 'validation' ? toExtraErrors(entry.outcome.errors) : undefined
          );
          setOutcome(entry.outcome);
          setUnread(null);
          setRanWith(entry.args);
          setSelected(entry.id);
        }}
      />
    </section>
  );
}
