/**
 * nexus-jupyter: the "Tools" sidebar of JupyterLab.
 *
 * Registers the panel in the left area and two palette commands:
 * "Tools: Open catalog" and "Tools: Search".
 */
import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { LabIcon } from '@jupyterlab/ui-components';

import { ToolsPanel } from './catalog';
import { NotebookFollower } from './following';
import { NotebookCases } from './notebook_cases';

const WRENCH_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M22.7 19l-9.1-9.1c.9-2.3.4-5-1.5-6.9-2-2-5-2.4-7.4-1.3L9 6 6 9 1.6 4.7C.4 7.1.9 10.1 2.9 12.1c1.9 1.9 4.6 2.4 6.9 1.5l9.1 9.1c.4.4 1 .4 1.4 0l2.3-2.3c.5-.4.5-1.1.1-1.4z"/>
</svg>`;

export const toolsIcon = new LabIcon({ name: 'nexus-jupyter:tools', svgstr: WRENCH_SVG });

/** Command ids, exported for tests and other extensions. */
export namespace CommandIDs {
  export const open = 'nexus-jupyter:open-catalog';
  export const search = 'nexus-jupyter:search';
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'nexus-jupyter:plugin',
  description: 'A sidebar to browse, search and try the tools of the nexus_jupyter registry.',
  autoStart: true,
  requires: [ILabShell],
  optional: [ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    labShell: ILabShell,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ) => {
    const panel = new ToolsPanel(new NotebookFollower(app, labShell));
    panel.title.icon = toolsIcon;
    panel.title.caption = 'Tools';
    panel.title.label = '';
    labShell.add(panel, 'left', { rank: 650 });
    // notebook tools' test cases, kept in the notebook's metadata
    new NotebookCases(labShell);
    restorer?.add(panel, 'nexus-jupyter-tools');

    app.commands.addCommand(CommandIDs.open, {
      label: 'Tools: Open catalog',
      caption: 'Show the Tools sidebar',
      icon: toolsIcon,
      execute: () => {
        labShell.activateById(panel.id);
      }
    });
    app.commands.addCommand(CommandIDs.search, {
      label: 'Tools: Search',
      caption: 'Show the Tools sidebar and focus its search box',
      execute: () => {
        labShell.activateById(panel.id);
        // The panel renders asynchronously the first time it is shown.
        requestAnimationFrame(() => panel.focusSearch());
      }
    });
    for (const command of [CommandIDs.open, CommandIDs.search]) {
      palette?.addItem({ command, category: 'Tools' });
    }
  }
};

export default plugin;
