// The preview panel's page: every text from the server escaped, each agent's texts exact, no script.
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeRead, escapeHtml, previewHtml, type AgentPreview, type PreviewAnswer } from "../previewHtml";

function agent(overrides: Partial<AgentPreview> = {}): AgentPreview {
  return {
    agent: "writer",
    order: 1,
    path: ["pipeline", "writer"],
    kind: "LlmAgent",
    reached: "sequence",
    via: "pipeline",
    model: "gemini-2.5-flash",
    system_instruction: 'Write about <topic> & "cats".\n\nYou are an agent. Your internal name is "writer".',
    instruction_turn: null,
    tools: ["get_weather"],
    reads: [{ key: "topic", source: "state" }],
    exact: true,
    notes: [],
    error: null,
    ...overrides,
  };
}

function answer(agents: AgentPreview[], overrides: Partial<PreviewAnswer> = {}): PreviewAnswer {
  return { target: "/w/app", mode: "static", agents, notes: [], error: null, ...overrides };
}

describe("previewHtml", () => {
  it("escapes what the server sends and keeps each text whole", () => {
    const page = previewHtml(answer([agent()]), "writer");
    assert.ok(page.includes(escapeHtml(agent().system_instruction ?? "")));
    assert.ok(page.includes("Write about &lt;topic&gt; &amp; &quot;cats&quot;.\n\nYou are an agent."));
    assert.ok(!page.includes("<topic>"));
  });

  it("runs no script and loads nothing", () => {
    const page = previewHtml(answer([agent({ agent: "<script>alert(1)</script>" })]), null);
    assert.ok(!page.includes("<script>"));
    assert.ok(page.includes(`content="default-src 'none'; style-src 'unsafe-inline';"`));
  });

  it("shows the instruction turn, the keys, the notes and whether it is exact", () => {
    const page = previewHtml(
      answer([
        agent({
          instruction_turn: "fenced <<<BEGIN>>>",
          reads: [{ key: "draft", source: "missing", value: "⟨missing: draft⟩" }],
          exact: false,
          notes: ["its instruction is a provider"],
        }),
      ]),
      null,
    );
    assert.ok(page.includes("Instruction turn"));
    assert.ok(page.includes("fenced &lt;&lt;&lt;BEGIN&gt;&gt;&gt;"));
    assert.ok(page.includes("draft (MISSING: nobody supplies it, shown as ⟨missing: draft⟩)"));
    assert.ok(page.includes("Not exact"));
    assert.ok(page.includes("<li>its instruction is a provider</li>"));
  });

  it("says why there is no preview", () => {
    const page = previewHtml(answer([], { error: "no ADK app holds an agent of this file" }), null);
    assert.ok(page.includes('<p class="error">no ADK app holds an agent of this file</p>'));
  });

  it("marks a preview made without google-adk partial, with what needs the extra", () => {
    const partial = "google-adk is not installed: not the exact request; needs the adk extra: the tool declarations";
    const page = previewHtml(
      answer([agent({ system_instruction: "Write about cats.", exact: false, tools: [], partial })], {
        mode: "partial",
      }),
      null,
    );
    assert.ok(page.includes(`<p class="inexact">Partial: ${partial}</p>`));
    assert.ok(page.includes("Instructions (as templating renders them; not the exact system instruction)"));
    assert.ok(!page.includes("<h3>System instruction</h3>"));
    assert.ok(!page.includes("Not exact"));
    assert.ok(!page.includes("<b>Tools:</b>"));
    assert.ok(page.includes("partial, not the exact request"));
  });
});

describe("describeRead", () => {
  const table: [string, AgentPreview["reads"][number], string][] = [
    ["given", { key: "k", source: "state" }, "k (given)"],
    ["an earlier agent's", { key: "k", source: "earlier", by: "w" }, "k (from w)"],
    ["optional, absent", { key: "k", source: "absent" }, "k (not supplied; optional here)"],
  ];
  for (const [name, read, expected] of table) {
    it(name, () => assert.equal(describeRead(read), expected));
  }
});
