// Which documents VS Code sends to the server: Python files, prompt files and pyproject.toml, on
// disk (the `file` scheme). Prompt files are the languages the server's default `include` globs
// open as (`*.prompt`, `*.prompt.md`, `*.prompt.txt`, `*.instruction.txt`: plain text, Markdown or
// VS Code's `prompt`), plus what each workspace folder's `[tool.templating] include` names.
// The server decides what it lints; other files of these languages get no findings.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "smol-toml";
import * as vscode from "vscode";
import type { DocumentSelector } from "vscode-languageclient/node";

const LANGUAGES = ["python", "markdown", "plaintext", "prompt"];
const PATTERNS = ["**/*.prompt", "**/pyproject.toml"];

export interface Folder {
  uri: vscode.Uri;
  fsPath: string;
}

/** The document selector for these workspace folders. */
export function documentSelector(folders: readonly Folder[]): DocumentSelector {
  const selector: DocumentSelector = [
    ...LANGUAGES.map((language) => ({ scheme: "file", language })),
    ...PATTERNS.map((pattern) => ({ scheme: "file", pattern })),
  ];
  for (const folder of folders) {
    for (const glob of includeGlobs(folder.fsPath)) {
      // vscode-languageclient 9 types a filter's pattern as a string (LSP 3.17) but hands it to
      // VS Code as it is, and VS Code takes a RelativePattern there: relative to this folder.
      const pattern = new vscode.RelativePattern(folder.uri, glob) as unknown as string;
      selector.push({ scheme: "file", pattern });
    }
  }
  return selector;
}

/** A key that changes when the selector would: the include globs of each folder. */
export function selectorKey(folders: readonly Folder[]): string {
  return JSON.stringify(folders.map((folder) => [folder.uri.toString(), includeGlobs(folder.fsPath)]));
}

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
