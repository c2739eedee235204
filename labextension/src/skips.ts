/**
 * What the sidebar says about a skipped test case. A case whose call needs an approval is
 * skipped by every test run the sidebar starts (nobody can approve a server-side run); the
 * server says why, and this says what the user can do about it from here. Pure, so node can
 * test it.
 */
import type { ICaseOutcome } from './api';

/** Text, and commands to show as code. */
export type AdvicePart = { text: string } | { code: string };

/**
 * How to run a case that `needs_approval`: with `%tool test NAME --yes` in the tool's own
 * notebook (`notebook`: a live kernel's tool, whose tests run in its kernel), else in any
 * notebook or with `nexus-tools test NAME --yes` in a terminal. `[]` for any other outcome.
 */
export function approvalAdvice(outcome: ICaseOutcome, notebook: string | null): AdvicePart[] {
  if (!outcome.needs_approval) {
    return [];
  }
  const tool = String(outcome.case?.tool ?? '');
  const lead = { text: 'The sidebar cannot approve a test call. Run ' };
  const inNotebook = { code: `%tool test ${tool} --yes` };
  if (notebook) {
    return [lead, inNotebook, { text: ` in ${notebook} to approve it.` }];
  }
  return [
    lead,
    inNotebook,
    { text: ' in a notebook, or ' },
    { code: `nexus-tools test ${tool} --yes` },
    { text: ' in a terminal, to approve it.' }
  ];
}
