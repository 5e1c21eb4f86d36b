// The "Preview prompt" side panel: what an agent's model sees on its first turn (or every agent's of
// the app), asked of the server (`templating/preview`) for a document, and asked again as the user
// edits any document of the workspace (unsaved text included: the server reads the editor's buffers).
import * as vscode from "vscode";
import { previewHtml, type PreviewAnswer } from "./previewHtml";

/** How long an edit waits for the next keystroke before the preview is asked again. */
export const PREVIEW_DEBOUNCE_MS = 60;

export type Ask = (uri: string, agent: string | null) => Promise<PreviewAnswer>;

/** What the panel shows, for tests (the extension's API) and the log. */
export interface Shown {
  uri: string;
  agent: string | null;
  answer: PreviewAnswer | undefined;
  updates: number; // answers shown so far
  version: number; // the edit count of the workspace when the answer shown was asked
}

export class PreviewPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private timer: NodeJS.Timeout | undefined;
  private asked = 0; // requests made; an older answer than the last shown is dropped
  private shownRequest = 0;
  private edits = 0;
  private readonly disposables: vscode.Disposable[] = [];
  readonly shown: Shown = { uri: "", agent: null, answer: undefined, updates: 0, version: 0 };

  constructor(
    private readonly ask: Ask,
    private readonly log: (line: string) => void,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (this.panel !== undefined && event.contentChanges.length > 0 && this.follows(event.document)) {
          this.edits += 1;
          this.schedule();
        }
      }),
    );
  }

  /** Opens (or reuses) the panel beside the editor for `uri` and `agent` (null: every agent). */
  async show(uri: string, agent: string | null): Promise<void> {
    this.shown.uri = uri;
    this.shown.agent = agent;
    const title = agent ? `Prompt: ${agent}` : "Prompts";
    if (this.panel === undefined) {
      this.panel = vscode.window.createWebviewPanel(
        "templating.preview",
        title,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false, enableFindWidget: true, localResourceRoots: [] },
      );
      this.panel.onDidDispose(() => {
        this.panel = undefined;
        clearTimeout(this.timer);
      });
    } else {
      this.panel.title = title;
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    await this.refresh();
  }

  /** Whether an edit of `document` may change the preview: a file of the same workspace folder. */
  private follows(document: vscode.TextDocument): boolean {
    if (document.uri.scheme !== "file") {
      return false;
    }
    const shownFolder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(this.shown.uri));
    const folder = vscode.workspace.getWorkspaceFolder(document.uri);
    return shownFolder !== undefined && folder !== undefined && folder.uri.toString() === shownFolder.uri.toString();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), PREVIEW_DEBOUNCE_MS);
  }

  private async refresh(): Promise<void> {
    const request = ++this.asked;
    const version = this.edits;
    const { uri, agent } = this.shown;
    let answer: PreviewAnswer;
    try {
      answer = await this.ask(uri, agent);
    } catch (error) {
      answer = { target: null, mode: "static", agents: [], notes: [], error: `the server did not answer: ${error}` };
    }
    if (request < this.shownRequest || this.panel === undefined) {
      return; // a later answer is shown already, or the panel is closed
    }
    this.shownRequest = request;
    this.shown.answer = answer;
    this.shown.updates += 1;
    this.shown.version = version;
    this.panel.webview.html = previewHtml(answer, agent);
    this.log(`preview of ${agent ?? "every agent"} shown (${answer.agents.length} agent(s))`);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.panel?.dispose();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}
