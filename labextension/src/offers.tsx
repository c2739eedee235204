/**
 * The sidebar's "Resources" and "Prompts" sections: what the registry offers besides tools
 * (from notebook cells, tool files and MCP servers), as served over MCP. A row opens to
 * read a resource (a template's parameters filled in first) or render a prompt with its
 * arguments. Follows the search box and the server's change stream like the tool list.
 */
import React from 'react';

import { ApiError, request } from './api';
import { sourceTitle } from './present';

/** A resource or resource template of `GET offers`. */
export interface IResourceOffer {
  uri: string;
  name: string;
  title?: string | null;
  description: string;
  mime_type?: string | null;
  template: boolean;
  variables: string[];
  origin?: string | null;
}

/** A prompt of `GET offers`. */
export interface IPromptOffer {
  name: string;
  title?: string | null;
  description: string;
  arguments: { name: string; required: boolean; description?: string | null }[];
  choices: Record<string, string[]>;
  origin?: string | null;
}

/** The answer of `GET offers`. */
export interface IOffers {
  resources: IResourceOffer[];
  templates: IResourceOffer[];
  prompts: IPromptOffer[];
}

export function getOffers(): Promise<IOffers> {
  return request('offers');
}

export function readResource(uri: string): Promise<{ uri: string; contents: any[] }> {
  return request(`resources/read?uri=${encodeURIComponent(uri)}`);
}

export function renderPrompt(
  name: string,
  args: Record<string, string>
): Promise<{ name: string; messages: any[] }> {
  return request(`prompts/${encodeURIComponent(name)}/render`, {
    method: 'POST',
    body: JSON.stringify({ arguments: args })
  });
}

const PREVIEW_CHARS = 4000;

function matches(query: string, ...fields: (string | null | undefined)[]): boolean {
  const q = query.trim().toLowerCase();
  return q === '' || fields.some(f => (f ?? '').toLowerCase().includes(q));
}

function message(error: unknown): string {
  return error instanceof ApiError || error instanceof Error ? error.message : String(error);
}

/** One resource content block, as text a person can read. */
function ContentPreview(props: { content: any }): JSX.Element {
  const { content } = props;
  if (typeof content.text === 'string') {
    const text = content.text as string;
    const cut = text.length > PREVIEW_CHARS;
    return (
      <pre className="jp-NexusOffers-preview">
        {cut ? text.slice(0, PREVIEW_CHARS) + `\n… (${text.length} characters)` : text}
      </pre>
    );
  }
  const bytes = Math.floor(((content.blob ?? '') as string).length * 0.75);
  return (
    <div className="jp-NexusTools-muted">
      Binary content: about {bytes} bytes of {content.mimeType ?? 'unknown type'}.
    </div>
  );
}

function Toggle(props: {
  open: boolean;
  label: string;
  onToggle: () => void;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <div
      className="jp-NexusOffers-rowHeader"
      role="button"
      tabIndex={0}
      aria-expanded={props.open}
      aria-label={props.label}
      onClick={props.onToggle}
      onKeyDown={event => {
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          props.onToggle();
        }
      }}
    >
      {props.children}
    </div>
  );
}

function ResourceRow(props: { resource: IResourceOffer }): JSX.Element {
  const { resource } = props;
  const [open, setOpen] = React.useState(false);
  const [values, setValues] = React.useState<Record<string, string>>({});
  const [read, setRead] = React.useState<any[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);
  const uri = resource.template
    ? resource.uri.replace(/\{([^}]+)\}/g, (_, v: string) => values[v] ?? '')
    : resource.uri;
  const ready = !resource.template || resource.variables.every(v => (values[v] ?? '') !== '');
  const doRead = () => {
    setBusy(true);
    setError(null);
    readResource(uri).then(
      answer => {
        setRead(answer.contents);
        setBusy(false);
      },
      err => {
        setError(message(err));
        setBusy(false);
      }
    );
  };
  return (
    <li className="jp-NexusTools-item jp-NexusOffers-item" data-resource={resource.uri}>
      <Toggle open={open} label={`Open resource ${resource.uri}`} onToggle={() => setOpen(!open)}>
        <div className="jp-NexusTools-itemHeader">
          <span className="jp-NexusTools-itemName">{resource.uri}</span>
          {resource.template && <span className="jp-NexusTools-badge">template</span>}
          {resource.mime_type && (
            <span className="jp-NexusTools-badge">{resource.mime_type}</span>
          )}
        </div>
        {!open && (
          <div className="jp-NexusTools-itemDescription">
            {resource.title || resource.description || resource.name}
          </div>
        )}
      </Toggle>
      {open && (
        <div className="jp-NexusOffers-body">
          {resource.description && (
            <div className="jp-NexusTools-description">{resource.description}</div>
          )}
          {resource.origin && (
            <div className="jp-NexusTools-muted">From {sourceTitle(resource.origin)}</div>
          )}
          {resource.variables.map(variable => (
            <label key={variable} className="jp-NexusOffers-field">
              <span>{variable}</span>
              <input
                className="jp-mod-styled"
                value={values[variable] ?? ''}
                onChange={event => setValues({ ...values, [variable]: event.target.value })}
              />
            </label>
          ))}
          <button
            className="jp-mod-styled jp-mod-accept jp-NexusOffers-action"
            disabled={busy || !ready}
            onClick={doRead}
          >
            {busy ? 'Reading…' : 'Read'}
          </button>
          {error && (
            <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
              {error}
            </div>
          )}
          {read?.map((content, i) => <ContentPreview key={i} content={content} />)}
        </div>
      )}
    </li>
  );
}

function PromptRow(props: { prompt: IPromptOffer }): JSX.Element {
  const { prompt } = props;
  const [open, setOpen] = React.useState(false);
  const [values, setValues] = React.useState<Record<string, string>>({});
  const [messages, setMessages] = React.useState<any[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);
  const ready = prompt.arguments.every(a => !a.required || (values[a.name] ?? '') !== '');
  const doRender = () => {
    const given: Record<string, string> = {};
    for (const [key, value] of Object.entries(values)) {
      if (value !== '') {
        given[key] = value;
      }
    }
    setBusy(true);
    setError(null);
    renderPrompt(prompt.name, given).then(
      answer => {
        setMessages(answer.messages);
        setBusy(false);
      },
      err => {
        setError(message(err));
        setBusy(false);
      }
    );
  };
  const signature = prompt.arguments.map(a => a.name + (a.required ? '' : '?')).join(', ');
  return (
    <li className="jp-NexusTools-item jp-NexusOffers-item" data-prompt={prompt.name}>
      <Toggle open={open} label={`Open prompt ${prompt.name}`} onToggle={() => setOpen(!open)}>
        <div className="jp-NexusTools-itemHeader">
          <span className="jp-NexusTools-itemName">{prompt.name}</span>
          <span className="jp-NexusOffers-signature">({signature})</span>
        </div>
        {!open && (
          <div className="jp-NexusTools-itemDescription">
            {prompt.title || prompt.description}
          </div>
        )}
      </Toggle>
      {open && (
        <div className="jp-NexusOffers-body">
          {prompt.description && (
            <div className="jp-NexusTools-description">{prompt.description}</div>
          )}
          {prompt.origin && (
            <div className="jp-NexusTools-muted">From {sourceTitle(prompt.origin)}</div>
          )}
          {prompt.arguments.map(argument => {
            const choices = prompt.choices[argument.name];
            const value = values[argument.name] ?? '';
            const set = (v: string) => setValues({ ...values, [argument.name]: v });
            return (
              <label
                key={argument.name}
                className="jp-NexusOffers-field"
                title={argument.description ?? ''}
              >
                <span>
                  {argument.name}
                  {argument.required && <span className="jp-NexusOffers-required">*</span>}
                </span>
                {choices ? (
                  <select
                    className="jp-mod-styled"
                    value={value}
                    onChange={e => set(e.target.value)}
                  >
                    <option value="">{argument.required ? 'choose…' : '(default)'}</option>
                    {choices.map(c => (
                      <option key={c} value={c}>
                        {c}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    className="jp-mod-styled"
                    value={value}
                    onChange={e => set(e.target.value)}
                  />
                )}
              </label>
            );
          })}
          <button
            className="jp-mod-styled jp-mod-accept jp-NexusOffers-action"
            disabled={busy || !ready}
            onClick={doRender}
          >
            {busy ? 'Rendering…' : 'Render'}
          </button>
          {error && (
            <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
              {error}
            </div>
          )}
          {messages?.map((m, i) => (
            <div key={i} className="jp-NexusOffers-message">
              <span className="jp-NexusTools-badge">{m.role}</span>
              {m.content?.type === 'text' ? (
                <pre className="jp-NexusOffers-preview">{m.content.text}</pre>
              ) : (
                <span className="jp-NexusTools-muted"> {m.content?.type} content</span>
              )}
            </div>
          ))}
        </div>
      )}
    </li>
  );
}

/** The two sections, below the tools; nothing at all when the registry offers none. */
export function Offers(props: { query: string; revision: number }): JSX.Element | null {
  const [offers, setOffers] = React.useState<IOffers | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  React.useEffect(() => {
    let cancelled = false;
    getOffers().then(
      answer => {
        if (!cancelled) {
          setOffers(answer);
          setError(null);
        }
      },
      err => {
        if (!cancelled) {
          setError(message(err));
        }
      }
    );
    return () => {
      cancelled = true;
    };
  }, [props.revision]);
  if (error) {
    return (
      <div className="jp-NexusTools-notice jp-NexusTools-notice-error" role="alert">
        Resources and prompts: {error}
      </div>
    );
  }
  if (!offers) {
    return null;
  }
  const { query } = props;
  const resources = [...offers.resources, ...offers.templates].filter(r =>
    matches(query, r.uri, r.name, r.title, r.description)
  );
  const prompts = offers.prompts.filter(p => matches(query, p.name, p.title, p.description));
  return (
    <>
      {resources.length > 0 && (
        <section className="jp-NexusTools-group jp-NexusOffers" data-offers="resources">
          <h3 className="jp-NexusTools-groupTitle">
            Resources <span className="jp-NexusTools-count">{resources.length}</span>
          </h3>
          <ul className="jp-NexusTools-items">
            {resources.map(r => (
              <ResourceRow key={r.uri} resource={r} />
            ))}
          </ul>
        </section>
      )}
      {prompts.length > 0 && (
        <section className="jp-NexusTools-group jp-NexusOffers" data-offers="prompts">
          <h3 className="jp-NexusTools-groupTitle">
            Prompts <span className="jp-NexusTools-count">{prompts.length}</span>
          </h3>
          <ul className="jp-NexusTools-items">
            {prompts.map(p => (
              <PromptRow key={p.name} prompt={p} />
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
