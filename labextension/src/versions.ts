/**
 * The one id a tool's version is shown by. For a tool file with a saved history that is the
 * number and hash of its saved version (`#3 97c1a6b626`): what `%tool versions` lists,
 * `%tool info` shows and `%tool rollback` takes. Other tools have only their content hash.
 * Pure, so node can test it.
 */
import type { IToolVersion } from './api';

/** `#3 97c1a6b626` for a tool file's current saved version, else `v<hash>`; null: none. */
export function currentVersionLabel(tool: {
  version?: string | null;
  versions: IToolVersion[];
}): string | null {
  const saved = tool.versions.find(v => v.current && v.number !== undefined);
  if (saved) {
    return `#${saved.number} ${String(saved.version).slice(0, 12)}`;
  }
  return tool.version ? `v${tool.version.slice(0, 12)}` : null;
}
