/**
 * The sidebar follows the notebook: which notebook is current (the last one focused in the
 * main area), and the jumps from a tool to its code: "Go to cell" for a tool a notebook
 * defines, "Open file" for a tool file.
 *
 * Notebooks are reached through the document manager's commands and read by shape (a
 * widget with `context.path` and `content.widgets`), so the extension does not need the
 * whole notebook package for three properties.
 */
import { ILabShell, JupyterFrontEnd } from '@jupyterlab/application';
import { PageConfig } from '@jupyterlab/coreutils';
import { ISignal, Signal } from '@lumino/signaling';

import { serverRelativePath } from './notebook_tools';

interface ICellLike {
  model: { id: string };
  node: HTMLElement;
}

interface INotebookLike {
  widgets: readonly ICellLike[];
  activeCellIndex: number;
  mode?: string;
  deselectAll?: () => void;
  scrollToItem?: (index: number, align?: string) => Promise<void>;
}

interface INotebookPanelLike {
  context: { path: string; ready?: Promise<void>; pathChanged?: ISignal<unknown, string> };
  content: INotebookLike;
  revealed?: Promise<void>;
}

function asNotebookPanel(widget: unknown): INotebookPanelLike | null {
  const panel = widget as Partial<INotebookPanelLike> | null;
  const path = panel?.context?.path;
  if (typeof path === 'string' && path.endsWith('.ipynb') && panel?.content?.widgets) {
    return panel as INotebookPanelLike;
  }
  return null;
}

/** Tracks the current notebook and opens tools' code. */
export class NotebookFollower {
  constructor(
    private readonly app: JupyterFrontEnd,
    labShell: ILabShell
  ) {
    labShell.currentChanged.connect(() => this.update(labShell.currentWidget));
    this.update(labShell.currentWidget);
  }

  /** The server-relative path of the current notebook, or null when none is open. */
  get path(): string | null {
    return this._path;
  }

  /** Emits the new path when the current notebook changes. */
  get changed(): ISignal<this, string | null> {
    return this._changed;
  }

  private update(widget: unknown): void {
    const panel = asNotebookPanel(widget);
    // Focus moving to a console or a text file keeps the last notebook: the panel follows
    // notebooks, and a sidebar that emptied on every click elsewhere would be useless.
    if (!panel) {
      return;
    }
    if (panel !== this._panel) {
      // Renaming the notebook (or its folder) changes its path, not the current widget.
      this._panel?.context.pathChanged?.disconnect(this.onRenamed, this);
      panel.context.pathChanged?.connect(this.onRenamed, this);
      this._panel = panel;
    }
    this.follow(panel.context.path);
  }

  private onRenamed(_context: unknown, path: string): void {
    this.follow(path);
  }

  private follow(path: string): void {
    if (path !== this._path) {
      this._path = path;
      this._changed.emit(this._path);
    }
  }

  /**
   * Open `notebook` (server-relative) and select the cell with id `cellId`, scrolled into
   * view. Resolves to false when the notebook has no such cell (it was deleted).
   */
  async goToCell(notebook: string, cellId: string): Promise<boolean> {
    const widget = await this.app.commands.execute('docmanager:open', { path: notebook });
    const panel = asNotebookPanel(widget);
    if (!panel) {
      return false;
    }
    await panel.context.ready;
    await panel.revealed;
    const index = panel.content.widgets.findIndex(cell => cell.model.id === cellId);
    if (index < 0) {
      return false;
    }
    const notebookWidget = panel.content;
    notebookWidget.deselectAll?.();
    notebookWidget.activeCellIndex = index;
    if (notebookWidget.mode !== undefined) {
      notebookWidget.mode = 'command';
    }
    if (notebookWidget.scrollToItem) {
      await notebookWidget.scrollToItem(index, 'center');
    } else {
      notebookWidget.widgets[index].node.scrollIntoView({ block: 'center' });
    }
    this.app.shell.activateById((widget as { id: string }).id);
    return true;
  }

  /** Open a tool file given by its absolute path (it must be under the server's root). */
  async openFile(absolutePath: string): Promise<boolean> {
    const path = serverRelativePath(absolutePath, PageConfig.getOption('serverRoot'));
    if (path === null) {
      return false;
    }
    await this.app.commands.execute('docmanager:open', { path });
    return true;
  }

  private _path: string | null = null;
  private _panel: INotebookPanelLike | null = null;
  private readonly _changed = new Signal<this, string | null>(this);
}
