/**
 * The calls lines of a tool's details: its calls through this server and, for a live
 * kernel's tool, the calls its notebook made in its own kernel (`%tool call`, a form, Python),
 * which the kernel reports and the server never sees. The two never overlap: a call from
 * this panel runs in the kernel too, but counts on the server line only. Pure, so node can
 * test it.
 */
import type { IToolStats } from './api';

/** One line: its text, its tooltip, and whether it only says "none yet". */
export interface ICallsLine {
  text: string;
  title: string;
  empty: boolean;
}

function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) {
    return '-';
  }
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

function figures(stats: IToolStats): string {
  const rate = Math.round(stats.error_rate * 100);
  const refused = stats.refused ? `, ${stats.refused} refused` : '';
  // a cancel is the caller's doing: counted in the calls, not as a failure
  const cancelled = stats.cancelled ? `, ${stats.cancelled} cancelled` : '';
  return `${stats.calls}, ${stats.errors} failed (${rate}%)${refused}${cancelled}, p50 ${ms(stats.p50_ms)}, p95 ${ms(stats.p95_ms)}`;
}

function called(stats: IToolStats | null | undefined): stats is IToolStats {
  return !!stats && (stats.calls > 0 || stats.refused > 0);
}

/**
 * "Calls on this server: 12, 1 failed (8%), p50 2.1 ms, p95 9.8 ms", then, when `notebook`
 * names the notebook of a kernel's tool, "Calls from demo.ipynb: 3, 0 failed (0%), ...".
 */
export function callsLines(
  server: IToolStats | null | undefined,
  notebook?: { name: string; stats: IToolStats | null | undefined } | null
): ICallsLine[] {
  const serverTitle = notebook
    ? 'Calls through this server (this panel, MCP clients, REST) since it started; latency over the last 1,000 calls'
    : 'Since the server started; latency over the last 1,000 calls';
  const lines: ICallsLine[] = [
    called(server)
      ? { text: `Calls on this server: ${figures(server)}`, title: serverTitle, empty: false }
      : { text: 'No calls on this server yet.', title: serverTitle, empty: true }
  ];
  if (notebook) {
    const name = notebook.name.split('/').pop() || notebook.name;
    const title =
      `Calls ${notebook.name} made in its own kernel (%tool call, a form, Python), as the kernel ` +
      'last reported them (within a second); calls from this panel count on the server line';
    lines.push(
      called(notebook.stats)
        ? { text: `Calls from ${name}: ${figures(notebook.stats)}`, title, empty: false }
        : { text: `No calls from ${name} yet.`, title, empty: true }
    );
  }
  return lines;
}
