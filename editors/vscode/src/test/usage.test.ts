// Whether a workspace uses Google ADK or templating (then a missing templating is shown), read in a
// bounded look: the file search's results, capped, the start of each file, a total budget.
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { EXCLUDE, LIMITS, manifestUses, pythonUses, workspaceUses, type Limits } from "../usage";
import { inWorker, MB } from "./hostile";

describe("pythonUses", () => {
  const table: [string, string, string | undefined][] = [
    ["an ADK agent", "from google.adk.agents import LlmAgent\n", "Google ADK"],
    ["import google.adk", "import os\nimport google.adk.runners as runners\n", "Google ADK"],
    ["from google import adk", "from google import adk\n", "Google ADK"],
    ["adk among other names", "from google import genai, adk\n", "Google ADK"],
    ["indented (in a function)", "def main():\n    from google.adk import Agent\n", "Google ADK"],
    ["templating", "from templating import Template\n", "templating"],
    ["a templating module", "import templating.lint\n", "templating"],
    ["genai only", "from google import genai\nfrom google.genai import types\n", undefined],
    ["a package named alike", "from google.adkx import y\nimport templating_extras\n", undefined],
    ["a comment", "# from google.adk.agents import LlmAgent\n", undefined],
    ["neither", "import json\nprint('from google.adk')\n", undefined],
  ];
  for (const [name, text, what] of table) {
    it(name, () => assert.equal(pythonUses(text)?.what, what));
  }
});

describe("manifestUses", () => {
  const table: [string, string, string, string | undefined][] = [
    ["a [tool.templating] table", "pyproject.toml", "[tool.templating]\nselect = ['T001']\n", "templating"],
    ["only a sub-table", "pyproject.toml", "[ tool.templating.per-file-ignores ]\n", "templating"],
    ["a dependency on templating", "pyproject.toml", 'dependencies = ["agent-prompt-templating[lsp]>=0.1"]\n', "templating"],
    ["a dependency on google-adk", "pyproject.toml", '[project]\ndependencies = ["google-adk>=1.0", "x"]\n', "Google ADK"],
    ["google-adk in requirements", "requirements.txt", "requests\ngoogle-adk==1.2.0\n", "Google ADK"],
    ["google_adk", "requirements-dev.txt", "google_adk\n", "Google ADK"],
    ["another tool named alike", "pyproject.toml", "[tool.templating-other]\n", undefined],
    ["a package named alike", "requirements.txt", "not-google-adk\n", undefined],
    ["the table in a requirements file is not TOML", "requirements.txt", "[tool.templating]\n", undefined],
    ["neither", "pyproject.toml", '[project]\nname = "x"\ndependencies = ["jinja2"]\n', undefined],
  ];
  for (const [name, file, text, what] of table) {
    it(name, () => assert.equal(manifestUses(file, text)?.what, what));
  }
});

/** A workspace folder holding `files` (path -> text). */
function folderWith(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "templating-usage-"));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/**
 * A file search over `folder` that answers each include with the files listed for it (in order),
 * as VS Code's would, and records what it was asked. `ignoreMax`: return them all whatever the cap.
 */
function search(folder: string, answers: Record<string, string[]>, ignoreMax = false) {
  const asked: { include: string; exclude: string; maxResults: number }[] = [];
  const find = async (include: string, exclude: string, maxResults: number) => {
    asked.push({ include, exclude, maxResults });
    const kind = include.includes("agent.py") ? "agent" : include.endsWith("*.py") ? "python" : "manifest";
    const files = (answers[kind] ?? []).map((name) => path.join(folder, name));
    return ignoreMax ? files : files.slice(0, maxResults);
  };
  return { find, asked };
}

const ADK_AGENT = 'from google.adk.agents import LlmAgent\n\nroot_agent = LlmAgent(name="a", instruction="Hi {name}.")\n';

describe("workspaceUses", () => {
  it("finds an ADK agent and names it", async () => {
    const dir = folderWith({ "pyproject.toml": '[project]\nname = "x"\n', "pkg/agent.py": ADK_AGENT });
    const { find, asked } = search(dir, { manifest: ["pyproject.toml"], agent: ["pkg/agent.py"] });
    const use = await workspaceUses([dir], find);
    assert.deepEqual(use, { what: "Google ADK", why: "imports google.adk", file: "pkg/agent.py" });
    // bounded searches, without dependencies and virtual environments
    assert.ok(asked.length >= 2);
    for (const call of asked) {
      assert.equal(call.exclude, EXCLUDE);
      assert.ok(call.maxResults > 0 && call.maxResults <= LIMITS.files, String(call.maxResults));
    }
    for (const folder of ["node_modules", ".venv", "venv", "site-packages"]) {
      assert.ok(EXCLUDE.includes(folder), folder);
    }
  });

  it("reads the manifests first", async () => {
    const dir = folderWith({ "requirements.txt": "google-adk\n", "agent.py": "from templating import Template\n" });
    const { find, asked } = search(dir, { manifest: ["requirements.txt"], agent: ["agent.py"] });
    assert.deepEqual(await workspaceUses([dir], find), {
      what: "Google ADK",
      why: "names google-adk",
      file: "requirements.txt",
    });
    assert.equal(asked.length, 1);
  });

  it("finds nothing in a workspace that uses neither", async () => {
    const dir = folderWith({ "pyproject.toml": '[project]\nname = "x"\n', "main.py": "import json\n" });
    const { find, asked } = search(dir, { manifest: ["pyproject.toml"], python: ["main.py"] });
    assert.equal(await workspaceUses([dir], find), undefined);
    assert.equal(asked.length, 3);
  });

  it("reads only the start of a file", async () => {
    const late = "# a long module\n".repeat(8192) + "from google.adk.agents import LlmAgent\n"; // import after 128 KB
    const dir = folderWith({ "late.py": late, "early.py": ADK_AGENT + "#\n".repeat(100_000) });
    assert.equal(await workspaceUses([dir], search(dir, { python: ["late.py"] }).find), undefined);
    assert.equal((await workspaceUses([dir], search(dir, { python: ["early.py"] }).find))?.file, "early.py");
  });

  it("reads no more files than the limit, whatever the search returns", async () => {
    const names = Array.from({ length: 30 }, (_, i) => `m${i}.py`);
    const dir = folderWith(Object.fromEntries(names.map((name, i) => [name, i === 20 ? ADK_AGENT : "import json\n"])));
    const limits: Limits = { ...LIMITS, files: 10 };
    assert.equal(await workspaceUses([dir], search(dir, { python: names }, true).find, limits), undefined);
    assert.equal((await workspaceUses([dir], search(dir, { python: names }, true).find))?.file, "m20.py");
  });

  it("stops when the byte budget is spent", async () => {
    const names = Array.from({ length: 10 }, (_, i) => `m${i}.py`);
    const filler = "# nothing here\n".repeat(100); // 1,500 bytes
    const dir = folderWith(Object.fromEntries(names.map((name, i) => [name, i === 9 ? ADK_AGENT : filler])));
    const limits: Limits = { files: 200, bytes: 64 * 1024, total: 8 * filler.length };
    assert.equal(await workspaceUses([dir], search(dir, { python: names }).find, limits), undefined);
    assert.equal((await workspaceUses([dir], search(dir, { python: names }).find))?.file, "m9.py");
  });

  it("never waits on a FIFO", { skip: process.platform === "win32" && "no FIFOs" }, async () => {
    const dir = folderWith({ "b/agent.py": ADK_AGENT });
    fs.mkdirSync(path.join(dir, "a"));
    execFileSync("mkfifo", [path.join(dir, "a/agent.py")]);
    const use = await workspaceUses([dir], search(dir, { agent: ["a/agent.py", "b/agent.py"] }).find);
    assert.equal(use?.file, "b/agent.py");
  });

  it("follows no link out of the workspace", async () => {
    const outside = folderWith({ "agent.py": ADK_AGENT });
    const dir = folderWith({ "pkg/__init__.py": "" });
    fs.symlinkSync(path.join(outside, "agent.py"), path.join(dir, "pkg/agent.py"));
    fs.symlinkSync(outside, path.join(dir, "linked"));
    const { find } = search(dir, { agent: ["pkg/agent.py", "linked/agent.py"] });
    assert.equal(await workspaceUses([dir], find), undefined);
    // a link inside the workspace is read
    fs.symlinkSync(path.join(dir, "pkg/__init__.py"), path.join(dir, "alias.py"));
    fs.writeFileSync(path.join(dir, "pkg/__init__.py"), ADK_AGENT);
    assert.equal((await workspaceUses([dir], search(dir, { python: ["alias.py"] }).find))?.file, "alias.py");
  });

  it("names a file of a second folder relative to it", async () => {
    const first = folderWith({});
    const second = folderWith({ "agent.py": ADK_AGENT });
    const { find } = search(second, { agent: ["agent.py"] });
    assert.equal((await workspaceUses([first, second], find))?.file, "agent.py");
  });
});

// The regular expressions above on 1 MB of hostile text: each finishes (see hostile.ts).
describe("1 MB of hostile input is read in linear time", () => {
  const python: [string, string][] = [
    ["blank lines", "\n".repeat(MB)],
    ["spaces on one line", " ".repeat(MB) + "x\n"],
    ["spaces and line breaks", " \t\n".repeat(MB / 3)],
    ["a long list of names from google", `from google import ${"genai, ".repeat(MB / 7)}types\n`],
    ["lines that start an import", "from google \n".repeat(MB / 13)],
  ];
  for (const [name, text] of python) {
    it(`pythonUses: ${name}`, async () => assert.equal(await inWorker("pythonUses", text), undefined));
  }
  const manifests: [string, string][] = [
    ["blank lines", "\n".repeat(MB)],
    ["spaces on one line", " ".repeat(MB) + "x\n"],
    ["lines that start a header", "[ tool . \n".repeat(MB / 10)],
    ["google and google", "google-".repeat(MB / 7)],
    ["agent-prompt- runs", "agent-prompt-".repeat(MB / 13)],
  ];
  for (const [name, text] of manifests) {
    it(`manifestUses: ${name}`, async () => assert.equal(await inWorker("manifestUses", "pyproject.toml", text), undefined));
  }
  it("manifestUses: the table after 1 MB of blank lines", async () => {
    const found = await inWorker("manifestUses", "pyproject.toml", "\n".repeat(MB) + "[tool.templating]\n");
    assert.deepEqual(found, { what: "templating", why: "has a [tool.templating] table" });
  });
});
