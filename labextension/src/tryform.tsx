/**
 * The "Try" form: a form generated from the tool's JSON schema with the form component
 * JupyterLab ships, a Run button, server-side validation errors on their fields, the
 * approval prompt, and the result with its duration.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { FormComponent } from '@jupyterlab/ui-components';
import type { ErrorSchema } from '@rjsf/utils';
import validator from '@rjsf/validator-ajv8';
import React from 'react';

import { callTool, CallOutcome, IToolDetails, IToolResult } from './api';
import { JsonBlock } from './badges';
import { clearChangedFields, toExtraErrors } from './errors';

/** Ask the user whether a tool that needs approval may run. */
async function askApproval(tool: string, message: string): Promise<boolean> {
  const body = (
    <div className="jp-NexusTools-approval">
      <p>
        The tool <code>{tool}</code> needs your approval to run.
      </p>
      <p className="jp-NexusTools-approvalReason">{message}</p>
    </div>
  );
  const answer = await showDialog({
    title: 'Approve tool call?',
    body,
    buttons: [Dialog.cancelButton({ label: 'Deny' }), Dialog.warnButton({ label: 'Approve' })]
  });
  return answer.button.accept;
}

/** Render a tool result: error, structured value, content blocks, duration. */
export function ResultView(props: { result: IToolResult }): JSX.Element {
  const { result } = props;
  const ms = (result.duration * 1000).toFixed(result.duration < 0.01 ? 2 : 1);
  const blocks = result.content ?? [];
  return (
    <div
      className={`jp-NexusTools-result ${result.is_error ? 'jp-NexusTools-result-error' : ''}`}
      role="status"
    >
      <div className="jp-NexusTools-resultHeader">
        <span>{result.is_error ? 'Failed' : 'Result'}</span>
        <span className="jp-NexusTools-duration" title="Duration">
          {ms} ms
        </span>
      </div>
      {result.is_error && (
        <pre className="jp-NexusTools-errorText">
          {result.error_type ? `${result.error_type}: ` : ''}
          {result.error}
        </pre>
      )}
      {!result.is_error && result.structured !== undefined && result.structured !== null && (
        <JsonBlock value={result.structured} className="jp-NexusTools-structured" />
      )}
      {!result.is_error &&
        (result.structured === undefined || result.structured === null) &&
        blocks.map((block, i) =>
          block.type === 'image' && block.data ? (
            <img key={i} src={`data:${block.mimeType};base64,${block.data}`} alt="tool output" />
          ) : (
            <pre key={i} className="jp-NexusTools-text">
              {block.text ?? JSON.stringify(block)}
            </pre>
          )
        )}
    </div>
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
      return (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-warn" role="alert">
          Not run: approval denied. {outcome.message}
        </div>
      );
    case 'denied':
      return (
        <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
          Blocked: {outcome.message}
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

/** The form for one tool; keyed by tool name so switching tools starts fresh. */
export function TryForm(props: { tool: IToolDetails }): JSX.Element {
  const { tool } = props;
  const [formData, setFormData] = React.useState<Record<string, unknown>>({});
  const [extraErrors, setExtraErrors] = React.useState<ErrorSchema | undefined>();
  const [running, setRunning] = React.useState(false);
  const [outcome, setOutcome] = React.useState<CallOutcome | null>(null);
  const formContext = React.useMemo(() => ({ defaultFormData: {} }), []);
  const schema = React.useMemo(() => {
    // The form shows the tool's name and description elsewhere; drop the duplicate title.
    const { title: _title, description: _description, ...rest } = tool.input_schema ?? {};
    return { type: 'object', properties: {}, ...rest } as any;
  }, [tool.input_schema]);

  const run = async () => {
    setRunning(true);
    setOutcome(null);
    try {
      let result = await callTool(tool.name, formData);
      if (result.kind === 'approval' && (await askApproval(tool.name, result.message))) {
        result = await callTool(tool.name, formData, true);
      }
      setExtraErrors(result.kind === 'validation' ? toExtraErrors(result.errors) : undefined);
      setOutcome(result);
    } finally {
      setRunning(false);
    }
  };

  return (
    <section className="jp-NexusTools-try" aria-label="Try the tool">
      <h3 className="jp-NexusTools-sectionTitle">Try</h3>
      <div
        className="jp-NexusTools-form"
        onKeyDown={event => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !running) {
            event.preventDefault();
            void run();
          }
        }}
      >
        <FormComponent
          schema={schema}
          formData={formData as any}
          formContext={formContext}
          validator={validator as any}
          noValidate={true}
          noHtml5Validate={true}
          showErrorList={false}
          extraErrors={extraErrors}
          onChange={event => {
            const next = (event.formData ?? {}) as Record<string, unknown>;
            setExtraErrors(clearChangedFields(extraErrors, formData, next));
            setFormData(next);
          }}
          idPrefix={`jp-NexusTools-${tool.name}`}
        />
      </div>
      <div className="jp-NexusTools-actions">
        <button
          className="jp-mod-styled jp-mod-accept jp-NexusTools-run"
          disabled={running}
          onClick={() => void run()}
          title="Run the tool (Ctrl+Enter in the form)"
        >
          {running ? 'Running…' : 'Run'}
        </button>
        <button
          className="jp-mod-styled jp-NexusTools-reset"
          disabled={running}
          onClick={() => {
            setFormData({});
            setExtraErrors(undefined);
            setOutcome(null);
          }}
        >
          Reset
        </button>
      </div>
      {outcome && <Notice outcome={outcome} />}
    </section>
  );
}
