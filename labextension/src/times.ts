/**
 * Times as the notebook shows them (`%tool history`, `%tool versions`): a 24-hour clock,
 * `22:43:08`, and `2026-11-27 22:47:27`, whatever the browser's locale, so the sidebar and
 * the notebook read alike side by side. Pure, so node can test it.
 */

const two = (n: number): string => String(n).padStart(2, '0');

/** `22:43:08`: the local time of day of `at`. */
export function clockTime(at: Date): string {
  return `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}

/** `2026-11-27 22:47:27`: the local date and time of `at`. */
export function dateTime(at: Date): string {
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${clockTime(at)}`;
}
