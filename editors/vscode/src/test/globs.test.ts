// The `include` globs of `[tool.templating]`, as the document selector receives them.
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { includeGlobs, toVsCodeGlob } from "../globs";
import { inWorker, MB } from "./hostile";

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

// Hostile globs, 1 MB each: the regular expressions that trimmed them were quadratic (a long run of
// slashes kept the old code busy for over ten minutes). See hostile.ts.
describe("1 MB of hostile input is read in linear time", () => {
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
