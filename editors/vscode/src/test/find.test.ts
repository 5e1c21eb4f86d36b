// Which `templating` the extension runs, against small executables written for each case.
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { compareVersions, defaultInterpreter, findTemplating, MIN_VERSION, which, type Lookup } from "../find";

const posix = process.platform !== "win32";

/** A folder holding executables: name -> shell script body. */
function folderWith(scripts: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "templating-find-"));
  for (const [name, body] of Object.entries(scripts)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
  return dir;
}

const SAYS = (version: string) => `echo "templating ${version}"`;
// A Python whose environment has (or has not) templating: answers `-P -m templating --version`.
const PYTHON_WITH = `[ "$1 $2 $3 $4" = "-P -m templating --version" ] && echo "templating 0.2.0" && exit 0; exit 9`;
const PYTHON_WITHOUT = `echo "/usr/bin/python: No module named templating" >&2; exit 1`;

async function find(options: {
  setting?: string;
  folder?: string;
  folders?: string[];
  interpreter?: string;
  defaultInterpreter?: string;
  path?: string[];
}): Promise<Lookup> {
  return findTemplating({
    setting: options.setting ?? "",
    folder: options.folder ?? options.folders?.[0],
    folders: options.folders,
    interpreter: options.interpreter,
    defaultInterpreter: options.defaultInterpreter,
    env: { PATH: (options.path ?? []).join(path.delimiter) },
    log: () => undefined,
  });
}

/** Whether `command args` exits with status 0. */
function run(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore", cwd: os.tmpdir() });
    return true;
  } catch {
    return false;
  }
}

/** The interpreter that `python` runs (its sys.executable), when it runs. */
function real(python: string | undefined): string | undefined {
  try {
    return python && execFileSync(python, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

function found(lookup: Lookup): { command: string; args: string[]; version: string } {
  assert.equal(lookup.kind, "found", lookup.kind === "found" ? "" : lookup.message);
  const { command, args, version } = (lookup as Extract<Lookup, { kind: "found" }>).found;
  return { command, args, version };
}

describe("compareVersions", () => {
  const table: [string, string, number][] = [
    ["0.1.0", "0.1.0", 0],
    ["0.1", "0.1.0", 0],
    ["0.2.0", "0.1.0", 1],
    ["0.1.0", "0.10.0", -1], // numbers, not text
    ["1.0.0rc1", "1.0.0", 0], // what follows the numbers is ignored
    ["0.1.0.dev3", "0.1.0", 0],
    ["0.0.9", "0.1.0", -1],
  ];
  for (const [a, b, sign] of table) {
    it(`${a} vs ${b}`, () => assert.equal(Math.sign(compareVersions(a, b)), sign));
  }
});

describe("findTemplating", { skip: !posix && "the fake executables are shell scripts" }, () => {
  it("runs the setting's executable, and says its version", async () => {
    const dir = folderWith({ "bin/templating": SAYS("0.3.1") });
    const file = path.join(dir, "bin/templating");
    assert.deepEqual(found(await find({ setting: file })), { command: file, args: [], version: "0.3.1" });
  });

  it("reads a relative setting from the first workspace folder", async () => {
    const dir = folderWith({ ".venv/bin/templating": SAYS(MIN_VERSION) });
    const result = found(await find({ setting: ".venv/bin/templating", folder: dir }));
    assert.equal(result.command, path.join(dir, ".venv/bin/templating"));
  });

  it("looks a setting without a separator up on PATH", async () => {
    const dir = folderWith({ "my-templating": SAYS(MIN_VERSION) });
    assert.equal(found(await find({ setting: "my-templating", path: [dir] })).command, path.join(dir, "my-templating"));
  });

  it("never falls back from a setting that names nothing", async () => {
    const onPath = folderWith({ templating: SAYS(MIN_VERSION) });
    const lookup = await find({ setting: "/no/such/templating", path: [onPath] });
    assert.equal(lookup.kind, "missing");
    assert.match((lookup as { message: string }).message, /templating\.path \(\/no\/such\/templating\) names no executable/);
  });

  it("says when the setting's executable does not answer --version", async () => {
    const dir = folderWith({ broken: 'echo "Traceback: ImportError" >&2; exit 1' });
    const lookup = await find({ setting: path.join(dir, "broken") });
    assert.equal(lookup.kind, "missing");
    assert.match((lookup as { message: string }).message, /could not be run from the setting.*Traceback: ImportError/);
  });

  it("refuses a version older than MIN_VERSION, saying both", async () => {
    const dir = folderWith({ templating: SAYS("0.0.1") });
    const lookup = await find({ path: [dir] });
    assert.equal(lookup.kind, "too-old");
    const message = (lookup as { message: string }).message;
    assert.ok(message.includes("templating 0.0.1") && message.includes(`needs ${MIN_VERSION} or later`), message);
  });

  it("prefers the selected interpreter's environment to PATH", async () => {
    const dir = folderWith({ "venv/bin/python": PYTHON_WITH, "bin/templating": SAYS(MIN_VERSION) });
    const python = path.join(dir, "venv/bin/python");
    const result = found(await find({ interpreter: python, path: [path.join(dir, "bin")] }));
    assert.deepEqual(result, { command: python, args: ["-P", "-m", "templating"], version: "0.2.0" });
  });

  // A real Python 3.11+ (which has -P), when there is one: the workspace's own `templating/`
  // package is not imported in place of the installed one (it would run the workspace's code).
  // (sys.executable: a launcher such as pyenv's shim needs a PATH the test does not give.)
  const python3 = real(which("python3", process.env));
  const hasP = python3 !== undefined && run(python3, ["-P", "-c", "pass"]);
  it("does not run a templating package of the workspace folder", { skip: !hasP && "no python3 >= 3.11" }, async () => {
    const dir = folderWith({ "bin/templating": SAYS(MIN_VERSION) });
    fs.mkdirSync(path.join(dir, "templating"));
    fs.writeFileSync(path.join(dir, "templating/__init__.py"), "");
    fs.writeFileSync(path.join(dir, "templating/__main__.py"), 'print("templating 9.9.9")\n');
    const result = found(await find({ folder: dir, interpreter: python3, path: [path.join(dir, "bin")] }));
    // The installed one when this python3 has templating, else the one on PATH: never the folder's.
    assert.notEqual(result.version, "9.9.9");
  });

  it("falls back to PATH when the interpreter's environment has no templating", async () => {
    const dir = folderWith({ "venv/bin/python": PYTHON_WITHOUT, "bin/templating": SAYS(MIN_VERSION) });
    const result = found(await find({ interpreter: path.join(dir, "venv/bin/python"), path: [path.join(dir, "bin")] }));
    assert.equal(result.command, path.join(dir, "bin/templating"));
  });

  it("says where it looked when there is none", async () => {
    const dir = folderWith({ "venv/bin/python": PYTHON_WITHOUT, "bin/other": SAYS(MIN_VERSION) });
    const python = path.join(dir, "venv/bin/python");
    const lookup = await find({ interpreter: python, path: [path.join(dir, "bin")] });
    assert.equal(lookup.kind, "missing");
    const message = (lookup as { message: string }).message;
    assert.ok(message.includes(python) && message.includes("on PATH") && message.includes("[lsp]"), message);
  });

  it("skips a file on PATH that is not executable", async () => {
    const dir = folderWith({ "a/templating": SAYS("9.9.9"), "b/templating": SAYS(MIN_VERSION) });
    fs.chmodSync(path.join(dir, "a/templating"), 0o644);
    const result = found(await find({ path: [path.join(dir, "a"), path.join(dir, "b")] }));
    assert.equal(result.command, path.join(dir, "b/templating"));
  });

  it("accepts an uninstalled checkout, which says 'unknown'", async () => {
    const dir = folderWith({ templating: SAYS("unknown") });
    assert.equal(found(await find({ path: [dir] })).version, "unknown");
  });

  // The workspace's own environments, with no Python extension (code-server has none) and nothing on PATH.
  it("finds the workspace's .venv, with nothing on PATH", async () => {
    const dir = folderWith({ ".venv/bin/templating": SAYS("0.2.0") });
    const result = found(await find({ folders: [dir] }));
    assert.deepEqual(result, { command: path.join(dir, ".venv/bin/templating"), args: [], version: "0.2.0" });
  });

  it("prefers the workspace's .venv to PATH, and .venv to venv", async () => {
    const dir = folderWith({
      ".venv/bin/templating": SAYS("0.2.0"),
      "venv/bin/templating": SAYS("0.3.0"),
      "bin/templating": SAYS("0.4.0"),
    });
    assert.equal(found(await find({ folders: [dir], path: [path.join(dir, "bin")] })).version, "0.2.0");
    fs.rmSync(path.join(dir, ".venv"), { recursive: true });
    assert.equal(found(await find({ folders: [dir], path: [path.join(dir, "bin")] })).version, "0.3.0");
  });

  it("looks in every workspace folder, the first first", async () => {
    const a = folderWith({});
    const b = folderWith({ "venv/bin/templating": SAYS("0.2.0") });
    const c = folderWith({ ".venv/bin/templating": SAYS("0.3.0") });
    assert.equal(found(await find({ folders: [a, b, c] })).command, path.join(b, "venv/bin/templating"));
  });

  it("prefers the selected interpreter's environment to the .venv", async () => {
    const dir = folderWith({ "py/bin/python": PYTHON_WITH, ".venv/bin/templating": SAYS(MIN_VERSION) });
    const python = path.join(dir, "py/bin/python");
    assert.equal(found(await find({ folders: [dir], interpreter: python })).command, python);
  });

  it("goes on to the .venv when the selected interpreter has no templating", async () => {
    const dir = folderWith({ "py/bin/python": PYTHON_WITHOUT, ".venv/bin/templating": SAYS(MIN_VERSION) });
    const result = found(await find({ folders: [dir], interpreter: path.join(dir, "py/bin/python") }));
    assert.equal(result.command, path.join(dir, ".venv/bin/templating"));
  });

  it("runs the interpreter python.defaultInterpreterPath names, before the .venv", async () => {
    const dir = folderWith({ "envs/app/bin/python": PYTHON_WITH, ".venv/bin/templating": SAYS(MIN_VERSION) });
    const result = found(await find({ folders: [dir], defaultInterpreter: "${workspaceFolder}/envs/app/bin/python" }));
    const python = path.join(dir, "envs/app/bin/python");
    assert.deepEqual(result, { command: python, args: ["-P", "-m", "templating"], version: "0.2.0" });
  });

  it("takes the default `python` of python.defaultInterpreterPath for no choice", async () => {
    const dir = folderWith({ "bin/python": PYTHON_WITH });
    const lookup = await find({ folders: [dir], defaultInterpreter: "python", path: [path.join(dir, "bin")] });
    assert.equal(lookup.kind, "missing");
    assert.ok(!(lookup as { message: string }).message.includes("defaultInterpreterPath"));
  });

  it("never falls back from the setting to the .venv", async () => {
    const dir = folderWith({ ".venv/bin/templating": SAYS(MIN_VERSION) });
    assert.equal((await find({ setting: "/no/such/templating", folders: [dir] })).kind, "missing");
  });

  it("says where it looked, naming a .venv whose templating does not run", async () => {
    const dir = folderWith({ ".venv/bin/templating": 'echo "bad interpreter" >&2; exit 126' });
    const python = folderWith({ "bin/python": PYTHON_WITHOUT });
    const lookup = await find({
      folders: [dir],
      interpreter: path.join(python, "bin/python"),
      defaultInterpreter: path.join(python, "bin/python"), // the same: asked once
      path: [],
    });
    assert.equal(lookup.kind, "missing");
    const message = (lookup as { message: string }).message;
    const expected = `templating was not found in the selected Python interpreter's environment (${path.join(python, "bin/python")}) nor in ${path.join(dir, ".venv/bin/templating")} (which could not be run: bad interpreter) nor on PATH.`;
    assert.equal(message.split(" Install")[0], expected);
  });

  it("says it looked in the .venv when there is none", async () => {
    const lookup = await find({ folders: [folderWith({})] });
    const message = (lookup as { message: string }).message;
    assert.equal(message.split(" Install")[0], "templating was not found in the workspace's .venv or venv nor on PATH.");
  });
});

describe("defaultInterpreter", () => {
  const dir = folderWith({ "envs/bin/python": "exit 0", "bin/python3.12": "exit 0", "bin/notes": "" });
  fs.chmodSync(path.join(dir, "bin/notes"), 0o644);
  const table: [string, string | undefined, string | undefined][] = [
    ["unset", undefined, undefined],
    ["the default", "python", undefined],
    ["${workspaceFolder}", "${workspaceFolder}/envs/bin/python", path.join(dir, "envs/bin/python")],
    ["relative to the first folder", "envs/bin/python", path.join(dir, "envs/bin/python")],
    ["${env:NAME}", "${env:ENVS}/bin/python", path.join(dir, "envs/bin/python")],
    ["a name on PATH", "python3.12", path.join(dir, "bin/python3.12")],
    ["a file that is not executable", "bin/notes", undefined],
    ["a file that does not exist", "${userHome}/no/such/python", undefined],
  ];
  for (const [name, value, expected] of table) {
    it(name, { skip: !posix && "the fake executables are shell scripts" }, () =>
      assert.equal(
        defaultInterpreter({
          defaultInterpreter: value,
          folders: [dir],
          env: { PATH: path.join(dir, "bin"), ENVS: path.join(dir, "envs") },
        }),
        expected,
      ),
    );
  }
});
