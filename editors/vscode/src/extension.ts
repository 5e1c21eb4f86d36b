// The extension: one `templating lsp` for the window (the server handles every workspace folder),
// started over stdio through vscode-languageclient. Everything the editor shows (diagnostics,
// hover, completion, definition, references, quick fixes) comes from the server; this file only
// finds the executable, starts, restarts and stops it, and says clearly when it cannot.
import { spawn, type ChildProcess } from "node:child_process";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  type CloseHandlerResult,
  type ErrorHandlerResult,
  type LanguageClientOptions,
} from "vscode-languageclient/node";
import { findTemplating, type Found } from "./find";
import { PreviewPanel, type Shown } from "./preview";
import type { PreviewAnswer } from "./previewHtml";
import { onInterpreterChange, selectedInterpreter } from "./python";
import { documentSelector, selectorKey, type Folder } from "./selector";
import { workspaceUses, type FindFiles } from "./usage";

/** The documentation of this extension (installing `templating`, the settings). */
export const DOCS_URL = "https://agent-prompt-templating.github.io/agent-prompt-templating/editors/#vs-code";

const NAME = "templating";
// A server that exits this many times within CRASH_WINDOW is not started again until asked.
const MAX_CRASHES = 5;
const CRASH_WINDOW = 3 * 60_000;

/**
 * The language client, with its own notifications turned into log lines: it would show several
 * for one failure ("couldn't create connection", the stream's error, ...). The extension shows one,
 * saying what is wrong, with the way out (`complain`).
 */
class Client extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | "force"): void {
    super.error(message, data, false);
  }
}

class Server implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private process: ChildProcess | undefined;
  private stderrTail = "";
  private readonly told = new WeakSet<ChildProcess>(); // processes whose failure was shown
  private crashes: number[] = [];
  private key = "";
  private readonly toldMissing = new Set<string>(); // workspaces (their folders) told of a failed lookup
  private interpreter: string | undefined; // the one the last start looked in
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly output: vscode.OutputChannel) {}

  log(line: string): void {
    this.output.appendLine(`[extension ${new Date().toISOString()}] ${line}`);
  }

  /** A request of the server's own (the client flushes pending document changes first). */
  async request<T>(method: string, params: unknown): Promise<T> {
    const client = this.client;
    if (client === undefined || !client.isRunning()) {
      throw new Error("templating lsp is not running");
    }
    return client.sendRequest<T>(method, params);
  }

  /**
   * Stops the server if it runs, finds `templating` again and starts it (one at a time). `asked`:
   * the user asked for it (the command, the setting), so a failed lookup is shown even if it was.
   */
  restart(reason: string, asked = false): Promise<void> {
    this.queue = this.queue
      .then(() => this.doRestart(reason, asked))
      .catch((error) => this.log(`restart failed: ${error}`));
    return this.queue;
  }

  /** Restarts when the include globs of a folder changed (the document selector is fixed per client). */
  restartIfSelectorChanged(reason: string): void {
    if (selectorKey(folders()) !== this.key) {
      void this.restart(reason);
    }
  }

  /**
   * Restarts when the Python extension's selected interpreter is another one than last time, or
   * (`reason` given) when python.defaultInterpreterPath changed; not when templating.path is set.
   */
  async restartIfInterpreterChanged(reason?: string): Promise<void> {
    if (vscode.workspace.getConfiguration(NAME).get<string>("path", "").trim()) {
      return; // the setting decides
    }
    if (reason !== undefined) {
      await this.restart(reason);
      return;
    }
    const now = await selectedInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri, (l) => this.log(l));
    if (now !== this.interpreter) {
      await this.restart("the selected Python interpreter changed");
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(2000);
      } catch (error) {
        this.log(`the server did not stop cleanly: ${error}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  dispose(): void {
    void this.stop();
  }

  private async doRestart(reason: string, asked: boolean): Promise<void> {
    this.log(`starting the server (${reason})`);
    await this.stop();
    const workspace = folders();
    // Before the lookup: when it fails, saving pyproject.toml or changing folders (with the same
    // globs) does not look again (and complain again); the command and the setting do.
    this.key = selectorKey(workspace);
    const setting = vscode.workspace.getConfiguration(NAME).get<string>("path", "");
    const first = vscode.workspace.workspaceFolders?.[0];
    const interpreter = setting.trim() ? undefined : await selectedInterpreter(first?.uri, (l) => this.log(l));
    this.interpreter = interpreter;
    const lookup = await findTemplating({
      setting,
      folder: first?.uri.fsPath,
      folders: workspace.map((folder) => folder.fsPath),
      interpreter,
      defaultInterpreter: setting.trim() ? undefined : defaultInterpreterPath(),
      env: process.env,
      log: (l) => this.log(l),
    });
    if (lookup.kind === "missing" && !setting.trim()) {
      this.log(lookup.message);
      await this.notFound(lookup.message, workspace, asked);
      return;
    }
    if (lookup.kind !== "found") {
      this.log(lookup.message);
      this.tell(lookup.message, workspace, asked);
      return;
    }
    this.crashes = [];
    const found = lookup.found;
    const client = new Client(NAME, "templating", () => this.spawn(found), this.options(workspace, found));
    this.client = client;
    this.process = undefined;
    try {
      await client.start();
      this.log(`templating ${found.version} from ${found.source} is running`);
    } catch (error) {
      this.log(`the server did not start: ${error}`);
      const child = this.process as ChildProcess | undefined;
      await exited(child, 2000);
      if (this.client !== client || this.explainExit(found)) {
        return;
      }
      if (child === undefined || child.exitCode === null) {
        // Not started at all (the file cannot be run), or started and not answering.
        void complain(`templating lsp (from ${found.source}) did not start: ${error}`, this.output);
      } // else it exited: closed() restarts it, and says so when it keeps exiting
    }
  }

  /**
   * A `templating` found nowhere is shown only where it matters: the extension starts in every
   * Python, Markdown and plain-text workspace, most of which use neither ADK nor templating. Shown
   * when a bounded look at the workspace (usage.ts) finds that it uses one of them, once per
   * workspace unless the user asked for the restart; otherwise only logged.
   */
  private async notFound(message: string, workspace: readonly Folder[], asked: boolean): Promise<void> {
    if (this.toldMissing.has(workspaceKey(workspace)) && !asked) {
      this.log("already shown in this workspace: no notification");
      return;
    }
    const uses = await workspaceUses(
      workspace.map((folder) => folder.fsPath),
      findFiles,
    ).catch((error: unknown) => {
      this.log(`looking for ADK or templating in the workspace failed: ${error}`);
      return undefined;
    });
    if (uses === undefined) {
      this.log("nothing in the workspace uses Google ADK or templating: no notification");
      return;
    }
    this.log(`the workspace uses ${uses.what}: ${uses.file} ${uses.why}`);
    this.tell(`This workspace uses ${uses.what} (${uses.file} ${uses.why}), but ${message}`, workspace, asked);
  }

  /** Shows a failed lookup (with a way out: retry, the setting, the docs), once per workspace unless asked. */
  private tell(message: string, workspace: readonly Folder[], asked: boolean): void {
    const where = workspaceKey(workspace);
    if (this.toldMissing.has(where) && !asked) {
      this.log("already shown in this workspace: no notification");
      return;
    }
    this.toldMissing.add(where);
    this.log(`notification: ${message}`);
    void complain(message, this.output, { retry: true });
  }

  private async spawn(found: Found): Promise<ChildProcess> {
    this.stderrTail = "";
    const child = spawn(found.command, [...found.args, "lsp"], {
      cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      env: process.env,
      stdio: "pipe",
      windowsHide: true,
    });
    child.stderr.on("data", (data: Buffer) => {
      this.stderrTail = (this.stderrTail + data.toString("utf8")).slice(-4000);
    });
    child.on("exit", (code, signal) => this.log(`the server exited (${signal ?? `status ${code}`})`));
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    this.process = child;
    return child;
  }

  private options(workspace: readonly Folder[], found: Found): LanguageClientOptions {
    return {
      documentSelector: documentSelector(workspace),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      diagnosticCollectionName: NAME,
      markdown: { isTrusted: false, supportHtml: false },
      initializationFailedHandler: (error) => {
        this.log(`the server's initialization failed: ${error}`);
        return false; // stop; the failed start is reported once, by doRestart
      },
      errorHandler: {
        error: (error, _message, count) => this.connectionError(error, count),
        closed: () => this.closed(found),
      },
    };
  }

  private connectionError(error: Error, count: number | undefined): ErrorHandlerResult {
    if ((count ?? 0) <= 3) {
      return { action: ErrorAction.Continue, handled: true };
    }
    const message = `The connection to templating lsp keeps failing (${error.message}); the server is stopped. See the server log, then run "Templating: Restart Server".`;
    void complain(message, this.output);
    return { action: ErrorAction.Shutdown, message, handled: true };
  }

  /** The connection closed without being asked to: say why when it is known, restart otherwise. */
  private async closed(found: Found): Promise<CloseHandlerResult> {
    await exited(this.process, 2000);
    if (this.explainExit(found)) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < CRASH_WINDOW), now];
    if (this.crashes.length >= MAX_CRASHES) {
      const message = `templating lsp stopped ${MAX_CRASHES} times in 3 minutes and is not started again; see the server log, then run "Templating: Restart Server".`;
      this.log(message);
      void complain(message, this.output);
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.log("restarting the server after it stopped");
    return { action: CloseAction.Restart, handled: true };
  }

  /**
   * When the server exited because `templating` was installed without its `lsp` extra, says so
   * (once per process) and returns true: starting it again would not help.
   */
  private explainExit(found: Found): boolean {
    const child = this.process;
    if (child?.exitCode !== 2 || !this.stderrTail.includes("needs the lsp extra")) {
      return false;
    }
    if (!this.told.has(child)) {
      this.told.add(child);
      const message = `templating ${found.version} (from ${found.source}) has no language server: ${lastLine(this.stderrTail)}`;
      this.log(message);
      void complain(message, this.output);
    }
    return true;
  }
}

/** VS Code's file search over the workspace folders on disk, for usage.ts. */
const findFiles: FindFiles = async (include, exclude, maxResults) =>
  (await vscode.workspace.findFiles(include, exclude, maxResults))
    .filter((uri) => uri.scheme === "file")
    .map((uri) => uri.fsPath);

/** `python.defaultInterpreterPath` as the user set it (the Python extension's default is `python`). */
function defaultInterpreterPath(): string | undefined {
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  return vscode.workspace.getConfiguration("python", resource).get<string>("defaultInterpreterPath");
}

function workspaceKey(workspace: readonly Folder[]): string {
  return workspace.map((folder) => folder.fsPath).join("\n");
}

function folders(): Folder[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === "file")
    .map((folder) => ({ uri: folder.uri, fsPath: folder.uri.fsPath }));
}

function exited(child: ChildProcess | undefined, timeout: number): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeout);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function lastLine(text: string): string {
  return text.trim().split(/\r?\n/).pop() ?? "";
}

/** An error notification with the way out: retrying (when asked), the docs, the setting, the log. */
async function complain(message: string, output: vscode.OutputChannel, options = { retry: false }): Promise<void> {
  const retry = "Retry";
  const docs = "Open Documentation";
  const settings = "Set templating.path";
  const log = "Show Server Log";
  const choice = await vscode.window.showErrorMessage(message, ...(options.retry ? [retry] : []), docs, settings, log);
  if (choice === retry) {
    await vscode.commands.executeCommand("templating.restartServer");
  } else if (choice === docs) {
    await vscode.env.openExternal(vscode.Uri.parse(DOCS_URL));
  } else if (choice === settings) {
    await vscode.commands.executeCommand("workbench.action.openSettings", `${NAME}.path`);
  } else if (choice === log) {
    output.show(true);
  }
}

let server: Server | undefined;

/** What the extension gives other extensions (and its end-to-end tests): what the preview panel shows. */
export interface Api {
  preview: Shown;
}

export async function activate(context: vscode.ExtensionContext): Promise<Api> {
  const output = vscode.window.createOutputChannel("templating");
  const current = new Server(output);
  server = current;
  const panel = new PreviewPanel(
    (uri, agent) => current.request<PreviewAnswer>("templating/preview", { textDocument: { uri }, agent }),
    (line) => current.log(line),
  );
  context.subscriptions.push(
    output,
    current,
    panel,
    vscode.commands.registerCommand("templating.previewPrompt", async (uri?: string, agent?: string | null) => {
      const document = uri ?? vscode.window.activeTextEditor?.document.uri.toString();
      if (document === undefined) {
        void vscode.window.showInformationMessage("Open an agent's Python file to preview what its model sees.");
        return;
      }
      await panel.show(document, agent ?? null);
    }),
    vscode.commands.registerCommand("templating.restartServer", () =>
      current.restart("Templating: Restart Server", true),
    ),
    vscode.commands.registerCommand("templating.showServerLog", () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${NAME}.path`)) {
        void current.restart("the setting templating.path changed", true);
      } else if (event.affectsConfiguration("python.defaultInterpreterPath")) {
        void current.restartIfInterpreterChanged("the setting python.defaultInterpreterPath changed");
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => current.restartIfSelectorChanged("workspace folders changed")),
  );
  // A pyproject.toml whose `include` changed changes which documents reach the server.
  const watcher = vscode.workspace.createFileSystemWatcher("**/pyproject.toml");
  let pending: NodeJS.Timeout | undefined;
  const pyprojectChanged = () => {
    clearTimeout(pending);
    pending = setTimeout(() => current.restartIfSelectorChanged("the include globs changed"), 500);
  };
  context.subscriptions.push(
    watcher,
    watcher.onDidChange(pyprojectChanged),
    watcher.onDidCreate(pyprojectChanged),
    watcher.onDidDelete(pyprojectChanged),
    { dispose: () => clearTimeout(pending) },
  );
  const interpreterChanged = await onInterpreterChange(() => void current.restartIfInterpreterChanged());
  if (interpreterChanged !== undefined) {
    context.subscriptions.push(interpreterChanged);
  }
  await current.restart("activation");
  return { preview: panel.shown };
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
