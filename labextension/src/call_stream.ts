/**
 * A call's progress as the server streams it. A call that asks for progress
 * (`"progress": true`) is answered with `application/x-ndjson` once the tool reports: one
 * JSON object a line, `{"progress": {current, total, message}}` for each report, and last
 * `{"result": ...}` or the error body with its `status` (nexus_jupyter/serve/jupyter_progress.py).
 * Pure apart from reading the response, so node can test it.
 */

/** One progress report of a running tool. */
export interface IProgress {
  current: number;
  total: number | null;
  message: string | null;
}

export const NDJSON = 'application/x-ndjson';

/** Splits text that arrives in pieces into whole lines, each parsed as JSON. */
export class LineReader {
  private rest = '';

  /** The lines `piece` completes. */
  push(piece: string): any[] {
    const lines = (this.rest + piece).split('\n');
    this.rest = lines.pop() ?? '';
    return lines.filter(line => line.trim()).map(line => JSON.parse(line));
  }

  /** A last line without its newline. */
  end(): any[] {
    const last = this.rest.trim();
    this.rest = '';
    return last ? [JSON.parse(last)] : [];
  }
}

/**
 * Read a streamed answer to its end, handing each report to `onProgress`; the last line
 * (`{"result": ...}` or the error body), or null when the stream stopped before it.
 */
export async function readCallStream(
  response: Response,
  onProgress: (progress: IProgress) => void
): Promise<any> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const lines = new LineReader();
  let last: any = null;
  const take = (line: any) => {
    if (line && typeof line === 'object' && 'progress' in line) {
      onProgress(line.progress as IProgress);
    } else {
      last = line;
    }
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    lines.push(decoder.decode(value, { stream: true })).forEach(take);
  }
  lines.push(decoder.decode()).forEach(take);
  lines.end().forEach(take);
  return last;
}

/** "4/10 7 to go", as the notebook's form labels its bar; "4 working" without a total. */
export function progressLabel(progress: IProgress): string {
  const count = (n: number) => String(Number.isInteger(n) ? n : Number(n.toPrecision(6)));
  const done = progress.total
    ? `${count(progress.current)}/${count(progress.total)}`
    : count(progress.current);
  return `${done} ${progress.message ?? ''}`.trim();
}

/** How far along the bar is, 0 to 1, or null when the tool gave no total. */
export function progressFraction(progress: IProgress): number | null {
  if (!progress.total || progress.total <= 0) {
    return null;
  }
  return Math.max(0, Math.min(1, progress.current / progress.total));
}
