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
  // The text is the box's own (an uncontrolled input: React never writes it back, so no
  // render that lags the keys can undo one); it takes the value when the box is made, and
  // the form is made anew when a value comes from outside (Reset, a history entry:
  // tryform.tsx). Later changes of formData are this box's typing coming back. `text`
  // follows the box, for the message under it.
  const [text, setText] = React.useState(shown(formData));
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
        defaultValue={text}
        disabled={disabled || readonly}
        aria-invalid={problem !== null}
        onChange={event => {
          setText(event.target.value);
          onChange(numberValue(event.target.value, kind));
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
