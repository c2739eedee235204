/**
 * "Save as test" without the DOM: the expectation a call's outcome suggests, and the request
 * body the chosen kind and typed value make. Pure, so node can test it.
 */
import type { CallOutcome, IExpectation, IToolResult } from './api';

export type Kind = 'expect' | 'expect_error' | 'expect_subset' | 'check' | 'succeeds';

export const KINDS: [Kind, string][] = [
  ['expect', 'expect this result'],
  ['expect_error', 'expect an error containing'],
  ['expect_subset', 'expect these keys (subset)'],
  ['check', 'check (a Python expression)'],
  ['succeeds', 'just succeed']
];

/** What a case compares: the structured value, else the text content. */
export function resultValue(result: IToolResult): unknown {
  if (result.structured !== undefined && result.structured !== null) {
    return result.structured;
  }
  const texts = (result.content ?? []).filter(b => b.type === 'text').map(b => b.text ?? '');
  return texts.length ? texts.join('\n') : null;
}

/** The expectation a call's outcome suggests: its value, or its error. */
export function suggestedExpectation(outcome: CallOutcome | null): [Kind, string] {
  if (!outcome) {
    return ['succeeds', ''];
  }
  if (outcome.kind === 'result' && !outcome.result.is_error) {
    return ['expect', JSON.stringify(resultValue(outcome.result))];
  }
  // A refusal: the first field's own message with its path ("$.b: required argument is
  // missing"), which every refusal's message contains (the notebook's form suggests the same).
  const first = outcome.kind === 'validation' ? outcome.errors[0] : undefined;
  const message =
    outcome.kind === 'result'
      ? outcome.result.error ?? ''
      : outcome.kind === 'validation'
        ? first
          ? `${first.path}: ${first.message}`
          : outcome.message
        : '';
  const line = message.split(/\s+/).join(' ').slice(0, 80);
  return line ? ['expect_error', line] : ['succeeds', ''];
}

/** Turn the chosen kind and the typed value into the request's expectation. */
export function expectationOf(kind: Kind, text: string): IExpectation {
  if (kind === 'succeeds') {
    return {};
  }
  if (kind === 'expect_error' || kind === 'check') {
    return { [kind]: text.trim() };
  }
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    if (kind === 'expect_subset') {
      throw new Error(`The subset is not JSON: ${text}; write it like {"key": 1}.`);
    }
  }
  return { [kind]: value };
}

