// The `include` globs of `[tool.templating]`, as the document selector receives them.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import { includeGlobs, toVsCodeGlob, usesTemplating } from "../globs";

describe("toVsCodeGlob", () => {
  const table: [string, string, string][] = [
    ["a name matches at any depth", "*.j2", "**/*.j2"],
    ["a slash in the middle anchors", "prompts/*.j2", "prompts/*.j2"],
    ["a leading slash anchors", "/top.prompt", "top.prompt"],
    ["** stays", "**/*.txt", "**/*.txt"],
    ["a folder: everything inside, at any depth", "prompts/", "**/prompts/**"],
    ["an anchored folder", "agents/prompts/", "agents/prompts/**"],
    ["spaces around are dropped", "  *.md ", "**/*.md"],
    ["a leading ./ is the folder", "./prompts/*.yaml", "prompts/*.yaml"],
    ["./ repeated", "././prompts/*.yaml", "prompts/*.yaml"],
    ["./ before a name: any depth, as in templating", "./*.yaml", "**/*.yaml"],
    ["./ before a folder", "./prompts/", "**/prompts/**"],
  ];
  for (const [name, glob, expected] of table) {
    it(name, () => assert.equal(toVsCodeGlob(glob), expected));
  }
});

function project(pyproject: string | undefined): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "templating-globs-"));
  if (pyproject !== undefined) {
    fs.writeFileSync(path.join(dir, "pyproject.toml"), pyproject);
  }
  return dir;
}

describe("includeGlobs", () => {
  const table: [string, string | undefined, string[]][] = [
    ["a list", '[tool.templating]\ninclude = ["prompts/*.j2", "*.yaml"]\n', ["prompts/*.j2", "**/*.yaml"]],
    ["one string", '[tool.templating]\ninclude = "*.jinja"\n', ["**/*.jinja"]],
    ["no include", "[tool.templating]\nselect = ['T001']\n", []],
    ["no table", '[project]\nname = "x"\n', []],
    ["not TOML", "[tool.templating\ninclude = [", []],
    ["no pyproject.toml", undefined, []],
    ["not strings", "[tool.templating]\ninclude = [1, '', 'a/*.t']\n", ["a/*.t"]],
    ["./ dropped", '[tool.templating]\ninclude = ["./prompts/*.yaml"]\n', ["prompts/*.yaml"]],
    ["negations left out", '[tool.templating]\ninclude = ["*.j2", "!old/*.j2", " !x.j2"]\n', ["**/*.j2"]],
  ];
  for (const [name, text, expected] of table) {
    it(name, () => assert.deepEqual(includeGlobs(project(text)), expected));
  }
});

describe("usesTemplating", () => {
  const table: [string, string | undefined, boolean][] = [
    ["a [tool.templating] table", "[tool.templating]\nselect = ['T001']\n", true],
    ["only a sub-table", "[tool.templating.per-file-ignores]\n'a.py' = ['T001']\n", true],
    ["a dependency", '[project]\ndependencies = ["agent-prompt-templating[lsp]>=0.1"]\n', true],
    ["an optional dependency", '[project.optional-dependencies]\ndev = ["agent_prompt_templating"]\n', true],
    ["neither", '[project]\nname = "x"\ndependencies = ["jinja2"]\n[tool.ruff]\n', false],
    ["another tool named alike", "[tool.templating-other]\n", false],
    ["no pyproject.toml", undefined, false],
  ];
  for (const [name, text, expected] of table) {
    it(name, () => assert.equal(usesTemplating(project(text)), expected));
  }
});

// Hostile pyproject.toml text and globs, 1 MB each: the regular expressions that read them were
// quadratic (100 KB of blank lines took 11.5 s; these inputs kept the old code busy for over ten
// minutes). Each call runs in a worker thread, stopped if it has not answered within LIVENESS: a
// bound that only turns a hang into a failure (a linear scan answers in milliseconds), not a
// judgement of speed.
const LIVENESS = 120_000;

function inWorker(name: string, ...args: unknown[]): Promise<unknown> {
  const worker = new Worker(path.join(__dirname, "call.worker.js"), { workerData: { name, args } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`${name} did not return within ${LIVENESS / 1000} s on 1 MB: not linear`));
    }, LIVENESS);
    worker.once("message", (value) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(value);
    });
    worker.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

describe("1 MB of hostile input is read in linear time", () => {
  const MB = 1_000_000;
  const cases: [string, string, boolean][] = [
    ["blank lines before the table", "\n".repeat(MB) + "[tool.templating]\n", true],
    ["blank lines, no table", "\n".repeat(MB) + "[tool.ruff]\n", false],
    ["spaces and line breaks", " \n".repeat(MB / 2) + " [tool.templating.severity]\n", true],
    ["spaces on one line", " ".repeat(MB) + "x\n", false],
    ["lines that start a header", "[ tool . \n".repeat(MB / 10), false],
  ];
  for (const [name, text, expected] of cases) {
    it(`usesTemplating: ${name}`, async () => assert.equal(await inWorker("usesTemplating", project(text)), expected));
  }

  const slashes = "/".repeat(MB);
  const globs: [string, string, string][] = [
    ["a run of slashes before a name", `${slashes}x`, "x"],
    ["a run of slashes at the end", `prompts${slashes}`, "**/prompts/**"],
    ["a run of slashes in the middle", `a${slashes}b`, `a${slashes}b`],
    ["only slashes: as a few slashes", slashes, toVsCodeGlob("///")],
    ["a run of ./ before a name", `${"./".repeat(MB / 2)}x.j2`, "**/x.j2"],
  ];
  for (const [name, glob, expected] of globs) {
    it(`toVsCodeGlob: ${name}`, async () => assert.equal(await inWorker("toVsCodeGlob", glob), expected));
  }

  const included: [string, string, string][] = [
    ["ending in a run of slashes", `prompts${slashes}`, "**/prompts/**"],
    ["starting with a run of slashes", `${slashes}x`, "x"],
  ];
  for (const [name, glob, expected] of included) {
    it(`includeGlobs: a glob ${name}`, async () => {
      const text = `[tool.templating]\ninclude = ["${glob}"]\n`;
      assert.deepEqual(await inWorker("includeGlobs", project(text)), [expected]);
    });
  }
});
