/**
 * Pure helpers for what the panel shows: the `%tool call` line of a call, readable source
 * titles, and which string fields deserve a multi-line box. No DOM, so node can test them.
 */

const BARE = /^[\w./:@+-]+$/;

function bareValue(value: unknown): string | null {
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
    return JSON.stringify(value);
  }
  if (typeof value === 'string' && BARE.test(value)) {
    try {
      JSON.parse(value);
      return null; // "123" or "true" would come back as a number or a boolean
    } catch {
      return value;
    }
  }
  return null;
}

/**
 * The `%tool call` line that makes this call, to paste into a notebook cell: `key=value`
 * pairs when every value reads back as itself, else one JSON object (always one line).
 */
export function callCommand(name: string, args: Record<string, unknown>): string {
  const keys = Object.keys(args).filter(k => args[k] !== undefined);
  if (keys.length === 0) {
    return `%tool call ${name}`;
  }
  const bare = keys.map(k => [k, bareValue(args[k])] as const);
  if (bare.every(([, v]) => v !== null)) {
    return `%tool call ${name} ` + bare.map(([k, v]) => `${k}=${v}`).join(' ');
  }
  const picked: Record<string, unknown> = {};
  for (const k of keys) {
    picked[k] = args[k];
  }
  return `%tool call ${name} ${JSON.stringify(picked)}`;
}

/**
 * A source id as a group title: `directory:tools/dynamic` -> `Tools folder · tools/dynamic`,
 * `mcp:time` -> `MCP server · time`, `builtin` -> `Built-in`.
 */
export function sourceTitle(source: string): string {
  const at = source.indexOf(':');
  const kind = at < 0 ? source : source.slice(0, at);
  const rest = at < 0 ? '' : source.slice(at + 1);
  const kinds: Record<string, string> = {
    builtin: 'Built-in',
    notebook: 'Notebook',
    kernel: 'Notebook kernel',
    directory: 'Tools folder',
    mcp: 'MCP server',
    manifest: 'Declared in nex.yaml',
    config: 'Declared in nex.yaml',
    toolset: 'Toolset',
    skill: 'Skills',
    skills: 'Skills'
  };
  const label = kinds[kind] ?? kind.charAt(0).toUpperCase() + kind.slice(1);
  return rest ? `${label} · ${rest}` : label;
}

const MULTILINE_NAMES = ['command', 'code', 'script', 'content', 'body', 'text', 'prompt', 'source'];

/** Whether a string property gets a multi-line box (a shell command, code, long text). */
export function isMultiline(name: string, schema: Record<string, any>): boolean {
  if (schema?.type !== 'string' || schema.enum || schema.format === 'date-time') {
    return false;
  }
  const lower = name.toLowerCase();
  return (
    (schema.maxLength ?? 0) > 120 ||
    schema.format === 'textarea' ||
    schema.format === 'multiline' ||
    MULTILINE_NAMES.some(word => lower.includes(word))
  );
}

/**
 * The uiSchema of a tool's form: required fields titled with an asterisk, long strings as
 * text areas (numbers.ts adds the number fields).
 */
export function formUiSchema(schema: Record<string, any>): Record<string, any> {
  const ui: Record<string, any> = {};
  const required = new Set<string>(schema?.required ?? []);
  for (const [name, sub] of Object.entries<any>(schema?.properties ?? {})) {
    const entry: Record<string, any> = {};
    if (required.has(name)) {
      entry['ui:title'] = `${sub?.title ?? name} *`;
    }
    if (isMultiline(name, sub ?? {})) {
      entry['ui:widget'] = 'textarea';
      entry['ui:options'] = { rows: 3 };
    }
    if (Object.keys(entry).length) {
      ui[name] = entry;
    }
  }
  return ui;
}

/** The tools folders among a registry's sources (`directory:tools/dynamic` -> `tools/dynamic`). */
export function toolsFolders(sources: { name: string; kind?: string }[] | undefined): string[] {
  return (sources ?? [])
    .filter(s => (s.kind ?? s.name.split(':')[0]) === 'directory' && s.name.includes(':'))
    .map(s => s.name.slice(s.name.indexOf(':') + 1));
}

/** The label of the button that clears what hides every tool: the search, the toolset. */
export function clearLabel(query: string, toolset: string): string {
  if (query.trim() && toolset) {
    return 'Clear the search and show every toolset';
  }
  return query.trim() ? 'Clear the search' : 'Show every toolset';
}
