// Whether a workspace uses Google ADK or templating: then a missing `templating` is worth a
// notification (elsewhere, in the many Python workspaces that use neither, it is only logged).
// A bounded look: a few manifests (`pyproject.toml`, `requirements*.txt`) and Python files found
// by the editor's file search (at most LIMITS.files of each, with node_modules and virtual
// environments left out), the first LIMITS.bytes of each read, and LIMITS.total bytes in all.
// A file whose real path is outside every workspace folder (a link out) is not read, nor is one that
// is not a regular file (a FIFO is never waited on). Apart from extension.ts (which gives it VS
// Code's file search) so that the unit tests run in plain Node.js.
import * as fs from "node:fs";
import * as path from "node:path";

export interface Limits {
  /** Files of each kind (manifests, then `agent.py` files, then other Python files) asked of the search. */
  files: number;
  /** Bytes read from the start of one file. */
  bytes: number;
  /** Bytes read in all. */
  total: number;
}

export const LIMITS: Limits = { files: 200, bytes: 64 * 1024, total: 4 * 1024 * 1024 };

/** What the search leaves out: dependencies, virtual environments, caches and builds. */
export const EXCLUDE =
  "**/{node_modules,.venv,venv,.env,env,site-packages,.git,.hg,.tox,.nox,__pycache__,.mypy_cache,.ruff_cache,build,dist}/**";

/**
 * The editor's file search (`vscode.workspace.findFiles`): the paths of at most `maxResults` files
 * matching `include` and not `exclude`, globs relative to the workspace folders.
 */
export type FindFiles = (include: string, exclude: string, maxResults: number) => Promise<string[]>;

/** What a file says: the workspace uses `what` ("Google ADK" or "templating") because the file `why`. */
export interface Use {
  what: "Google ADK" | "templating";
  why: string;
}

/** Where the workspace says it uses ADK or templating: a file (relative to its folder) and what it says. */
export interface Usage extends Use {
  file: string;
}

// One line each (a TOML header or an import is one line): `[ \t]`, never `\s`, which would take
// line breaks too and make a file of blank lines quadratic.
const ADK_IMPORT =
  /^[ \t]*(?:from[ \t]+google\.adk\b|import[ \t]+google\.adk\b|from[ \t]+google[ \t]+import[ \t]+(?:\([ \t]*)?(?:\w+[ \t]*,[ \t]*)*adk\b)/m;
const TEMPLATING_IMPORT = /^[ \t]*(?:from|import)[ \t]+templating\b/m;
const ADK_DEPENDENCY = /(?:^|["'\s,[])google[-_.]adk\b/im;
const TEMPLATING_DEPENDENCY = /\bagent[-_.]prompt[-_.]templating\b/i;
const TEMPLATING_TABLE = /^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*templating[ \t]*[\].]/m;

/** What a Python file's text says: it imports google.adk, or templating; undefined when neither. */
export function pythonUses(text: string): Use | undefined {
  if (ADK_IMPORT.test(text)) {
    return { what: "Google ADK", why: "imports google.adk" };
  }
  if (TEMPLATING_IMPORT.test(text)) {
    return { what: "templating", why: "imports templating" };
  }
  return undefined;
}

/** What a `pyproject.toml` or requirements file says: the `[tool.templating]` table, or a dependency. */
export function manifestUses(name: string, text: string): Use | undefined {
  if (name === "pyproject.toml" && TEMPLATING_TABLE.test(text)) {
    return { what: "templating", why: "has a [tool.templating] table" };
  }
  if (TEMPLATING_DEPENDENCY.test(text)) {
    return { what: "templating", why: "names agent-prompt-templating" };
  }
  if (ADK_DEPENDENCY.test(text)) {
    return { what: "Google ADK", why: "names google-adk" };
  }
  return undefined;
}

/**
 * Whether the workspace uses ADK or templating: the first file that says so (manifests first, then
 * `agent.py` files, ADK's convention, then other Python files), or undefined. `folders`: the
 * workspace folders, to name a file relative to the one holding it.
 */
export async function workspaceUses(
  folders: readonly string[],
  findFiles: FindFiles,
  limits: Limits = LIMITS,
): Promise<Usage | undefined> {
  let budget = limits.total;
  const seen = new Set<string>();
  const roots = folders.map(real).filter((root): root is string => root !== undefined);
  const kinds: [string, (file: string, text: string) => Use | undefined][] = [
    ["**/{pyproject.toml,requirements*.txt,requirements/*.txt}", (file, text) => manifestUses(path.basename(file), text)],
    ["**/agent.py", (_, text) => pythonUses(text)],
    ["**/*.py", (_, text) => pythonUses(text)],
  ];
  for (const [include, says] of kinds) {
    const files = (await findFiles(include, EXCLUDE, limits.files)).slice(0, limits.files);
    for (const file of files) {
      if (budget <= 0) {
        return undefined;
      }
      if (seen.has(file)) {
        continue;
      }
      seen.add(file);
      const where = real(file);
      if (where === undefined || !roots.some((root) => inside(where, root))) {
        continue; // a link out of the workspace is not followed
      }
      const text = readStart(file, Math.min(limits.bytes, budget));
      budget -= Buffer.byteLength(text);
      const use = says(file, text);
      if (use !== undefined) {
        return { ...use, file: shown(file, folders) };
      }
    }
  }
  return undefined;
}

/** The first `bytes` bytes of a regular file, as text ("" when it cannot be read). */
export function readStart(file: string, bytes: number): string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    if (!fs.fstatSync(fd).isFile()) {
      return ""; // a FIFO or a device: never waited on
    }
    const buffer = Buffer.alloc(bytes);
    const read = fs.readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read).toString("utf8");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) {
      fs.closeSync(fd);
    }
  }
}

function real(file: string): string | undefined {
  try {
    return fs.realpathSync(file);
  } catch {
    return undefined;
  }
}

function inside(file: string, root: string): boolean {
  const relative = path.relative(root, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

function shown(file: string, folders: readonly string[]): string {
  for (const folder of folders) {
    const relative = path.relative(folder, file);
    if (relative && !relative.startsWith("..") && !path.isAbsolute(relative)) {
      return relative.split(path.sep).join("/");
    }
  }
  return file;
}
