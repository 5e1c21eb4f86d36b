// Which documents VS Code sends to the server: Python files, prompt files and pyproject.toml, on
// disk (the `file` scheme). Prompt files are the languages the server's default `include` globs
// open as (`*.prompt`, `*.prompt.md`, `*.prompt.txt`, `*.instruction.txt`: plain text, Markdown or
// VS Code's `prompt`), plus what each workspace folder's `[tool.templating] include` names.
// The server decides what it lints; other files of these languages get no findings.
import * as vscode from "vscode";
import type { DocumentSelector } from "vscode-languageclient/node";
import { includeGlobs } from "./globs";

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
