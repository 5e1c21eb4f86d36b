// The `include` globs of `[tool.templating]`, as the document selector receives them.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { includeGlobs, toVsCodeGlob } from "../globs";

describe("toVsCodeGlob", () => {
  const table: [string, string, string][] = [
    ["a name matches at any depth", "*.j2", "**/*.j2"],
    ["a slash in the middle anchors", "prompts/*.j2", "prompts/*.j2"],
    ["a leading slash anchors", "/top.prompt", "top.prompt"],
    ["** stays", "**/*.txt", "**/*.txt"],
    ["a folder: everything inside, at any depth", "prompts/", "**/prompts/**"],
    ["an anchored folder", "agents/prompts/", "agents/prompts/**"],
    ["spaces around are dropped", "  *.md ", "**/*.md"],
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
  ];
  for (const [name, text, expected] of table) {
    it(name, () => assert.deepEqual(includeGlobs(project(text)), expected));
  }
});
