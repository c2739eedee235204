/**
 * Test cases of a notebook's tools live in the notebook's metadata
 * (`metadata.nexus_jupyter.tests`). The kernel keeps them while it runs and opens a comm
 * (target `nexus_jupyter.tests`); this side answers with the cases the notebook's model holds
 * (unsaved edits included) and, when the kernel saves a case, puts the new list into the
 * model's metadata and saves the notebook. Without this extension the kernel writes the file
 * itself (see nexus_jupyter/notebook/test_cases.py).
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
  context: { path: string; save(): Promise<void>; model?: IModelLike };
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
        comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
          const data = msg.content.data as { type?: string; tests?: unknown[] };
          if (data?.type === 'tests' && Array.isArray(data.tests) && panel.model) {
            withCases(panel.model, data.tests);
            void panel.context.save();
          }
        };
        comm.send({ type: 'cases', tests: casesOf(panel.model) } as any);
      });
    };
    attach(panel.sessionContext.session?.kernel);
    panel.sessionContext.kernelChanged.connect((_sender, args) => attach(args.newValue));
  }

  private readonly _panels = new WeakSet<INotebookPanelLike>();
  private readonly _kernels = new WeakSet<Kernel.IKernelConnection>();
}
