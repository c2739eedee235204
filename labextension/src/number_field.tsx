/**
 * A number or integer of the Try form as a text box (see numbers.ts): it takes whatever is
 * typed, puts the number into the call when the text is one, and says under the box why
 * not when it is not ("-" on the way to "-3", "1e" on the way to "1e5", "2*3", "abc").
 */
import type { FieldProps } from '@rjsf/utils';
import React from 'react';

import { numberKind, numberValue, readNumber } from './numbers';

function shown(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/**
 * An rjsf field (`"ui:field": "nexusNumber"`). The form's template frames it with the
 * description and the errors; rjsf leaves the label of a custom field to the field.
 */
export function NumberTextField(props: FieldProps): JSX.Element {
  const { formData, onChange, schema, idSchema, disabled, readonly, rawErrors, uiSchema } = props;
  const title = uiSchema?.['ui:title'] ?? schema.title ?? props.name;
  const kind = numberKind(schema as Record<string, any>) ?? 'number';
  const [text, setText] = React.useState(shown(formData));
  const [seen, setSeen] = React.useState<unknown>(formData);
  // What this box sent up and has not seen come back yet: the form hands each value back a
  // render later, by when the box may hold more ("1" arrives while the box says "1e").
  const sent = React.useRef<unknown[]>([]);
  if (!Object.is(seen, formData)) {
    // Worked out during the render that brings the new value (React's derived state), so
    // the box shows it in the same commit, not one effect later.
    setSeen(formData);
    const echo = sent.current.findIndex(v => Object.is(v, formData));
    if (echo !== -1) {
      sent.current = sent.current.slice(echo + 1);
    } else {
      sent.current = [];
      // A value put in from outside (a history entry, Reset): show it, unless the text
      // already means it ("1.50" for 1.5 stays as typed).
      if (numberValue(text, kind) !== formData) {
        setText(shown(formData));
      }
    }
  }
  const read = readNumber(text, kind);
  const problem = 'error' in read ? read.error : null;
  const reported = (rawErrors ?? []).length > 0; // the template lists them under the box
  return (
    <>
      {title && (
        <label className="jp-FormGroup-fieldLabel jp-NexusTools-numberLabel" htmlFor={idSchema.$id}>
          {title}
        </label>
      )}
      <input
        id={idSchema.$id}
        name={idSchema.$id}
        className="form-control jp-NexusTools-number"
        type="text"
        inputMode="decimal"
        autoComplete="off"
        spellCheck={false}
        placeholder={kind}
        value={text}
        disabled={disabled || readonly}
        aria-invalid={problem !== null}
        onChange={event => {
          const value = numberValue(event.target.value, kind);
          setText(event.target.value);
          sent.current = [...sent.current.slice(-20), value];
          onChange(value);
        }}
      />
      {problem && !reported && (
        <div className="jp-NexusTools-numberProblem" role="status">
          {problem}
        </div>
      )}
    </>
  );
}
