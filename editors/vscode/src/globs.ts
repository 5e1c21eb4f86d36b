// The `include` globs of a workspace folder's `[tool.templating]`, written as VS Code globs. Apart
// from selector.ts (which needs VS Code) so that the unit tests run in plain Node.js.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "smol-toml";

const MAX_PYPROJECT = 2_000_000; // bytes; a larger file is not read for its globs

/** The folder's `pyproject.toml`, when it is a file of a sensible size. */
function readPyproject(folder: string): string | undefined {
  try {
    const file = path.join(folder, "pyproject.toml");
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > MAX_PYPROJECT) {
      return undefined;
    }
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * `[tool.templating] include` of the folder's `pyproject.toml`, as VS Code globs relative to the
 * folder. None when there is no such file, it is not TOML or has no such list: the server reports
 * what is wrong with its configuration.
 */
export function includeGlobs(folder: string): string[] {
  const text = readPyproject(folder);
  if (text === undefined) {
    return [];
  }
  let include: unknown;
  try {
    const data = parse(text) as { tool?: { templating?: { include?: unknown } } };
    include = data.tool?.templating?.include;
  } catch {
    return [];
  }
  const globs = typeof include === "string" ? [include] : Array.isArray(include) ? include : [];
  return globs
    .filter((glob): glob is string => typeof glob === "string" && glob.trim() !== "" && !glob.trim().startsWith("!"))
    .map(toVsCodeGlob);
}

/**
 * A glob as `templating` reads it (git's syntax: without a `/` before its end it matches at any
 * depth; with one, from the folder) written as a VS Code glob relative to the folder. A leading
 * `./` means the folder, as in `templating`. A `!` negation is not passed here: `includeGlobs`
 * leaves it out, as the selector cannot exclude (the server still reads it and skips those files).
 */
export function toVsCodeGlob(glob: string): string {
  // Index scans, not regular expressions or a loop of slices: each is linear in the glob's length
  // (`/\/+$/` retried the run of slashes from each of its slashes, quadratic on a long run).
  let pattern = glob.trim();
  let start = 0;
  while (pattern.startsWith("./", start)) {
    start += 2;
  }
  let end = pattern.length;
  while (end > start && pattern[end - 1] === "/") {
    end--;
  }
  const folderOnly = end < pattern.length;
  pattern = pattern.slice(start, end);
  const anchored = pattern.includes("/");
  let lead = 0;
  while (pattern[lead] === "/") {
    lead++;
  }
  pattern = pattern.slice(lead);
  if (folderOnly) {
    pattern = `${pattern}/**`; // a folder: everything inside it
  }
  return anchored || pattern.startsWith("**/") ? pattern : `**/${pattern}`;
}
