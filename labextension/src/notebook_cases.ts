/**
 * Test cases of a notebook's tools live in the notebook's metadata
 * (`metadata.nexus_jupyter.tests`). The kernel keeps them while it runs and opens a comm
 * (target `nexus_jupyter.tests`); this side answers with the cases the notebook's model holds
 * (unsaved edits included) and, when the kernel saves a case, puts the new list into the
 * model's metadata, saves the notebook and says `saved` (or `save-failed`). Without this
 * extension the kernel writes the file itself (see nexus_jupyter/notebook/test_cases.py).
 *
 * A page loaded while the kernel already runs (a reload) never sees the kernel's first comm,
 * which led to the page before: when the kernel has a comm of that target open, this side
 * opens one of its own, and the kernel sends the cases there from then on.
 *
 * Notebook panels are found by shape in the main area (like following.ts), so the extension
 * does not need the whole notebook package for this.
 */
import type { ILabShell } from '@jupyterlab/application';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

export const COMM_TARGET = 'nexus_jupyter.tests';
const METADATA_KEY = 'nexus_jupyter';

interface IModelLike {
  getMetadata(key: string): any;
  setMetadata(key: string, value: any): void;
}

interface ISessionContextLike {
  session: { kernel: Kernel.IKernelConnection | null } | null;
  kernelChanged: {
    connect(fn: (sender: unknown, args: { newValue: Kernel.IKernelConnection | null }) => void): void;
  };
}

interface INotebookPanelLike {
  context: { path: string; save(): Promise<void>; model?: IModelLike; ready?: Promise<void> };
  sessionContext: ISessionContextLike;
  model: IModelLike | null;
}

function asNotebookPanel(widget: unknown): INotebookPanelLike | null {
  const panel = widget as Partial<INotebookPanelLike> | null;
  if (
    typeof panel?.context?.path === 'string' &&
    panel.context.path.endsWith('.ipynb') &&
    panel.sessionContext !== undefined &&
    typeof (panel.model as IModelLike | null)?.getMetadata === 'function'
  ) {
    return panel as INotebookPanelLike;
  }
  return null;
}

/** The cases a notebook model holds (a list of case mappings). */
export function casesOf(model: IModelLike | null): unknown[] {
  const ours = model?.getMetadata(METADATA_KEY);
  return Array.isArray(ours?.tests) ? ours.tests : [];
}

/** Put `tests` into the model's metadata, keeping whatever else is under our key. */
export function withCases(model: IModelLike, tests: unknown[]): void {
  const ours = model.getMetadata(METADATA_KEY);
  const current = ours && typeof ours === 'object' ? ours : {};
  model.setMetadata(METADATA_KEY, { ...current, tests });
}

/** Answers the kernels of open notebooks (see the module docstring). */
export class NotebookCases {
  constructor(labShell: ILabShell) {
    const scan = () => {
      for (const widget of labShell.widgets('main')) {
        const panel = asNotebookPanel(widget);
        if (panel && !this._panels.has(panel)) {
          this._panels.add(panel);
          this.follow(panel);
        }
      }
    };
    labShell.layoutModified.connect(scan);
    labShell.currentChanged.connect(scan);
    scan();
  }

  private follow(panel: INotebookPanelLike): void {
    const attach = (kernel: Kernel.IKernelConnection | null | undefined) => {
      if (!kernel || this._kernels.has(kernel)) {
        return;
      }
      this._kernels.add(kernel);
      kernel.registerCommTarget(COMM_TARGET, (comm: Kernel.IComm) => {
        keepCases(panel, comm);
        comm.send({ type: 'cases', tests: casesOf(panel.model) } as any);
      });
      void reconnect(panel, kernel);
    };
    attach(panel.sessionContext.session?.kernel);
    panel.sessionContext.kernelChanged.connect((_sender, args) => attach(args.newValue));
  }

  private readonly _panels = new WeakSet<INotebookPanelLike>();
  private readonly _kernels = new WeakSet<Kernel.IKernelConnection>();
}

/** Write the lists of cases the kernel sends on `comm` into the notebook and save it. */
function keepCases(panel: INotebookPanelLike, comm: Kernel.IComm): void {
  comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
    const data = msg.content.data as { type?: string; tests?: unknown[] };
    if (data?.type === 'tests' && Array.isArray(data.tests) && panel.model) {
      withCases(panel.model, data.tests);
      panel.context.save().then(
        () => comm.send({ type: 'saved', count: data.tests!.length } as any),
        (err: unknown) => comm.send({ type: 'save-failed', error: String((err as Error)?.message ?? err) })
      );
    }
  };
}

/**
 * A kernel that runs with the extension loaded already (this page was reloaded, or the
 * notebook opened again) opened its comm to a page that is gone: open one from here.
 */
async function reconnect(panel: INotebookPanelLike, kernel: Kernel.IKernelConnection): Promise<void> {
  try {
    await panel.context.ready; // the cases it holds are read from the file first
    const reply = await kernel.requestCommInfo({ target_name: COMM_TARGET });
    const comms = (reply.content as { comms?: Record<string, unknown> }).comms ?? {};
    if (reply.content.status !== 'ok' || Object.keys(comms).length === 0 || kernel.isDisposed) {
      return; // the extension is not loaded there yet: its comm will come to us
    }
    const comm = kernel.createComm(COMM_TARGET);
    keepCases(panel, comm);
    comm.open({ type: 'cases', tests: casesOf(panel.model) } as any);
  } catch (err) {
    console.warn('nexus-jupyter: could not reach the kernel for test cases', err);
  }
}
