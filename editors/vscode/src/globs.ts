// The `include` globs of a workspace folder's `[tool.templating]`, written as VS Code globs. Apart
// from selector.ts (which needs VS Code) so that the unit tests run in plain Node.js.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "smol-toml";

const MAX_PYPROJECT = 2_000_000; // bytes; a larger file is not read for its globs

/**
 * `[tool.templating] include` of the folder's `pyproject.toml`, as VS Code globs relative to the
 * folder. None when there is no such file, it is not TOML or has no such list: the server reports
 * what is wrong with its configuration.
 */
export function includeGlobs(folder: string): string[] {
  let text: string;
  try {
    const file = path.join(folder, "pyproject.toml");
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > MAX_PYPROJECT) {
      return [];
    }
    text = fs.readFileSync(file, "utf8");
  } catch {
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
  return globs.filter((glob): glob is string => typeof glob === "string" && glob.trim() !== "").map(toVsCodeGlob);
}

/**
 * A glob as `templating` reads it (git's syntax: without a `/` before its end it matches at any
 * depth; with one, from the folder) written as a VS Code glob relative to the folder.
 */
export function toVsCodeGlob(glob: string): string {
  let pattern = glob.trim();
  const folderOnly = pattern.endsWith("/");
  pattern = pattern.replace(/\/+$/, "");
  const anchored = pattern.includes("/");
  pattern = pattern.replace(/^\/+/, "");
  if (folderOnly) {
    pattern = `${pattern}/**`; // a folder: everything inside it
  }
  return anchored || pattern.startsWith("**/") ? pattern : `**/${pattern}`;
}
