// The prompt preview as HTML for the side panel: what each agent's model sees on its first turn, as
// the server's `templating/preview` answers it. Pure functions (no VS Code), tested in src/test. Every
// text from the server is escaped; the page runs no script and loads nothing (its content security
// policy allows inline styles only).

/** One agent's preview, as `templating preview --format json` prints it. */
export interface AgentPreview {
  agent: string;
  order: number;
  path: string[];
  kind: string;
  reached: string;
  via: string | null;
  model: string | null;
  system_instruction: string | null;
  instruction_turn: string | null;
  tools: string[];
  reads: { key: string; source: string; by?: string; value?: string; optional?: boolean }[];
  exact: boolean;
  notes: string[];
  error: string | null;
  /** Why this is only what templating renders (google-adk not installed), and what needs the adk extra. */
  partial?: string | null;
}

/** The server's answer to `templating/preview`. */
export interface PreviewAnswer {
  target: string | null;
  mode: string;
  agents: AgentPreview[];
  notes: string[];
  error: string | null;
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

const HOW: Record<string, string> = {
  root: "the root agent",
  sequence: "runs in order in {via}",
  loop: "runs in {via}'s first iteration",
  parallel: "runs beside its siblings in {via}",
  transfer: "runs when {via}'s model transfers to it",
  agent_tool: "runs when {via}'s model calls it as a tool",
  workflow: "a node of the workflow {via}",
  custom: "runs under the custom agent {via}",
};

export function howReached(agent: AgentPreview): string {
  return (HOW[agent.reached] ?? agent.reached).replace("{via}", agent.via ?? "?");
}

/** A key the agent reads and where its value comes from, in words. */
export function describeRead(read: AgentPreview["reads"][number]): string {
  switch (read.source) {
    case "state":
      return `${read.key} (given)`;
    case "earlier":
      return `${read.key} (from ${read.by ?? "an earlier agent"})`;
    case "marker":
      return `${read.key} (set by ${read.by ?? "code"} at run time, shown as a marker)`;
    case "missing":
      return `${read.key} (MISSING: nobody supplies it, shown as ${read.value ?? "a marker"})`;
    default:
      return `${read.key} (not supplied; optional here)`;
  }
}

function block(title: string, text: string): string {
  return `<h3>${escapeHtml(title)}</h3><pre class="text">${escapeHtml(text)}</pre>`;
}

function agentHtml(agent: AgentPreview): string {
  const head = `${agent.order}. ${agent.agent}`;
  const where = [agent.path.join(" › "), howReached(agent), agent.model ? `model ${agent.model}` : ""]
    .filter((part) => part)
    .join(" · ");
  const parts = [`<section class="agent" data-agent="${escapeHtml(agent.agent)}">`];
  parts.push(`<h2>${escapeHtml(head)} <span class="kind">(${escapeHtml(agent.kind)})</span></h2>`);
  parts.push(`<p class="where">${escapeHtml(where)}</p>`);
  const partial = agent.partial ?? null;
  if (partial !== null) {
    parts.push(`<p class="inexact">Partial: ${escapeHtml(partial)}</p>`);
  } else if (!agent.exact) {
    parts.push(`<p class="inexact">Not exact: this may differ at run time (see the notes).</p>`);
  }
  if (agent.system_instruction === null && agent.error !== null) {
    parts.push(`<p class="error">No request: ${escapeHtml(agent.error)}</p>`);
  } else if (partial !== null) {
    const title = "Instructions (as templating renders them; not the exact system instruction)";
    parts.push(block(title, agent.system_instruction ?? ""));
  } else {
    parts.push(block("System instruction", agent.system_instruction ?? ""));
    if (agent.instruction_turn !== null) {
      parts.push(block("Instruction turn (a user turn before the user's message)", agent.instruction_turn));
    }
  }
  if (partial === null) {
    parts.push(`<p><b>Tools:</b> ${escapeHtml(agent.tools.join(", ") || "none")}</p>`);
  }
  const keys = agent.reads.map(describeRead).join("; ") || "none";
  parts.push(`<p><b>Keys:</b> ${escapeHtml(keys)}</p>`);
  if (agent.notes.length > 0) {
    parts.push(`<ul class="notes">${agent.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("")}</ul>`);
  }
  parts.push("</section>");
  return parts.join("\n");
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
pre.text { white-space: pre-wrap; word-break: break-word; padding: 6px 8px; border-left: 3px solid var(--vscode-textLink-foreground);
  background: var(--vscode-textCodeBlock-background); font-family: var(--vscode-editor-font-family); }
h2 { font-size: 1.15em; margin: 1.2em 0 0.2em; } h3 { font-size: 1em; margin: 0.8em 0 0.2em; }
.where { opacity: 0.8; margin-top: 0; } .kind { font-weight: normal; opacity: 0.8; }
.inexact, .error { color: var(--vscode-editorWarning-foreground); }`;

/** The whole page for a preview answer (`agent`: the agent the panel is for, or null for all). */
export function previewHtml(answer: PreviewAnswer, agent: string | null): string {
  const title = agent ? `What ${agent}'s model sees` : "What each agent's model sees";
  const body: string[] = [`<h1>${escapeHtml(title)}</h1>`];
  if (answer.error !== null) {
    body.push(`<p class="error">${escapeHtml(answer.error)}</p>`);
  } else {
    const modes: Record<string, string> = {
      static: "read from the code; none of it runs",
      partial: "read from the code without google-adk: partial, not the exact request",
    };
    const mode = modes[answer.mode] ?? "the app imported";
    body.push(`<p class="where">${escapeHtml(`${answer.target ?? ""} · ${mode}`)}</p>`);
    body.push(...answer.notes.map((note) => `<p class="where">${escapeHtml(note)}</p>`));
    body.push(...answer.agents.map(agentHtml));
    if (answer.agents.length === 0) {
      body.push("<p>No agent to preview.</p>");
    }
  }
  return [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">`,
    `<style>${STYLE}</style></head>`,
    `<body><main id="templating-preview">${body.join("\n")}</main></body></html>`,
  ].join("\n");
}
