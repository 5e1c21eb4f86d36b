// The Python interpreter selected in the Python extension (ms-python.python), through its public
// `environments` API. Everything here is optional: without that extension, or with a version that
// has no such API, there is no interpreter and `templating` is looked for on PATH.
import * as vscode from "vscode";

// The part of the Python extension's API used here (@vscode/python-extension describes all of it).
interface EnvironmentPath {
  readonly id: string;
  readonly path: string;
}
interface ResolvedEnvironment {
  readonly executable: { readonly uri: vscode.Uri | undefined };
}
interface Environments {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

const PYTHON = "ms-python.python";

async function environments(): Promise<Environments | undefined> {
  const extension = vscode.extensions.getExtension(PYTHON);
  if (extension === undefined) {
    return undefined;
  }
  const api = (extension.isActive ? extension.exports : await extension.activate()) as
    | { environments?: Partial<Environments> }
    | undefined;
  const envs = api?.environments;
  if (typeof envs?.getActiveEnvironmentPath !== "function" || typeof envs.resolveEnvironment !== "function") {
    return undefined;
  }
  return envs as Environments;
}

/** The selected interpreter's executable for `resource` (a workspace folder), if there is one. */
export async function selectedInterpreter(
  resource: vscode.Uri | undefined,
  log: (line: string) => void,
): Promise<string | undefined> {
  try {
    const envs = await environments();
    if (envs === undefined) {
      return undefined;
    }
    const selected = envs.getActiveEnvironmentPath(resource);
    const resolved = await envs.resolveEnvironment(selected);
    const executable = resolved?.executable.uri?.fsPath;
    log(`the Python extension's selected interpreter: ${executable ?? `none resolved from ${selected.path}`}`);
    return executable;
  } catch (error) {
    log(`the Python extension's interpreter could not be read: ${String(error)}`);
    return undefined;
  }
}

/** Calls `listener` when the selected interpreter changes (nothing without the Python extension). */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const envs = await environments();
    if (typeof envs?.onDidChangeActiveEnvironmentPath !== "function") {
      return undefined;
    }
    return envs.onDidChangeActiveEnvironmentPath(() => listener());
  } catch {
    return undefined;
  }
}
