"""The persistent lint cache (templating.linter.cache): a cached run gives exactly a fresh run's findings, after
any edit; a bad entry is a miss that the run rewrites; two processes at once; each file checked by its status."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import linked_project
import pytest
from cache_support import PROJECT, build, fresh_calls, shape

import templating
from templating.cli import main
from templating.linter import cache as lint_cache
from templating.linter import cache_dir
from templating.linter.engine import Project
from templating.linter.result import LintResult
from templating.linter.run import lint_project


def _write(name: str, text: str) -> Callable[[Path], None]:
    return lambda root: (root / name).write_text(text, encoding="utf-8")


MORE = (
    "from google.adk.agents import LlmAgent\nfrom vendor.lib.prompts import ROOT\n\n"
    "more = LlmAgent(name='more', instruction=ROOT)\n"
)


def _folders_and_module(root: Path) -> None:
    for name, text in (("trip/google/__init__.py", ""), ("trip/google/adk/__init__.py", "")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "trip/google/adk/agents.py").write_text("class LlmAgent:\n    pass\n", encoding="utf-8")


EDITS: list[tuple[str, Callable[[Path], None] | None, list[str]]] = [
    # (id, the edit between the two runs, the paths linted)
    ("unchanged", None, ["."]),
    ("unchanged-files-named", None, ["trip/agent.py", "prompts/greet.prompt"]),
    # the imported constant changes: agent.py's instruction (found through the import) reads a key nobody writes
    ("imported-module-edited", _write("trip/prompt.py", 'PLAN_PROMPT = """Use {plan} and {notez}."""\n'), ["."]),
    # a write removed in a third file: the key read in prompt.py is now written nowhere (T014)
    ("write-removed-elsewhere", _write("trip/tools.py", "def save(tool_context):\n    pass\n"), ["."]),
    ("write-removed-elsewhere-reader-named", _write("trip/tools.py", "def save(ctx):\n    pass\n"), ["trip/prompt.py"]),
    ("template-edited", _write("prompts/greet.prompt", "Hello <user:nmae>.\n"), ["."]),
    ("text-file-created", _write("trip/writer.txt", "Write about {plan} and {missing_key}.\n"), ["."]),
    ("module-added", _write("trip/extra.py", "def more(tool_context):\n    tool_context.state['notez'] = 2\n"), ["."]),
    ("module-removed", lambda root: (root / "trip/tools.py").unlink(), ["."]),
    ("not-utf-8", lambda root: (root / "trip/tools.py").write_bytes(b"x = '\xff'\n"), ["."]),
    ("settings-changed", _write("pyproject.toml", '[tool.templating]\nignore = ["T014"]\n'), ["."]),
    # a module an import looked for, in a folder that was not there either (`trip/google/adk/agents.py`)
    ("module-created-with-its-folders", _folders_and_module, ["."]),
]


@pytest.mark.parametrize(("edit", "paths"), [e[1:] for e in EDITS], ids=[e[0] for e in EDITS])
def test_a_cached_run_gives_a_fresh_runs_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], None] | None, paths: list[str]
) -> None:
    root = tmp_path / "project"
    build(root)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    first = lint_project(paths, cache_dir=folder)
    assert list(folder.glob("*.json"))  # written
    if edit is not None:
        edit(root)
    calls = fresh_calls(monkeypatch)
    cached = lint_project(paths, cache_dir=folder)
    assert calls == ([] if edit is None else [1])  # read from the cache exactly when nothing changed
    monkeypatch.undo()
    monkeypatch.chdir(root)
    fresh = lint_project(paths)
    assert shape(cached) == shape(fresh)
    if edit is not None:
        assert shape(fresh) != shape(first)  # each edit changes what a run gives
    again = lint_project(paths, cache_dir=folder)  # the entry rewritten by the second run gives it back
    assert shape(again) == shape(fresh)


KEYS = [
    # (id, what changes between two runs, the paths of each run: the second run's entry is another when its key is)
    ("same-run", None, (["."], ["."]), 1),
    ("a-folder-of-it", None, (["."], ["trip"]), 2),
    ("a-file-more", _write("trip/extra.py", "X = 1\n"), (["."], ["."]), 2),
    ("a-template-more", _write("prompts/more.prompt", "Hi <x>.\n"), (["."], ["."]), 2),  # the context is the same
    ("a-file-more-in-the-context-only", _write("prompts/extra.py", "X = 1\n"), (["trip/agent.py"],) * 2, 2),
]


@pytest.mark.parametrize(("edit", "runs", "entries"), [k[1:] for k in KEYS], ids=[k[0] for k in KEYS])
def test_an_entry_is_keyed_by_the_files_linted_and_those_read_for_context(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    edit: Callable[[Path], None] | None,
    runs: tuple[list[str], list[str]],
    entries: int,
) -> None:
    """The key of a run's entry tells apart the files it lints and those it reads for context (each list by its
    digest, the context said to be the files when it is): another list, another entry."""
    root = tmp_path / "project"
    build(root)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    lint_project(runs[0], cache_dir=folder)
    if edit is not None:
        edit(root)
    lint_project(runs[1], cache_dir=folder)
    assert len(list(folder.glob("*.json"))) == entries


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_a_link_to_a_folder_pointed_elsewhere_is_a_fresh_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`app/sub` -> `real_sub`, then -> `other_sub` (no file changed: the module is read by its real path, each
    with its own text): the entry's key holds the project's links, so the run is not the cached one."""
    root = tmp_path / "project"
    tools = linked_project.TOOLS.replace("from ..memory import remember\n\n", "").replace(
        "remember(tool_context.state, topic)", "tool_context.state['topic'] = topic"
    )
    files = {
        "pyproject.toml": "[tool.templating]\n",
        "app/__init__.py": "from . import agent\n",
        "app/agent.py": linked_project.AGENT,
        "real_sub/__init__.py": "",
        "real_sub/tools.py": tools,
        "other_sub/__init__.py": "",
        "other_sub/tools.py": tools.replace("'topic'", "'subject'"),
    }
    linked_project.write_linked(root, files=files)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    first = lint_project(["."], cache_dir=folder)
    (root / "app/sub").unlink()
    (root / "app/sub").symlink_to("../other_sub")
    cached = lint_project(["."], cache_dir=folder)
    fresh = lint_project(["."])
    assert shape(cached) == shape(fresh)
    assert [d.code for d in first.diagnostics] == ["T024"]  # written by the tool, after the instruction is read
    assert [d.code for d in fresh.diagnostics] == ["T014"]  # written by nothing


def test_findings_of_a_cached_run_name_the_same_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    outputs = []
    for extra in (["--no-cache"], [], []):
        code = main(["lint", ".", *extra])
        outputs.append((code, *capsys.readouterr()))
    assert outputs[0] == outputs[1] == outputs[2]
    assert "T014" in outputs[0][1]


CORRUPT: list[tuple[str, Callable[[Path], None]]] = [
    ("empty", lambda entry: entry.write_bytes(b"")),
    ("truncated", lambda entry: entry.write_bytes(entry.read_bytes()[: len(entry.read_bytes()) // 2])),
    ("not-json", lambda entry: entry.write_bytes(b"\x00\xff garbage")),
    ("a-list", lambda entry: entry.write_text("[1, 2, 3]")),
    (
        "other-format",
        lambda entry: entry.write_text(entry.read_text().replace(f'"format":{lint_cache.FORMAT}', '"format":99', 1)),
    ),
    ("inputs-not-triples", lambda entry: entry.write_text(_edited(entry, lambda e: e.update(inputs=[["a"]])))),
    ("bad-span", lambda entry: entry.write_text(_edited(entry, lambda e: e["result"]["templates"][0].insert(3, 7)))),
    ("source-missing", lambda entry: entry.write_text(_edited(entry, lambda e: e.update(inputs=e["inputs"][:1])))),
    ("a-folder", lambda entry: (entry.unlink(), entry.mkdir())),
    ("a-fifo", lambda entry: (entry.unlink(), os.mkfifo(entry))),
    # an entry that parses, with one field that makes no sense: a miss, never a crash of an output
    (
        "deeply-nested",
        lambda entry: entry.write_text(entry.read_text()[:-1] + ',"x":' + "[" * 100_000 + "]" * 100_000 + "}"),
    ),
    ("bad-severity", lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(1, "fatal")))),
    ("message-not-a-string", lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(2, 7)))),
    ("code-not-a-string", lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(0, ["T014"])))),
    ("help-not-a-string", lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(5, {"a": 1})))),
    (
        "span-past-the-text",
        lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(3, [9**9, 9**9 + 1, 1, 1]))),
    ),
    ("span-backwards", lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(3, [5, 2, 1, 1])))),
    (
        "span-of-strings",
        lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(3, ["0", "1", "1", "1"]))),
    ),
    ("line-zero", lambda entry: entry.write_text(_edited(entry, lambda e: _diag(e).__setitem__(3, [0, 1, 0, 1])))),
    (
        "keys-not-strings",
        lambda entry: entry.write_text(_edited(entry, lambda e: e["result"]["templates"][0][4].append(3))),
    ),
    (
        "count-a-string",
        lambda entry: entry.write_text(_edited(entry, lambda e: e["result"]["python"].update(x="many"))),
    ),
    (
        "source-not-a-string",
        lambda entry: entry.write_text(_edited(entry, lambda e: e["result"]["sources"].update(x=5))),
    ),
    ("files-an-object", lambda entry: entry.write_text(_edited(entry, lambda e: e["result"].update(files={"a": 1})))),
    (
        "input-mode-unknown",
        lambda entry: entry.write_text(_edited(entry, lambda e: e["inputs"][0].__setitem__(1, "exe"))),
    ),
]


def _diag(entry: dict[str, Any]) -> list[Any]:
    """The first finding of an entry's result that has a span (the project has some)."""
    return next(d for d in entry["result"]["diagnostics"] if d[3] is not None)


def _edited(entry: Path, change: Callable[[dict[str, Any]], Any]) -> str:
    data = json.loads(entry.read_text())
    change(data)
    return json.dumps(data)


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs as on POSIX")
@pytest.mark.parametrize("corrupt", [c[1] for c in CORRUPT], ids=[c[0] for c in CORRUPT])
def test_a_bad_entry_is_a_miss_and_is_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corrupt: Callable[[Path], None]
) -> None:
    root = tmp_path / "project"
    build(root)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    fresh = lint_project(["."])
    lint_project(["."], cache_dir=folder)
    (entry,) = folder.glob("*.json")
    corrupt(entry)
    result = lint_project(["."], cache_dir=folder)  # never blocks on a FIFO, never raises
    assert shape(result) == shape(fresh)
    if entry.is_file():
        assert json.loads(entry.read_text())["format"] == lint_cache.FORMAT  # rewritten whole
        calls = fresh_calls(monkeypatch)
        assert shape(lint_project(["."], cache_dir=folder)) == shape(fresh)
        assert calls == []


OUTPUTS = [
    ["--format", "text"],
    ["--format", "json"],
    ["--format", "sarif"],
    ["--format", "github"],
    ["--html", "r.html"],
]


@pytest.mark.parametrize("corrupt", [c[1] for c in CORRUPT[-14:]], ids=[c[0] for c in CORRUPT[-14:]])
def test_an_entry_that_parses_but_makes_no_sense_never_reaches_an_output(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    corrupt: Callable[[Path], None],
) -> None:
    """Each field of an entry is checked before it is used: a wrong one is a miss, so every output prints
    what a fresh run prints (a bad severity or message crashed the text, SARIF and HTML outputs)."""
    root = tmp_path / "project"
    build(root)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    for output in OUTPUTS:
        assert main(["lint", ".", "--no-cache", *output]) == 0
        fresh = capsys.readouterr()
        report = (root / "r.html").read_text(encoding="utf-8") if "--html" in output else None
        assert main(["lint", ".", "--cache-dir", str(folder), *output]) == 0  # writes the entry
        capsys.readouterr()
        (entry,) = folder.glob("*.json")
        corrupt(entry)
        assert main(["lint", ".", "--cache-dir", str(folder), *output]) == 0
        assert capsys.readouterr() == fresh
        if report is not None:
            assert (root / "r.html").read_text(encoding="utf-8") == report
        entry.unlink()


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links as on POSIX")
@pytest.mark.parametrize("with_status", [False, True], ids=["digest", "status"])
@pytest.mark.parametrize("where", ["beside", "sibling-with-the-roots-name", "link-in-root", "folder-link-in-root"])
def test_an_entry_naming_a_file_outside_the_root_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, with_status: bool
) -> None:
    """An entry is data anyone with the project can write: it cannot make the linter read outside the root,
    whether it vouches for the file by its digest or by its status."""
    root = tmp_path / "project"
    build(root)
    secret = tmp_path / ("project2/secret.txt" if where == "sibling-with-the-roots-name" else "secret.txt")
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("TOP-SECRET", encoding="utf-8")
    named = secret
    if where == "link-in-root":
        named = root / "trip/secret.txt"
        named.symlink_to(secret)
    elif where == "folder-link-in-root":
        (root / "out").symlink_to(secret.parent, target_is_directory=True)
        named = root / "out/secret.txt"
    monkeypatch.chdir(root)
    monkeypatch.delenv("TEMPLATING_CACHE_DIR")
    folder = root / ".templating_cache"
    lint_project(["."], cache=True)
    (entry,) = folder.glob("*.json")
    data = json.loads(entry.read_text())
    info = os.stat(named)
    status = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]
    data["inputs"].append([str(named), "text", lint_cache._digest("TOP-SECRET"), *([status] if with_status else [])])
    data["since"] = time.time_ns() + 10 * lint_cache.TRUST_MARGIN_NS  # every status old enough to be trusted
    data["result"]["diagnostics"] = []  # what a forged entry would claim
    entry.write_text(json.dumps(data))
    opened: list[str] = []
    real_open = os.open

    def watch(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", watch)
    result = lint_project(["."], cache=True)
    assert str(secret) not in opened
    assert str(named) not in opened
    assert result.diagnostics  # the fresh findings, not the forged entry's


def test_two_processes_at_once(tmp_path: Path) -> None:
    root = tmp_path / "project"
    build(root)
    for i in range(30):  # enough files that the runs overlap
        (root / f"trip/m{i}.py").write_text(f"M{i}_PROMPT = 'Use {{k{i}}}.'\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(templating.__file__).parent.parent)}
    env.pop("TEMPLATING_CACHE_DIR")
    command = [sys.executable, "-m", "templating", "lint", ".", "--format", "json"]
    fresh = subprocess.run([*command, "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    for _ in range(3):
        runs = [subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
        outputs = [run.communicate(timeout=120)[0] for run in runs]
        assert [run.returncode for run in runs] == [fresh.returncode] * 2
        assert outputs == [fresh.stdout] * 2
    entries = list((root / ".templating_cache").glob("*.json"))
    assert len(entries) == 1
    assert json.loads(entries[0].read_text())["format"] == lint_cache.FORMAT
    assert not list((root / ".templating_cache").glob(".tmp-*"))  # no temporary file left behind


def test_a_run_of_other_code_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key holds the identity of the code that finds: the same version with other code is a miss."""
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "cache"
    lint_project(["."], cache_dir=folder)
    calls = fresh_calls(monkeypatch)
    lint_project(["."], cache_dir=folder)
    assert calls == []  # same code: a hit
    monkeypatch.setattr(lint_cache, "_code", "0" * 40)  # what a process of edited code works out
    lint_project(["."], cache_dir=folder)
    assert calls == [1]
    assert len(list(folder.glob("*.json"))) == 2


def test_an_edited_rule_in_a_development_install_is_not_served_from_the_cache(tmp_path: Path) -> None:
    """A checkout's package, edited with its version unchanged (an editable install), run as the command."""
    source = Path(templating.__file__).parent
    code = tmp_path / "src"
    shutil.copytree(source, code / "templating", ignore=shutil.ignore_patterns("__pycache__"))
    if (source.parent / "grammar").is_dir():  # a checkout: the grammar beside the package
        shutil.copytree(source.parent / "grammar", code / "grammar")
    root = tmp_path / "project"
    build(root)
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("TEMPLATING_CACHE_DIR")
    command = [sys.executable, "-m", "templating", "lint", ".", "--format", "json", "--exit-zero"]

    def messages() -> list[str]:
        run = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120, check=True)
        return [d["message"] for d in json.loads(run.stdout) if d["code"] == "T014"]

    before = messages()
    assert before
    assert not any(m.startswith("edited: ") for m in before)
    rule = code / "templating/linter/rules/order.py"  # where T014 is made for an agent of an app
    text = rule.read_text(encoding="utf-8")
    line = "return Diagnostic(code, severity, message,"
    assert line in text
    rule.write_text(text.replace(line, line.replace("message,", '"edited: " + message,')), encoding="utf-8")
    assert messages() == ["edited: " + m for m in before]  # linted by the edited rule, not read back
    assert messages() == ["edited: " + m for m in before]  # and then read back
    assert len(list((root / ".templating_cache").glob("*.json"))) == 2


CODE_EDITS: list[tuple[str, Callable[[Path], None], bool]] = [
    # (id, a change to a copy of the package and the grammar beside it, whether the identity changes)
    ("nothing", lambda code: None, False),
    ("module-edited", lambda code: (code / "pkg/rules.py").write_text("X = 2\n", encoding="utf-8"), True),
    ("same-size-later", lambda code: os.utime(code / "pkg/rules.py", ns=(0, 10**18)), True),
    ("module-added", lambda code: (code / "pkg/sub/new.py").write_text("", encoding="utf-8"), True),
    ("module-removed", lambda code: (code / "pkg/sub/old.py").unlink(), True),
    ("grammar-beside-edited", lambda code: (code / "grammar/a.lark").write_text("x: y\n", encoding="utf-8"), True),
    ("data-edited", lambda code: (code / "pkg/terminals.json").write_text("{}", encoding="utf-8"), True),
    ("bytecode-written", lambda code: (code / "pkg/__pycache__/rules.pyc").write_bytes(b"\0"), False),
    ("other-file", lambda code: (code / "pkg/notes.md").write_text("x", encoding="utf-8"), False),
    ("beside-package", lambda code: (code / "setup.py").write_text("x", encoding="utf-8"), False),
]


@pytest.mark.parametrize(("edit", "changes"), [e[1:] for e in CODE_EDITS], ids=[e[0] for e in CODE_EDITS])
def test_the_code_identity_changes_with_the_code(tmp_path: Path, edit: Callable[[Path], None], changes: bool) -> None:
    files = ["pkg/__init__.py", "pkg/rules.py", "pkg/sub/old.py", "pkg/terminals.json", "grammar/a.lark"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "pkg/__pycache__").mkdir()
    before = lint_cache.code_identity(tmp_path / "pkg")
    assert lint_cache.code_identity(tmp_path / "pkg") == before
    edit(tmp_path)
    assert (lint_cache.code_identity(tmp_path / "pkg") != before) is changes


def test_the_code_identity_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint_cache, "_code", None)
    first = lint_cache.code_identity()
    assert first == lint_cache.code_identity(Path(templating.__file__).parent)
    monkeypatch.setattr(os, "scandir", None)  # not walked again
    assert lint_cache.code_identity() == first


def test_the_api_writes_no_cache_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TEMPLATING_CACHE_DIR")
    lint_project(["."])
    Project().lint(["."])
    assert not (tmp_path / ".templating_cache").exists()
    lint_project(["."], cache=True)
    assert (tmp_path / ".templating_cache" / "CACHEDIR.TAG").is_file()


def test_a_module_an_import_looked_for_that_appears_outside_the_walk_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The modules an import could name that are not there are inputs of the run (looked for with a stat,
    not read): one created since, even in a folder the walk leaves out, makes the next run lint afresh."""
    build(
        tmp_path,
        {
            "pyproject.toml": '[tool.templating]\nexclude = ["vendor/**"]\n',
            "agent.py": (
                "from google.adk.agents import LlmAgent\nfrom vendor.prompts import ROOT_PROMPT\n"
                "root = LlmAgent(name='r', instruction=ROOT_PROMPT, output_key='plan')\n"
            ),
        },
    )
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "cache"
    first = lint_project(["."], select="ALL", cache_dir=folder)
    assert [d.code for d in first.diagnostics] == ["T015"]  # imported from a module not there: not checked
    build(tmp_path, {"vendor/prompts.py": 'ROOT_PROMPT = "Use {plan}."\n'})
    cached = lint_project(["."], select="ALL", cache_dir=folder)
    assert shape(cached) == shape(lint_project(["."], select="ALL"))
    assert cached.diagnostics == []


# -- a warm run checks each file by its status first (size, mtime, ctime, inode, device) and hashes it only when
# that changed or is too recent to be trusted


def _same_size_edit(root: Path) -> None:
    path = root / "trip/prompt.py"
    path.write_text(path.read_text(encoding="utf-8").replace("{notes}", "{notez}"), encoding="utf-8")


def _later(root: Path, name: str, *, by: int = 5_000_000_000) -> None:
    """The file's modification time moved on (as an edit a few seconds later leaves it)."""
    info = (root / name).stat()
    os.utime(root / name, ns=(info.st_atime_ns, info.st_mtime_ns + by))


def _touched(root: Path) -> None:
    _later(root, "trip/prompt.py")


def _replaced_keeping_mtime(root: Path) -> None:
    """Another file of the same size moved into place (a new inode: the old one exists until the move), with
    the old modification time set on it."""
    path = root / "trip/prompt.py"
    info = path.stat()
    other = root / "trip/prompt.py.new"
    other.write_text(path.read_text(encoding="utf-8").replace("{notes}", "{notez}"), encoding="utf-8")
    os.utime(other, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(other, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)


def _rewritten_keeping_mtime(root: Path) -> None:
    """The same file (same inode) rewritten, same size, its modification time set back: only the change time
    (which no call sets back) and the content tell."""
    path = root / "trip/prompt.py"
    info = path.stat()
    _same_size_edit(root)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (info.st_ino, info.st_mtime_ns)


STATUS_EDITS: list[tuple[str, Callable[[Path], None] | None, bool]] = [
    # (id, the edit between the runs, whether it changes the result)
    ("unchanged", None, False),
    ("edit-same-size", _same_size_edit, True),
    ("touch-without-change", _touched, False),
    ("replaced-same-size-mtime-kept", _replaced_keeping_mtime, True),
    ("rewritten-same-size-mtime-kept", _rewritten_keeping_mtime, True),
    ("deleted", lambda root: (root / "trip/tools.py").unlink(), True),
    ("added", _write("trip/extra.py", "def more(tool_context):\n    tool_context.state['notez'] = 2\n"), True),
]


def _hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The existing files a warm run reads and hashes again (not vouched for by their status)."""
    paths: list[str] = []
    real = lint_cache.LintCache._read

    def counted(self: Any, path: str, *args: Any) -> tuple[str | None, str]:
        text, digest = real(self, path, *args)
        if text is not None:
            paths.append(path)
        return text, digest

    monkeypatch.setattr(lint_cache.LintCache, "_read", counted)
    return paths


def _names(root: Path, paths: list[str]) -> set[str]:
    return {(root / path).resolve().relative_to(root.resolve()).as_posix() for path in paths}


def _warm_and_fresh(
    root: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], None] | None
) -> tuple[LintResult, LintResult, list[int], list[str]]:
    if edit is not None:
        edit(root)
    calls = fresh_calls(monkeypatch)
    hashed = _hashed(monkeypatch)
    warm = lint_project(["."], cache_dir=folder)
    monkeypatch.undo()
    monkeypatch.chdir(root)
    return warm, lint_project(["."]), calls, hashed


@pytest.mark.parametrize(("edit", "changes"), [e[1:] for e in STATUS_EDITS], ids=[e[0] for e in STATUS_EDITS])
def test_a_warm_run_right_after_the_cold_one_hashes_and_sees_every_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], None] | None, changes: bool
) -> None:
    """Files changed less than TRUST_MARGIN_NS before the writing run began are hashed on each warm run: an
    edit within the same tick of the clock (same size, same times) is still seen."""
    root = tmp_path / "project"
    build(root)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    first = lint_project(["."], cache_dir=folder)
    warm, fresh, calls, hashed = _warm_and_fresh(root, folder, monkeypatch, edit)
    assert shape(warm) == shape(fresh)
    assert (shape(fresh) != shape(first)) is changes
    assert calls == ([1] if changes else [])
    if not changes:  # every file too recent to be vouched for by its status
        assert _names(root, hashed) == {name for name in PROJECT if name != "pyproject.toml"}


def _trusted_warm_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, LintResult]:
    """A project linted once by a run made to begin well after its files were written (their status trusted):
    its root, the cache folder and that run's result."""
    root = tmp_path / "project"
    build(root)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    with monkeypatch.context() as patch:
        patch.setattr(lint_cache, "_now_ns", lambda: time.time_ns() + 10 * lint_cache.TRUST_MARGIN_NS)
        first = lint_project(["."], cache_dir=folder)
    return root, folder, first


@pytest.mark.parametrize(("edit", "changes"), [e[1:] for e in STATUS_EDITS], ids=[e[0] for e in STATUS_EDITS])
def test_a_warm_run_trusts_an_old_status_and_hashes_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], None] | None, changes: bool
) -> None:
    """The writing run made to begin well after the files were written (as on a project not edited for a
    while): an unchanged status is trusted (no hash), any other is hashed, and the result is a fresh run's.
    Each edit comes a whole lint run after the files were written, so in a later tick of the file system's
    clock: its change time differs (in real use, the margin makes that so: a trusted status is over 2 s older
    than any later change)."""
    root, folder, first = _trusted_warm_run(tmp_path, monkeypatch)
    warm, fresh, calls, hashed = _warm_and_fresh(root, folder, monkeypatch, edit)
    assert shape(warm) == shape(fresh)
    assert (shape(fresh) != shape(first)) is changes
    assert calls == ([1] if changes else [])
    if edit is None:
        assert hashed == []  # every status vouched for its digest
    elif edit is _touched:
        assert _names(root, hashed) == {"trip/prompt.py"}  # its status changed: hashed, found the same


def test_a_file_written_while_the_cold_run_read_it_is_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit after the run read a file but before it wrote the entry: the status kept is the new file's, the
    digest the old text's; the file changed after the run began, so its status is never trusted."""
    root = tmp_path / "project"
    build(root)
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    real = lint_cache.LintCache._store

    def edit_then_store(self: Any, *args: Any) -> None:
        _same_size_edit(root)
        real(self, *args)

    with monkeypatch.context() as patch:
        patch.setattr(lint_cache.LintCache, "_store", edit_then_store)
        lint_project(["."], cache_dir=folder)
    warm, fresh, calls, _ = _warm_and_fresh(root, folder, monkeypatch, None)
    assert calls == [1]
    assert shape(warm) == shape(fresh)


def test_a_warm_run_asks_nothing_below_a_folder_not_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules an import looked for and did not find are checked still missing, those in a folder not there
    (`trip/vendor/lib/prompts.py`, `vendor/...` above each folder) by that folder's one `lstat`."""
    root = tmp_path / "project"
    build(root, {**PROJECT, "trip/more.py": MORE})
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    with monkeypatch.context() as patch:
        patch.setattr(lint_cache, "_now_ns", lambda: time.time_ns() + 10 * lint_cache.TRUST_MARGIN_NS)
        lint_project(["."], cache_dir=folder)
    asked: list[str] = []
    lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: asked.append(str(path)) or lstat(path, *a, **k))
    calls = fresh_calls(monkeypatch)
    lint_project(["."], cache_dir=folder)
    assert calls == []  # from the cache
    inside = str(root.resolve()) + os.sep
    below = [path for path in asked if path.startswith(inside) and f"{os.sep}vendor{os.sep}" in path]
    assert not below, below
    assert any(path.endswith(f"trip{os.sep}vendor") for path in asked)


def _entry(folder: Path) -> dict[str, Any]:
    (entry,) = folder.glob("*.json")
    data: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(
    ("change", "fresh"),
    [
        (None, False),
        (lambda root: (root / "trip/vendor").mkdir(), True),  # empty, but there: what is below is asked again
        (lambda root: (root / "trip/vendor").write_text("", encoding="utf-8"), True),  # a file: another failure
        (lambda root: (root / "trip/vendor").symlink_to(root.parent), True),  # a link to a folder
        (lambda root: (root / "trip/vendor").symlink_to(root / "nowhere"), True),  # a link to nothing
        (lambda root: (root / "trip/lib").mkdir(), False),  # a folder no import looked in
    ],
    ids=["unchanged", "folder-made", "file-in-its-place", "link-in-its-place", "dangling-link", "another-folder"],
)
def test_an_entry_lists_a_folder_not_there_once_for_the_modules_looked_for_below_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], Any] | None, fresh: bool
) -> None:
    root = tmp_path / "project"
    build(root, {**PROJECT, "trip/more.py": MORE})
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    lint_project(["."], cache_dir=folder)
    inputs = _entry(folder)["inputs"]
    gone = [item[0] for item in inputs if item[1:] == ["gone"]]
    assert os.path.join(str(root.resolve()), "trip", "vendor") in gone or os.path.join("trip", "vendor") in gone
    inside = [item[0] for item in inputs if item[0].startswith(str(root.resolve())) or not os.path.isabs(item[0])]
    assert not [path for path in inside if f"{os.sep}vendor{os.sep}" in path]  # nothing below it
    if change is not None:
        change(root)
    calls = fresh_calls(monkeypatch)
    cached = lint_project(["."], cache_dir=folder)
    assert calls == ([1] if fresh else [])
    monkeypatch.undo()
    monkeypatch.chdir(root)
    assert shape(cached) == shape(lint_project(["."]))


@pytest.mark.parametrize(
    ("path", "failure", "gone"),
    [
        ("a/b/x.py", None, "a"),
        ("here/b/x.py", None, "here/b"),
        ("here/x.py", None, None),  # its folder is there: the file itself
        ("a/./x.py", None, None),  # not as a path is normally written: the file itself
        ("a/x.py", "!outside the root: a/x.py", None),  # another failure
    ],
    ids=["highest-folder", "below-a-folder-there", "folder-there", "not-normal", "other-failure"],
)
def test_a_file_not_found_in_a_folder_not_there_is_listed_as_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, failure: str | None, gone: str | None
) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path)
    path = path.replace("/", os.sep)
    digest = failure or lint_cache._failure(FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path))
    listed = lint_cache._listed({path: ("text", digest)})
    assert listed == ([[gone.replace("/", os.sep), "gone"]] if gone is not None else [[path, "text", digest]])


def test_a_folder_not_there_whose_parent_now_leads_out_of_the_root_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`trip/texts/d` is not there (the text file an agent reads, `trip/texts/d/w.txt`, neither): the entry lists
    it. Its parent moved out of the root, a link left in its place: `d` is still not there, but a fresh run now
    refuses the file as outside the root, so the entry is not used."""
    agent = PROJECT["trip/agent.py"].replace("load('writer.txt')", "load('texts/d/w.txt')")
    root = tmp_path / "project"
    build(root, {**PROJECT, "trip/agent.py": agent})
    (root / "trip/texts").mkdir()
    monkeypatch.chdir(root)
    folder = tmp_path / "cache"
    lint_project(["."], cache_dir=folder)
    gone = [item[0] for item in _entry(folder)["inputs"] if item[1:] == ["gone"]]
    assert [Path(path).parts[-3:] for path in gone if "texts" in path] == [("trip", "texts", "d")]
    (root / "trip/texts").rename(tmp_path / "texts")
    (root / "trip/texts").symlink_to(tmp_path / "texts")
    calls = fresh_calls(monkeypatch)
    cached = lint_project(["."], cache_dir=folder)
    assert calls == [1]
    monkeypatch.undo()
    monkeypatch.chdir(root)
    assert shape(cached) == shape(lint_project(["."]))


@pytest.mark.parametrize(
    "asked",
    [
        [("in/a.py", True), ("in/b.py", True), ("out/a.py", False)],
        [("out/.", True), ("out/a.py", False)],  # `out/.` is the root's `out`, not a file of `out/`
        [("out/x/..", True), ("out/x/a.py", False)],
        [("a.py", True), ("/a.py", False)],  # the current folder's file, then the file system root's
    ],
    ids=["same-folder", "dot-last", "dot-dot-last", "current-folder-and-slash"],
)
def test_a_folder_known_inside_the_root_by_how_a_path_writes_it_is_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked: list[tuple[str, bool]]
) -> None:
    """`_inside` remembers a folder inside the root by the path as written (`in/` of `in/a.py`); a path whose last
    part is `.` or `..` names another folder than the one written before it, and is not remembered so."""
    root = tmp_path / "project"
    (root / "in").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "out").symlink_to(tmp_path / "outside")  # a folder of the root that leads out of it
    monkeypatch.chdir(root)
    cache = lint_cache.LintCache(tmp_path / "cache")
    cache._cwd = os.getcwd()
    for path, expected in asked:
        assert cache._inside(path.replace("/", os.sep), root.resolve(), link=False) is expected, path


def test_a_warm_run_reads_a_files_text_when_it_is_first_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, folder, _ = _trusted_warm_run(tmp_path, monkeypatch)
    read: list[str] = []
    real = lint_cache.LintCache._text

    def counted(self: Any, path: str, *args: Any) -> str | None:
        read.append(Path(path).name)
        return real(self, path, *args)

    monkeypatch.setattr(lint_cache.LintCache, "_text", counted)
    looked: list[str] = []
    real_read = lint_cache.LintCache._read
    monkeypatch.setattr(
        lint_cache.LintCache, "_read", lambda self, path, *a: looked.append(path) or real_read(self, path, *a)
    )
    warm = lint_project(["."], cache_dir=folder)
    assert looked == []  # nothing hashed: the files' status and the modules looked for and still missing vouch
    shown = {Path(d.path or "").name for d in warm.diagnostics if d.span is not None}
    assert shown
    assert set(read) == shown
    assert "tools.py" not in read
    assert "trip/tools.py" in warm.sources
    assert warm.sources["trip/tools.py"] == (root / "trip/tools.py").read_text(encoding="utf-8")
    assert read.count("tools.py") == 1
    warm.sources["trip/tools.py"]
    assert read.count("tools.py") == 1  # read once
    monkeypatch.undo()
    monkeypatch.chdir(root)
    assert shape(warm) == shape(lint_project(["."]))


def test_a_file_gone_before_its_text_is_asked_for_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, folder, _ = _trusted_warm_run(tmp_path, monkeypatch)
    warm = lint_project(["."], cache_dir=folder)
    (root / "trip/tools.py").unlink()
    with pytest.raises(cache_dir.LintCacheError, match=r"tools\.py: changed while its cached findings were given"):
        warm.sources["trip/tools.py"]
