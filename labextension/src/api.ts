/**
 * Client of the nexus_jupyter REST API under `/nexus/api/` on the Jupyter server.
 *
 * Every request goes through `ServerConnection.makeRequest`, which adds the token
 * and the XSRF header the server requires for POSTs.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IProgress, NDJSON, readCallStream } from './call_stream';

/** One row of the catalog (`GET tools`). */
export interface IToolEntry {
  name: string;
  description: string;
  source: string;
  source_kind: string;
  /** The toolset it belongs to (`files`, `shell`, a nex.yaml toolset), or empty. */
  toolset?: string;
  permission: string;
  categories: string[];
  capabilities: string[];
  status: string;
  reason: string | null;
  /** Sources of the tools this one shadows. */
  shadowed: string[];
  /** Set on the row of a tool that lost a name clash: the winner's source. */
  shadowed_by?: string | null;
  /** A conflict (sources of one rank define the name, e.g. two notebooks): the others. */
  conflicts_with?: string[];
  version?: string | null;
  score?: number | null;
  /** Where its code lives: a file path, or `cell:<id>` for a notebook's tool. */
  origin?: string | null;
  /** A live kernel's tool: the notebook (server-relative path) that defines it. */
  notebook?: string | null;
  /** A tool file written by `%tool export`: the notebook it came from. */
  exported_from?: string | null;
  /** ... and the live kernel (`kernel:<notebook>`) that exported it, while that kernel lives. */
  exported_by?: string | null;
  /** Its saved test cases' state (null: it has none). */
  tests?: ITestRow | null;
  /** Its file failed to reload and the last good version runs: what the file says. */
  stale?: string | null;
}

/** A tool's test state as a catalog row carries it. */
export interface ITestRow {
  state: TestState;
  summary: string;
  cases: number;
  counts?: Record<string, number>;
  /** The case that broke since the tool last passed, described. */
  broke?: string | null;
}

/** none, pending (not run yet), running, or how the last run went. */
export type TestState =
  | 'none'
  | 'pending'
  | 'running'
  | 'passed'
  | 'failed'
  | 'error'
  | 'skipped';

/** One case's outcome in a run. */
export interface ICaseOutcome {
  case: Record<string, unknown>;
  where: string;
  label: string;
  state: 'passed' | 'failed' | 'error' | 'skipped';
  message: string;
  duration: number;
  version: string;
  /** Skipped: its call needs an approval a test run does not give (`message` says which). */
  needs_approval?: boolean;
}

/** A tool's full test status (`GET tools/{name}`). */
export interface ITestStatus {
  tool: string;
  state: TestState;
  cases: number;
  counts: Record<string, number>;
  summary: string;
  version: string;
  finished_at: number | null;
  first_failure: ICaseOutcome | null;
  broke: ICaseOutcome | null;
  problem: string | null;
  outcomes: ICaseOutcome[];
}

/** A tool's call figures on this server since it started. */
export interface IToolStats {
  tool: string;
  calls: number;
  errors: number;
  refused: number;
  /** Calls their caller cancelled (in `calls`, not in `errors`; absent from older servers). */
  cancelled?: number;
  error_rate: number;
  p50_ms: number | null;
  p95_ms: number | null;
  max_ms: number | null;
  last_call: number | null;
}

/** What a saved case expects; exactly one key, or none (the call must succeed). */
export interface IExpectation {
  expect?: unknown;
  expect_error?: string;
  expect_subset?: unknown;
  check?: string;
}

/** The answer of `GET tools`. */
export interface IToolList {
  tools: IToolEntry[];
  total: number;
  suggestions: string[];
  /** Services the query names that no installed tool works with (why it found nothing). */
  unserved?: string[];
  /** The query as search read it, misspelt words corrected ("serach" -> "search"). */
  searched_for?: string;
}

/** One version of a tool, newest first (`GET tools/{name}`). */
export interface IToolVersion {
  version: string;
  source?: string;
  time?: number | null;
  current?: boolean;
  /** File versions only: 1 for the oldest, a summary of the change and what wrote it. */
  number?: number;
  summary?: string;
  event?: string;
}

/** The answer of `GET tools/{name}`: the spec plus where it stands. */
export interface IToolDetails {
  name: string;
  description: string;
  input_schema: Record<string, any>;
  output_schema?: Record<string, any> | null;
  permission: string;
  categories: string[];
  capabilities: string[];
  requires_credentials: string[];
  source: string;
  version?: string | null;
  status: string;
  reason: string | null;
  shadowed: { source: string; version?: string | null }[];
  versions: IToolVersion[];
  /** What policy decides for a call from this panel: allow, ask (approve first) or deny. */
  call_policy?: { action: 'allow' | 'ask' | 'deny'; reason: string } | null;
  /** Its saved test cases and how their last run went. */
  tests?: ITestStatus | null;
  /** Its file failed to reload and the last good version runs: what the file says. */
  stale?: string | null;
  /** Its calls on this server (null before the first). */
  stats?: IToolStats | null;
  /** A live kernel's tool only: the calls its notebook made in the kernel, as reported. */
  notebook_stats?: IToolStats | null;
  [key: string]: any;
}

/** One invalid argument reported by the server (`422`). */
export interface IFieldError {
  path: string;
  loc?: (string | number)[];
  message: string;
  value?: unknown;
}

/** A content block of a tool result (MCP style). */
export interface IContentBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  [key: string]: unknown;
}

/** `ToolResult.to_dict()`. */
export interface IToolResult {
  tool: string;
  structured?: unknown;
  content?: IContentBlock[];
  error?: string | null;
  error_type?: string | null;
  is_error: boolean;
  duration: number;
  /** A failure: the traceback of the tool's own code (cell or file, and line). */
  traceback?: string | null;
  /** Warnings about the call (its file failed to reload, so the last good version ran). */
  notes?: string[];
  /** The call in one human-readable line ("Calculating: 2 add 3"), secrets masked. */
  summary?: string;
  [key: string]: unknown;
}

/** What a call can end with, as the panel needs to show it. */
export type CallOutcome =
  | { kind: 'result'; result: IToolResult }
  | { kind: 'validation'; message: string; errors: IFieldError[] }
  | { kind: 'approval'; message: string; why?: string }
  | { kind: 'denied'; message: string }
  | { kind: 'cancelled'; message: string }
  | { kind: 'error'; status: number; message: string };

/** One source in `GET status`. */
export interface ISourceStatus {
  name: string;
  kind?: string;
  tools?: number;
  error?: string | null;
  details?: Record<string, any> | null;
  [key: string]: unknown;
}

/** One toolset in `GET status`: its tools, where it comes from, whether it is on. */
export interface IToolsetRow {
  toolset: string;
  enabled: boolean;
  origin: string;
  tools: string[];
  approval: string;
  error?: string | null;
  [key: string]: unknown;
}

/** The answer of `GET status`. */
export interface IStatus {
  sources: ISourceStatus[];
  tools: number;
  toolsets?: IToolsetRow[];
  [key: string]: unknown;
}

/** A registry change pushed on the event stream. */
export interface IChangedEvent {
  type: 'changed';
  added: string[];
  removed: string[];
  updated: string[];
  sources: string[];
  /** Tools whose test status changed (a run started or finished). */
  tests?: string[];
}

/** Filters of `GET tools`. */
export interface IListQuery {
  q?: string;
  source?: string;
  permission?: string;
  category?: string;
  capability?: string;
  status?: string;
  toolset?: string;
  offset?: number;
  limit?: number;
}

/** An HTTP answer that is not 2xx, with the server's JSON body when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: any
  ) {
    super(message);
  }
}

const API = 'nexus/api';
/** The header that names the sidebar as the caller's face. */
export const FACE_HEADER = 'X-Nexus-Face';

/**
 * A request to `nexus/api/PATH`; the JSON answer, or an `ApiError`. With `onProgress`, an
 * answer the server streams (a call's progress, see call_stream.ts) hands it each report
 * and gives its last line.
 */
export async function request(
  path: string,
  init: RequestInit = {},
  settings = ServerConnection.makeSettings(),
  onProgress?: (progress: IProgress) => void
): Promise<any> {
  const url = URLExt.join(settings.baseUrl, API, path);
  // Says the call comes from this panel, whose user is shown how to allow a refused call
  // (serve/jupyter_caller.py); a plain REST client is not.
  const headers = new Headers(init.headers);
  headers.set(FACE_HEADER, 'sidebar');
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, { ...init, headers }, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  if (onProgress && response.ok && response.headers.get('Content-Type')?.startsWith(NDJSON)) {
    const last = await readCallStream(response, onProgress);
    if (last && 'result' in last) {
      return last.result;
    }
    const status = last?.status ?? 502;
    throw new ApiError(status, last?.message ?? 'The server ended the answer early.', last ?? {});
  }
  const text = await response.text();
  let body: any = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = { message: text };
    }
  }
  if (!response.ok) {
    const message = body?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message, body);
  }
  return body;
}

/** Search and filter the catalog. */
export function listTools(query: IListQuery = {}): Promise<IToolList> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') {
      params.set(key, String(value));
    }
  }
  const qs = params.toString();
  return request('tools' + (qs ? `?${qs}` : ''));
}

/**
 * The spec, status and versions of one tool; `source`: the tool that source defines under
 * the name (one of a conflict, or a shadowed one), not the name's winner.
 */
export function getTool(name: string, source?: string | null): Promise<IToolDetails> {
  const query = source ? `?source=${encodeURIComponent(source)}` : '';
  return request(`tools/${encodeURIComponent(name)}${query}`);
}

/** Sources and their errors. */
export function getStatus(): Promise<IStatus> {
  return request('status');
}

/** Save a call as a test case of the tool (beside its file, or where its cases live). */
export async function saveTest(
  name: string,
  args: Record<string, unknown>,
  expectation: IExpectation
): Promise<{ saved: string; tests: ITestStatus }> {
  return request(`tools/${encodeURIComponent(name)}/tests`, {
    method: 'POST',
    body: JSON.stringify({ arguments: args, ...expectation })
  });
}

/** Run the tool's saved cases now. */
export async function runTests(name: string): Promise<{ tests: ITestStatus }> {
  return request(`tools/${encodeURIComponent(name)}/tests/run`, { method: 'POST', body: '{}' });
}

/**
 * Call a tool; every expected failure comes back as an outcome, not an exception.
 * `approved`: true after the user approved this call, `'always'` to approve the tool for the
 * rest of the server's session.
 *
 * Aborting `signal` closes the request, and the server cancels the call when its client
 * goes away: the tool really stops (an async tool at its next await, a sync tool when it
 * checks `ctx.cancelled`).
 *
 * `onProgress` gets the tool's progress reports while it runs. `source`: call the tool
 * that source defines under the name (one of a conflict, or a shadowed one).
 */
export async function callTool(
  name: string,
  args: Record<string, unknown>,
  approved: boolean | 'always' = false,
  signal?: AbortSignal,
  onProgress?: (progress: IProgress) => void,
  source?: string | null
): Promise<CallOutcome> {
  try {
    const body = {
      arguments: args,
      approved,
      ...(onProgress ? { progress: true } : {}),
      ...(source ? { source } : {})
    };
    const init = { method: 'POST', body: JSON.stringify(body), signal };
    const path = `tools/${encodeURIComponent(name)}/call`;
    const result = await request(path, init, ServerConnection.makeSettings(), onProgress);
    return { kind: 'result', result };
  } catch (error) {
    if (signal?.aborted) {
      return { kind: 'cancelled', message: 'Cancelled: the server stopped the call.' };
    }
    if (!(error instanceof ApiError)) {
      return { kind: 'error', status: 0, message: String(error) };
    }
    const body = error.body ?? {};
    if (error.status === 422 && Array.isArray(body.errors)) {
      return { kind: 'validation', message: error.message, errors: body.errors };
    }
    if (error.status === 409 && body.error === 'approval_required') {
      // `why`: the policy's reason for asking (a rule in nex.yaml, the tool's own flag)
      const why = typeof body.why === 'string' ? body.why : undefined;
      return { kind: 'approval', message: error.message, why };
    }
    if (error.status === 403) {
      return { kind: 'denied', message: error.message };
    }
    return { kind: 'error', status: error.status, message: error.message };
  }
}

/**
 * Follow the server's registry changes, and which tools were called, over a WebSocket,
 * reconnecting with backoff.
 *
 * Returns a function that closes the stream for good.
 */
export function followChanges(
  onChange: (event: IChangedEvent) => void,
  onConnection: (connected: boolean) => void = () => undefined,
  onCalls: (tools: string[]) => void = () => undefined
): () => void {
  const settings = ServerConnection.makeSettings();
  let socket: WebSocket | null = null;
  let closed = false;
  let delay = 500;
  let timer: number | undefined;

  const connect = () => {
    let url = URLExt.join(settings.wsUrl, API, 'events');
    if (settings.token) {
      // Browsers cannot set headers on a WebSocket; cookies or the token in the query authenticate.
      url += `?token=${encodeURIComponent(settings.token)}`;
    }
    socket = new settings.WebSocket(url);
    socket.onopen = () => {
      delay = 500;
      onConnection(true);
    };
    socket.onmessage = msg => {
      try {
        const data = JSON.parse(msg.data);
        if (data && data.type === 'changed') {
          onChange(data as IChangedEvent);
        } else if (data && data.type === 'calls' && Array.isArray(data.tools)) {
          // Tools called since the server last looked, by anyone (an MCP client, REST, a form).
          onCalls(data.tools as string[]);
        }
      } catch (error) {
        console.error('nexus-jupyter: bad event from the server', error);
      }
    };
    socket.onclose = () => {
      onConnection(false);
      if (!closed) {
        timer = window.setTimeout(connect, delay);
        delay = Math.min(delay * 2, 10000);
      }
    };
  };
  connect();
  return () => {
    closed = true;
    window.clearTimeout(timer);
    socket?.close();
  };
}
