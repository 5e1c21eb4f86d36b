"""The editor set-ups of docs/editors.md, run as written in real editors: headless Neovim and Emacs in batch mode.

Each test copies a set-up from the page (the fenced block after its `<!-- tested: NAME -->` marker), starts the
editor with it on a small project holding two seeded mistakes, and checks that the findings of `templating lsp`
arrive (the editor's own diagnostics, written to a file), for an agent module and for a `.prompt` file; then it
adds `ignore = ["T014"]` to `pyproject.toml`, saves it, and checks that the agent module's finding goes away (a
saved `pyproject.toml` reaches the server only when the set-up lists TOML).

The set-ups run `templating lsp` from PATH: the directory of this Python's `templating` command comes first
(the installed package in CI; the editable install of a checkout), with PYTHONPATH naming the package the tests
import. Without the editor a test is skipped, unless TEMPLATING_REQUIRE_NVIM=1 or TEMPLATING_REQUIRE_EMACS=1 (as in
CI, where .ci/run installs Debian's `neovim`, `emacs-nox` and `elpa-eglot`) makes it fail. The waits inside the
editors (120 s each) only bound a run that would otherwise hang: they judge no speed."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

import templating

pytestmark = pytest.mark.slow  # a real editor and a language server each

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "editors.md"

PYPROJECT = '[tool.templating]\ninclude = ["**/*.py", "prompts/*.prompt"]\n'
# The reviewer reads {plann}: nothing writes it (T014; the planner writes "plan").
AGENT = """from google.adk.agents import LlmAgent, SequentialAgent

planner = LlmAgent(name="planner", model="gemini-2.5-flash", instruction="Plan the trip.", output_key="plan")
reviewer = LlmAgent(name="reviewer", model="gemini-2.5-flash", instruction="Check {plann}.", output_key="review")
root_agent = SequentialAgent(name="root", sub_agents=[planner, reviewer])
"""
# A placeholder with spaces inside renders as literal text (T002).
PROMPT = "Hello < name >, your order is <status>.\n"

AGENT_FINDING = ("T014", 3, AGENT.splitlines()[3].index("{plann}"))  # code, 0-based line, column (ASCII)
PROMPT_FINDING = ("T002", 0, PROMPT.index("< name >"))
WAIT_SECONDS = 120  # a liveness bound inside the editor, per wait


def documented(name: str) -> str:
    """The fenced block after `<!-- tested: name -->` on docs/editors.md, exactly as the page shows it."""
    page = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(rf"^<!-- tested: {re.escape(name)} -->\n```[\w-]+\n(.*?)^```$", page, re.M | re.S)
    assert len(blocks) == 1, f"docs/editors.md should hold one fenced block after <!-- tested: {name} -->"
    return str(blocks[0])


def missing(switch: str, reason: str) -> NoReturn:
    """Skip the test, saying what is missing; fail instead when `switch` is set to 1 (as in CI)."""
    if os.environ.get(switch) == "1":
        pytest.fail(f"{switch}=1 but {reason}")
    pytest.skip(reason)


def require(program: str, switch: str) -> str:
    """The path of `program` on PATH, or `missing`."""
    found = shutil.which(program)
    if found is None:
        missing(switch, f"{program} is not installed")
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "prompts").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "prompts" / "support.prompt").write_text(PROMPT, encoding="utf-8")
    return root


@pytest.fixture
def server_env(tmp_path: Path) -> dict[str, str]:
    """The environment the editors run in: `templating` on PATH, no user configuration."""
    if importlib.util.find_spec("pygls") is None or importlib.util.find_spec("lsprotocol") is None:
        missing("TEMPLATING_REQUIRE_LSP", "the lsp extra (pygls, lsprotocol) is not installed")
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "templating").is_file():
        pytest.fail(f"no `templating` command beside {sys.executable}: install the package (pip install -e '.[lsp]')")
    package_parent = Path(templating.__file__).resolve().parent.parent
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "PATH": str(bin_dir) + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(package_parent),
        "HOME": str(home),  # no user configuration of the editors, nothing written to the real home
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "TEMPLATING_OUT": str(tmp_path / "out"),
    }


def run_editor(command: list[str], project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    Path(env["TEMPLATING_OUT"]).mkdir()
    # Three waits of WAIT_SECONDS at most, and the editor's start: a bound for a hung editor, not a speed.
    return subprocess.run(
        command,
        cwd=project,
        env=env,
        timeout=4 * WAIT_SECONDS,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def findings(out: Path, name: str, done: subprocess.CompletedProcess[str]) -> list[tuple[str, int, int]]:
    file = out / f"{name}.json"
    assert file.is_file(), f"the editor wrote no {file.name} (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return [(d["code"], d["line"], d["column"]) for d in json.loads(file.read_text(encoding="utf-8"))]


def check(out: Path, done: subprocess.CompletedProcess[str]) -> None:
    log = f"(exit {done.returncode})\n{done.stdout}\n{done.stderr}"
    assert findings(out, "agent", done) == [AGENT_FINDING], log
    assert findings(out, "prompt", done) == [PROMPT_FINDING], log
    assert findings(out, "agent_saved", done) == [], f"the saved pyproject.toml did not reach the server {log}"


# Plays the user after the documented init.lua: agent.py is open (a file argument); waits for its findings, opens
# the prompt file and waits for its findings, then edits and writes pyproject.toml and waits for agent.py's to go.
NVIM_USER = f"""
local out = os.getenv("TEMPLATING_OUT")
local function wait_for(bufnr, done)
  vim.wait({WAIT_SECONDS * 1000}, function() return done(#vim.diagnostic.get(bufnr)) end, 50)
end
local function dump(name, bufnr)
  local found = {{}}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = (d.user_data or {{}}).lsp or {{}}
    table.insert(found, {{ code = d.code or lsp.code or vim.NIL, line = d.lnum, column = d.col, message = d.message }})
  end
  vim.fn.writefile({{ vim.fn.json_encode(found) }}, out .. "/" .. name .. ".json")
end
local agent = vim.api.nvim_get_current_buf()
wait_for(agent, function(n) return n > 0 end)
dump("agent", agent)
vim.cmd("edit prompts/support.prompt")
local prompt = vim.api.nvim_get_current_buf()
wait_for(prompt, function(n) return n > 0 end)
dump("prompt", prompt)
vim.cmd("edit pyproject.toml")
vim.api.nvim_buf_set_lines(0, -1, -1, false, {{ 'ignore = ["T014"]' }})
vim.cmd("write")
wait_for(agent, function(n) return n == 0 end)
dump("agent_saved", agent)
vim.cmd("qa!")
"""


def test_neovim_setup_as_documented_gets_the_findings(
    project: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    nvim = require("nvim", "TEMPLATING_REQUIRE_NVIM")
    init = tmp_path / "init.lua"
    init.write_text(documented("neovim"), encoding="utf-8")
    user = tmp_path / "user.lua"
    user.write_text(NVIM_USER, encoding="utf-8")
    done = run_editor(
        [nvim, "--headless", "--clean", "-u", str(init), "-S", str(user), "agent.py"], project, server_env
    )
    check(tmp_path / "out", done)


# Plays the user after the documented set-up: opens agent.py, waits for its flymake diagnostics, opens the prompt
# file and waits, then edits and saves pyproject.toml and waits for agent.py's to go. After each file it opens, it
# does what Emacs does after a command outside batch mode: the command loop runs post-command-hook (eglot-ensure
# starts the server there) and redisplay runs window-configuration-change-hook (flymake starts there in a buffer
# that was not yet shown).
EMACS_USER = f"""
;;; -*- lexical-binding: t -*-
(require 'json)
(defvar templating-out (getenv "TEMPLATING_OUT"))
(defvar templating-project default-directory)
(defun templating-open (file)
  (find-file (expand-file-name file templating-project))
  (run-hooks 'post-command-hook)
  (run-hooks 'window-configuration-change-hook)
  (current-buffer))
(defun templating-found (buffer)
  (with-current-buffer buffer
    (mapcar (lambda (d)
              (let ((beg (flymake-diagnostic-beg d))
                    (text (flymake-diagnostic-text d)))
                (list (cons 'code (and (string-match "\\\\[\\\\([A-Z][0-9]+\\\\)\\\\]" text) (match-string 1 text)))
                      (cons 'line (1- (line-number-at-pos beg)))
                      (cons 'column (save-excursion (goto-char beg) (current-column)))
                      (cons 'message text))))
            (flymake-diagnostics))))
(defun templating-wait (buffer done)
  (let ((deadline (+ (float-time) {WAIT_SECONDS})))
    (while (and (not (funcall done (length (templating-found buffer)))) (< (float-time) deadline))
      (accept-process-output nil 0.05))))
(defun templating-dump (name buffer)
  (let ((found (templating-found buffer)))
    (with-temp-file (expand-file-name (concat name ".json") templating-out)
      (insert (json-encode (vconcat found))))))
(let ((agent (templating-open "agent.py")))
  (templating-wait agent (lambda (n) (> n 0)))
  (templating-dump "agent" agent)
  (let ((prompt (templating-open "prompts/support.prompt")))
    (templating-wait prompt (lambda (n) (> n 0)))
    (templating-dump "prompt" prompt))
  (with-current-buffer (templating-open "pyproject.toml")
    (goto-char (point-max))
    (insert "ignore = [\\"T014\\"]\\n")
    (save-buffer))
  (templating-wait agent #'zerop)
  (templating-dump "agent_saved" agent))
(kill-emacs 0)
"""


def test_emacs_eglot_setup_as_documented_gets_the_findings(
    project: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    emacs = require("emacs", "TEMPLATING_REQUIRE_EMACS")
    probe = subprocess.run(
        [emacs, "--batch", "--eval", '(kill-emacs (if (locate-library "eglot") 0 1))'],
        env=server_env,
        capture_output=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    if probe.returncode != 0:
        missing("TEMPLATING_REQUIRE_EMACS", "eglot is not installed (built in from Emacs 29; Debian: elpa-eglot)")
    git = require("git", "TEMPLATING_REQUIRE_EMACS")  # project.el of Emacs 28 finds a project by its VCS
    subprocess.run([git, "init", "--quiet", str(project)], check=True, timeout=WAIT_SECONDS, env=server_env)
    setup = tmp_path / "setup.el"
    setup.write_text(documented("emacs-eglot"), encoding="utf-8")
    user = tmp_path / "user.el"
    user.write_text(EMACS_USER, encoding="utf-8")
    done = run_editor([emacs, "--batch", "-l", str(setup), "-l", str(user)], project, server_env)
    check(tmp_path / "out", done)
