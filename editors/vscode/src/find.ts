// Which `templating` to run: the `templating.path` setting; then the environment of the Python
// interpreter selected in the Python extension (when it is installed), the interpreter the setting
// `python.defaultInterpreterPath` names, the workspace folders' own virtual environments (`.venv`,
// `venv`); then `templating` on PATH. Each candidate is asked its version (`--version`), so a
// missing or too old one is reported before the server starts.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The oldest `templating` whose language server this extension speaks to. */
export const MIN_VERSION = "0.1.0";

/** A command that runs `templating` (the server is `command ...args lsp`). */
export interface Command {
  command: string;
  args: string[];
  /** Where it came from, for messages: "the setting templating.path", "PATH", ... */
  source: string;
}

/** A `templating` that answered `--version`. */
export interface Found extends Command {
  version: string;
}

export type Lookup =
  | { kind: "found"; found: Found }
  | { kind: "too-old"; found: Found; message: string }
  | { kind: "missing"; message: string };

export interface Places {
  /** `templating.path`, as written in the settings ("" when unset). */
  setting: string;
  /** The first workspace folder, against which a relative setting is read. */
  folder: string | undefined;
  /** The selected Python interpreter's executable, when the Python extension names one. */
  interpreter: string | undefined;
  /**
   * `python.defaultInterpreterPath` as written in the settings of the first folder (`~`,
   * `${workspaceFolder}`, `${userHome}` and `${env:NAME}` are expanded; a relative path is read from
   * the first folder, a bare name on PATH); undefined, "" or the default `python`: none.
   */
  defaultInterpreter?: string;
  /** The workspace folders (the first one first): the virtual environments in each are looked in. */
  folders?: readonly string[];
  /** The PATH to search, and PATHEXT on Windows. */
  env: NodeJS.ProcessEnv;
  /** Messages for the server log. */
  log: (line: string) => void;
}

const INSTALL = "pip install 'agent-prompt-templating[lsp]'";

/** Finds `templating`, in the order the Python extension's users expect. */
export async function findTemplating(places: Places): Promise<Lookup> {
  const setting = places.setting.trim();
  if (setting) {
    // A path the user chose is the one to use: never silently another one.
    const command = resolveSetting(setting, places.folder, places.env);
    const source = `the setting templating.path (${setting})`;
    if (command === undefined) {
      return { kind: "missing", message: `templating was not found: ${source} names no executable file.` };
    }
    const answer = await askVersion({ command, args: [], source }, places);
    if (typeof answer === "string") {
      return { kind: "missing", message: `templating could not be run from ${source}: ${answer}` };
    }
    return checkVersion(answer);
  }
  const tried: string[] = [];
  const interpreters: [string, string, string][] = []; // [python, source, where it was looked for]
  if (places.interpreter) {
    const source = `the selected Python interpreter (${places.interpreter})`;
    const where = `in the selected Python interpreter's environment (${places.interpreter})`;
    interpreters.push([places.interpreter, source, where]);
  }
  const named = defaultInterpreter(places);
  if (named !== undefined && named !== places.interpreter) {
    const source = `python.defaultInterpreterPath (${named})`;
    interpreters.push([named, source, `in the environment of python.defaultInterpreterPath (${named})`]);
  }
  for (const [python, source, where] of interpreters) {
    // -P (Python 3.11+, which templating requires): the working directory (the workspace folder)
    // is not put on sys.path, so a `templating/` package of the workspace is never run instead.
    // The server is started with the same arguments.
    const answer = await askVersion({ command: python, args: ["-P", "-m", "templating"], source }, places);
    if (typeof answer !== "string") {
      return checkVersion(answer);
    }
    places.log(`not in ${source}: ${answer}`);
    tried.push(where);
  }
  const broken: string[] = [];
  for (const file of venvCandidates(places.folders ?? (places.folder ? [places.folder] : []))) {
    if (!executable(file)) {
      continue;
    }
    const source = `the workspace's virtual environment (${file})`;
    const answer = await askVersion({ command: file, args: [], source }, places);
    if (typeof answer !== "string") {
      return checkVersion(answer);
    }
    places.log(`${file} could not be run: ${answer}`);
    broken.push(`in ${file} (which could not be run: ${answer})`);
  }
  tried.push(...(broken.length ? broken : ["in the workspace's .venv or venv"]));
  const onPath = which("templating", places.env);
  if (onPath !== undefined) {
    const answer = await askVersion({ command: onPath, args: [], source: `PATH (${onPath})` }, places);
    if (typeof answer !== "string") {
      return checkVersion(answer);
    }
    return { kind: "missing", message: `templating on PATH (${onPath}) could not be run: ${answer}` };
  }
  tried.push("on PATH");
  places.log(`templating is not on PATH: ${places.env.PATH ?? places.env.Path ?? "(no PATH)"}`);
  return {
    kind: "missing",
    message: `templating was not found ${tried.join(" nor ")}. Install it with ${INSTALL} in the project's environment, or set templating.path.`,
  };
}

/** The virtual environments' `templating` looked for in each folder, in order. */
export const VENVS = [".venv", "venv"];

function venvCandidates(folders: readonly string[]): string[] {
  const inVenv = process.platform === "win32" ? ["Scripts", "templating.exe"] : ["bin", "templating"];
  return folders.flatMap((folder) => VENVS.map((venv) => path.join(folder, venv, ...inVenv)));
}

/** The interpreter `python.defaultInterpreterPath` names, as a file; undefined for none or the default. */
export function defaultInterpreter(
  places: Pick<Places, "defaultInterpreter" | "folders" | "env"> & { folder?: string },
): string | undefined {
  const folder = places.folder ?? places.folders?.[0];
  let value = (places.defaultInterpreter ?? "").trim();
  if (!value || value === "python") {
    return undefined; // the Python extension's default: whatever `python` is on PATH, not a choice
  }
  const variables = /\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g;
  value = value.replace(variables, (_, name: string, variable?: string) =>
    variable !== undefined ? (places.env[variable] ?? "") : name === "userHome" ? os.homedir() : (folder ?? ""),
  );
  if (value === "~" || value.startsWith("~/") || value.startsWith("~\\")) {
    value = path.join(os.homedir(), value.slice(1));
  }
  if (!value.includes("/") && !value.includes("\\")) {
    return which(value, places.env);
  }
  const full = path.isAbsolute(value) ? value : path.resolve(folder ?? process.cwd(), value);
  return executable(full) ? full : undefined;
}

function checkVersion(found: Found): Lookup {
  if (found.version === "unknown") {
    // A checkout run without being installed says "unknown": it is as new as its sources.
    return { kind: "found", found };
  }
  if (compareVersions(found.version, MIN_VERSION) < 0) {
    return {
      kind: "too-old",
      found,
      message: `templating ${found.version} from ${found.source} is too old: the extension needs ${MIN_VERSION} or later (${INSTALL} --upgrade).`,
    };
  }
  return { kind: "found", found };
}

/**
 * Compares two versions by their release numbers (PEP 440's `1.2.3`; anything after them, such as
 * `rc1` or `.dev0`, is ignored): negative when `a` is older, 0 when equal, positive when newer.
 */
export function compareVersions(a: string, b: string): number {
  const numbers = (v: string) => (/^\s*v?(\d+(?:\.\d+)*)/.exec(v)?.[1] ?? "0").split(".").map(Number);
  const [x, y] = [numbers(a), numbers(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return 0;
}

/** Runs `command --version`; the version it prints, or why it could not be had. */
function askVersion(command: Command, places: Places): Promise<Found | string> {
  return new Promise((resolve) => {
    execFile(
      command.command,
      [...command.args, "--version"],
      { cwd: places.folder, env: places.env, timeout: 30_000, windowsHide: true },
      (error, stdout, stderr) => {
        const out = String(stdout).trim();
        if (error) {
          const said = String(stderr).trim().split(/\r?\n/).pop() || error.message;
          resolve(said);
          return;
        }
        // `templating 0.1.0` (the version is the last word).
        const match = /^templating\s+(\S+)$/m.exec(out);
        if (!match) {
          resolve(`\`--version\` printed ${JSON.stringify(out.slice(0, 200))}, not "templating VERSION"`);
          return;
        }
        places.log(`found templating ${match[1]} from ${command.source}`);
        resolve({ ...command, version: match[1] });
      },
    );
  });
}

/** The setting as an executable file: `~` expanded, relative to the folder, or a name on PATH. */
function resolveSetting(setting: string, folder: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  let value = setting;
  if (value === "~" || value.startsWith("~/") || value.startsWith("~\\")) {
    value = path.join(os.homedir(), value.slice(1));
  }
  if (!value.includes("/") && !value.includes("\\")) {
    return which(value, env);
  }
  const full = path.isAbsolute(value) ? value : path.resolve(folder ?? process.cwd(), value);
  return executable(full) ? full : undefined;
}

/** The first executable `name` on the PATH (with PATHEXT's extensions on Windows). */
export function which(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? "").split(path.delimiter).filter(Boolean);
  const extensions =
    process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)] : [""];
  for (const dir of dirs) {
    for (const extension of extensions) {
      const candidate = path.join(dir, name + extension);
      if (executable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function executable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, process.platform === "win32" ? fs.constants.F_OK : fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
