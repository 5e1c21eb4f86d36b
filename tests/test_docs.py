"""The documentation runs and is whole: the README and every page under ``docs/``.

Every ```python block runs, every ```py-adk block when google-adk is installed, and every
```py-sql block when the sql extra is. With ``TEMPLATING_REQUIRE_ADK=1`` (set by CI) a ``py-adk``
block fails instead of skipping when google-adk is missing; with ``TEMPLATING_REQUIRE_POSTGRES=1``
(set by CI) so does a ``py-sql`` block without SQLAlchemy.

Each block runs on its own, in a fresh Python process (``python -I``, so it imports the installed
package and sees nothing from the blocks before it or from the test run), from the repository's
root, so every example is complete as written. Examples check themselves with ``assert``; a block
fails the test by raising. A block that defines pytest tests (``def test_...``) is run by pytest
instead, twice: once to write its snapshots, once to check against them.

Figures: docs/performance.md quotes lines of its benches' output, each of which must have the shape of a line
the bench prints, and states no figure in prose; the README's figures are a part of one of those quotes.

The site itself: every lint rule the linter knows has its page at ``docs/rules/<CODE>.md`` (the
address ``rule_url`` gives), every page is in the navigation of ``mkdocs.yml``, and the site's
address there is the one the code uses (``templating.linter.DOCS_URL``).

The site is built with ``.ci/run``'s own ``mkdocs build`` line (``--strict``, without ``--quiet``, which would
hide the warnings from it), so any warning fails it: a copy of the docs with a cross-reference broken on purpose
must fail to build. ``py-adk`` and ``py-sql`` blocks are highlighted as Python on the site.

The API reference: each module's section of the built API page is checked for what a docstring
not written in Markdown leaves: a raw reST role (``:class:``, ``:meth:``, ``:param`` ...), a code
block made by accident (indentation, a real line break in a string) and a ``<key>``-like tag the
browser reads as HTML. A failure names the object whose docstring it is in.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import installed

from templating.linter import DOCS_URL, RULES, SYNTAX_CHECKS, rule_url

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"
PAGES = sorted(DOCS.rglob("*.md"))
# A fence opening at the start of a line: ```python, ```py-adk or ```py-sql, up to the closing ``` line.
FENCE = re.compile(r"^```(?P<lang>[\w-]+)[ \t]*\n(?P<code>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
RUN = {"python": None, "py-adk": "google.adk", "py-sql": "sqlalchemy"}  # language -> module it needs (None: always)
REQUIRE = {"py-adk": ("TEMPLATING_REQUIRE_ADK", "adk"), "py-sql": ("TEMPLATING_REQUIRE_POSTGRES", "sql")}


def blocks(path: Path) -> list[tuple[str, str, int, str]]:
    """(file, language, line of the opening fence, code) for each runnable block of one file, in order."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT).as_posix()
    found = []
    for match in FENCE.finditer(text):
        if match["lang"] in RUN:
            found.append((name, match["lang"], text.count("\n", 0, match.start()) + 1, match["code"]))
    return found


BLOCKS = [block for path in [README, *PAGES] for block in blocks(path)]


@pytest.mark.parametrize("path", [README, DOCS / "index.md"], ids=["README", "docs-index"])
def test_the_front_pages_have_python_examples(path: Path) -> None:
    assert any(lang == "python" for _, lang, _, _ in blocks(path))


@pytest.mark.parametrize(
    ("name", "lang", "line", "code"), BLOCKS, ids=[f"{name}:{line}-{lang}" for name, lang, line, _ in BLOCKS]
)
def test_example_runs(name: str, lang: str, line: int, code: str, tmp_path: Path) -> None:
    needs = RUN[lang]
    if needs is not None and not installed(needs):
        switch, extra = REQUIRE[lang]
        if os.environ.get(switch) == "1":  # CI: the ADK and SQL examples must run, not skip
            pytest.fail(f"{name}:{line} needs {needs}, and {switch}=1", pytrace=False)
        pytest.skip(f"{name}:{line} needs {needs} (pip install '.[{extra}]')")
    if re.search(r"^def test_", code, re.MULTILINE):
        run_as_pytest(code, name, line, tmp_path)
        return
    result = subprocess.run([sys.executable, "-I", "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{name}:{line} failed:\n{result.stderr}"


# A ```console block shows `templating` commands (each on a `$ ` line) and what they print, stdout then stderr,
# as a terminal shows them; a last line `...` stands for the rest of the output. Each runs from the repository's
# root, as `python -m templating` of the interpreter running the tests.
CONSOLE = [
    (path.relative_to(ROOT).as_posix(), text.count("\n", 0, match.start()) + 1, match["code"])
    for path in [README, *PAGES]
    for text in [path.read_text(encoding="utf-8")]
    for match in FENCE.finditer(text)
    if match["lang"] == "console"
]


def console_commands(code: str) -> list[tuple[str, str]]:
    """(command, output it shows) for each `$ ` line of a console block."""
    shown: list[tuple[str, str]] = []
    for line in code.splitlines(keepends=True):
        if line.startswith("$ "):
            shown.append((line[2:].strip(), ""))
        else:
            assert shown, f"a console block starts with a `$ ` command line, not {line!r}"
            shown[-1] = (shown[-1][0], shown[-1][1] + line)
    return shown


@pytest.mark.parametrize(("name", "line", "code"), CONSOLE, ids=[f"{name}:{line}" for name, line, _ in CONSOLE])
def test_console_output_is_what_the_command_prints(name: str, line: int, code: str) -> None:
    for command, shown in console_commands(code):
        args = shlex.split(command)
        assert args[0] == "templating", f"{name}:{line}: only `templating` commands run here, not {command!r}"
        if args[1:2] in (["preview"], ["diff"]) and not installed("google.adk"):  # shows google-adk's exact request
            if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
                pytest.fail(f"{name}:{line} needs google-adk, and TEMPLATING_REQUIRE_ADK=1", pytrace=False)
            pytest.skip(f"{name}:{line}: `{command}` shows google-adk's request (pip install '.[adk]')")
        result = subprocess.run(
            [sys.executable, "-m", "templating", *args[1:]], cwd=ROOT, capture_output=True, text=True, check=False
        )
        printed = result.stdout + result.stderr
        if shown.endswith("\n...\n"):
            head = shown[: -len("...\n")]
            assert printed.startswith(head), f"{name}:{line}: `{command}` printed:\n{printed}"
            assert printed != head, f"{name}:{line}: `{command}` printed nothing where the block shows `...`"
        else:
            assert printed == shown, f"{name}:{line}: `{command}` printed:\n{printed}"


def test_the_getting_started_page_shows_the_linter_on_an_adk_project() -> None:
    page = GETTING_STARTED.relative_to(ROOT).as_posix()
    commands = [command for name, _, code in CONSOLE if name == page for command, _ in console_commands(code)]
    assert "templating lint examples/adk_project" in commands


def run_as_pytest(code: str, name: str, line: int, folder: Path) -> None:
    (folder / f"test_example_line_{line}.py").write_text(code, encoding="utf-8")
    for extra in (["--snapshot-update"], []):
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"{name}:{line} tests failed:\n{result.stdout}\n{result.stderr}"
    assert list(folder.glob("__snapshots__/**/*.prompt.snap")), "the example's snapshots were written"


# --- the set-up commands: one set-up for development (docs/contributing.md), the one .ci/run installs; the README
# and getting-started lead with the same commands from a fresh clone.
CI_RUN = ROOT / ".ci" / "run"
CONTRIBUTING = DOCS / "contributing.md"
GETTING_STARTED = DOCS / "getting-started.md"


def section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"{path.name} has no {heading!r} section"
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def sh_blocks(text: str) -> list[str]:
    return [match["code"] for match in FENCE.finditer(text) if match["lang"] == "sh"]


def installs(command: str) -> list[set[str]]:
    """The extras of each `pip install` of the checkout in `command`, in order."""
    return [set(found.split(",")) for found in re.findall(r'pip install [^\n]*"\.\[([\w,-]+)\]"', command)]


def test_the_development_set_up_is_what_ci_installs() -> None:
    ci = CI_RUN.read_text(encoding="utf-8")
    setup = section(CONTRIBUTING, "## Set up for development")
    block = sh_blocks(setup)[0]
    assert len(installs(block)) == 1, "one pip install of the checkout in the set-up"
    assert installs(block) == installs(ci)[:1], "docs/contributing.md's set-up installs the extras .ci/run installs"
    ci_packages = set(re.findall(r"apt-get install -y --no-install-recommends ([\w+ -]+)", ci))
    ci_packages = {name for names in ci_packages for name in names.split()}
    documented = re.findall(r"apt-get install ([\w+ -]+)", block)
    assert len(documented) == 1
    assert set(documented[0].split()) == ci_packages, "the set-up installs the Debian packages .ci/run installs"
    # VS Code for the extension's end-to-end test: the same npm steps, Node 24's headers named the same way
    steps = ("editors/vscode/e2e", "npm ci --ignore-scripts --no-audit --no-fund", "npm_config_nodedir=", "npm rebuild")
    for step in steps:
        assert step in ci, f".ci/run does not run {step!r}"
        assert step in block, f"docs/contributing.md's set-up does not run {step!r} as .ci/run does"
    switches = set(re.findall(r"\bTEMPLATING_REQUIRE_[A-Z]+\b", ci))
    assert switches, ".ci/run sets TEMPLATING_REQUIRE_* switches"
    for switch in sorted(switches):
        assert f"`{switch}=1`" in setup, f"docs/contributing.md's set-up does not say what {switch}=1 does"


def test_ci_also_runs_the_fast_tests_with_only_what_the_readme_installs() -> None:
    # A test that errors instead of skipping when an extra is missing would pass in the full venv and fail
    # for a newcomer who followed the README: CI runs the fast tests a second time, with only `.[dev]`.
    ci = CI_RUN.read_text(encoding="utf-8")
    assert installs(ci)[1:] == [{"dev"}], ".ci/run installs the dev extra alone in a second venv"
    assert installs(sh_blocks(README.read_text(encoding="utf-8"))[0]) == [{"dev"}], "the README installs .[dev]"
    dev_run = ci.split('"$dev_venv/bin/activate"', 1)[1]
    assert 'unset "${!TEMPLATING_REQUIRE_@}"' in ci.split('"$dev_venv/bin/activate"', 1)[0].rsplit("(", 1)[1]
    assert re.search(r'^\s*pytest -m "not slow"$', dev_run, re.MULTILINE), "it runs the fast tests there"


def test_every_switch_a_test_reads_is_set_by_ci() -> None:
    read = {
        switch
        for path in sorted((ROOT / "tests").glob("*.py"))
        for switch in re.findall(r"\bTEMPLATING_REQUIRE_[A-Z]+\b", path.read_text(encoding="utf-8"))
    }
    assert read, "the tests read TEMPLATING_REQUIRE_* switches"
    assert read <= set(re.findall(r"\bTEMPLATING_REQUIRE_[A-Z]+\b", CI_RUN.read_text(encoding="utf-8")))


def test_the_readme_and_getting_started_lead_with_the_same_commands_from_a_clone() -> None:
    source = re.findall(r'^Source = "(\S+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.MULTILINE)
    assert len(source) == 1
    first = [sh_blocks(path.read_text(encoding="utf-8"))[0].splitlines() for path in (README, GETTING_STARTED)]
    assert first[0][:3] == first[1][:3], "the README and getting-started set up the same way"
    clone, cd, venv = first[0][:3]
    assert clone == f"git clone {source[0]}"
    assert cd == f"cd {source[0].rsplit('/', 1)[1]}"
    assert venv == 'python3 -m venv .venv && . .venv/bin/activate && pip install ".[dev]"'


def test_the_readme_says_the_pypi_name_is_not_published_yet() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "nothing is published on PyPI yet" in text
    assert "`pip install agent-prompt-templating`" in text


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav names (paths relative to docs/), read without a YAML library."""
    text = MKDOCS.read_text(encoding="utf-8")
    nav = text[text.index("\nnav:\n") :]
    return re.findall(r"^\s*- (?:[^\n]*?: )?([\w./-]+\.md)\s*$", nav, re.MULTILINE)


def tables(text: str) -> list[str]:
    """Every Markdown table in ``text``, each as its lines joined."""
    rows = re.findall(r"(?:^\|[^\n]*\|[ \t]*(?:\n|\Z))+", text, re.MULTILINE)
    return ["\n".join(line.rstrip() for line in found.splitlines()) for found in rows]


# --- figures: docs/performance.md (and the README's Performance section) quote only what a bench prints. Each
# figure stands in a ```text block that opens with the bench's command line, `$ python bench/bench_NAME.py ...`,
# followed by lines copied from its output; every such line must have the shape of a line the script prints (one
# of its f-strings or string literals, its fields standing for any value). Nothing is run and no time is checked:
# a bench whose output changes, or a figure no bench prints, fails here until the page quotes a new run.
PERFORMANCE = DOCS / "performance.md"
BENCH_COMMAND = re.compile(r"^\$ python (bench/bench_\w+\.py)(?: [^\n]*)?$")
# A measured figure stated in prose (outside a quote of a bench's output): a number with a unit of time or a ratio.
PROSE_FIGURE = re.compile(r"\d[\d.,]*\s*(?:x\b|\u00d7|ms\b|µs\b|us\b|seconds?\b|times\b|%)")


def bench_quotes(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, bench script, quoted output lines) of each ```text block of `path` that opens with a bench's command."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        first, *rest = match["code"].splitlines() or [""]
        command = BENCH_COMMAND.match(first)
        if match["lang"] == "text" and command:
            found.append((text.count("\n", 0, match.start()) + 1, command[1], rest))
    return found


def _normal(text: str) -> str:
    return " ".join(text.split())


def printed_lines(script: Path) -> list[re.Pattern[str]]:
    """A pattern for each line `script` can print: the lines of its string literals and f-strings, joined with `+`
    where the code joins them, whitespace runs made one space; a field or any other expression stands for any text.
    Only lines with some words of their own count (not a bare `{value}` or `" | "`)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))

    def _literal(node: ast.expr) -> str | None:  # a part of an f-string: its text, a field of a str literal too
        if isinstance(node, ast.FormattedValue):
            node = node.value
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    def parts(node: ast.expr) -> list[str | None]:  # text, or None for a value
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            return [_literal(value) for value in node.values]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return parts(node.left) + parts(node.right)
        return [None]

    patterns = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp):
            continue
        lines: list[list[str | None]] = [[]]
        for part in parts(node):
            if part is None:
                lines[-1].append(None)
                continue
            first, *more = part.split("\n")
            lines[-1].append(first)
            lines.extend([piece] for piece in more)
        for line in lines:
            own = "".join(piece for piece in line if piece is not None)
            if len(re.findall(r"[A-Za-z]", own)) < 3:
                continue
            regex = "".join(".*?" if piece is None else re.escape(piece) for piece in line)
            regex = re.sub(r"(?:\\ )+", " ", regex)  # an escaped run of spaces: one space, as in _normal
            patterns.append(re.compile(" *".join(part.strip() for part in regex.split(" "))))
    return patterns


def unmatched_quotes(path: Path) -> list[str]:
    wrong = []
    for line, script, quoted in bench_quotes(path):
        source = ROOT / script
        if not source.is_file():
            wrong.append(f"{path.name}:{line}: {script} does not exist")
            continue
        patterns = printed_lines(source)
        for text in quoted:
            if text.strip() in ("", "..."):
                continue
            if not any(pattern.fullmatch(_normal(text)) for pattern in patterns):
                wrong.append(f"{path.name}:{line}: {script} prints no line like {text!r}")
    return wrong


def test_the_performance_page_quotes_only_lines_its_benches_print() -> None:
    assert bench_quotes(PERFORMANCE), "docs/performance.md quotes its benches' output"
    assert not unmatched_quotes(PERFORMANCE), "\n".join(unmatched_quotes(PERFORMANCE))


def test_the_performance_page_states_no_figure_outside_a_quote() -> None:
    text = FENCE.sub("", PERFORMANCE.read_text(encoding="utf-8"))
    found = [f"{m[0]!r} in {line.strip()!r}" for line in text.splitlines() for m in PROSE_FIGURE.finditer(line)]
    assert not found, "figures in prose (quote the bench line that prints them):\n" + "\n".join(found)


def test_the_readme_quotes_its_figures_from_the_performance_page() -> None:
    readme = README.read_text(encoding="utf-8")
    assert "\n## Performance\n" in readme, "the README has a Performance section"
    section = readme.split("\n## Performance\n", 1)[1].split("\n## ", 1)[0]
    assert not PROSE_FIGURE.search(FENCE.sub("", section)), "figures in the README's prose"
    (quote,) = [match["code"] for match in FENCE.finditer(section)]
    page = [match["code"] for match in FENCE.finditer(PERFORMANCE.read_text(encoding="utf-8"))]
    assert BENCH_COMMAND.match(quote.splitlines()[0]), "the README quotes a bench's output"
    assert any(set(quote.splitlines()) <= set(block.splitlines()) for block in page), (
        "the README's figures are not a part of one of docs/performance.md's quotes: copy them from there"
    )


@pytest.mark.parametrize(
    ("printed", "quoted", "matches"),
    [
        (
            'print(f"{size:>5,} keys: ratio = {r:.2f} (target <= 1.5): {met}")',
            "   10 keys: ratio = 1.06 (target <= 1.5): met",
            True,
        ),
        (
            'print(f"{size:>5,} keys: ratio = {r:.2f} (target <= 1.5): {met}")',
            "10 keys: ratio = 1.06 (target <= 2): met",
            False,
        ),
        ('print(f"{name:<8} {t:8.1f} ms   ratio {r:5.2f}")', "warm         4.1 ms   ratio  0.35", True),
        ('print(f"\\nturns: {n}")', "turns: 40", True),
        ('print(f"{a} | " + " | ".join(cells) + f" | {r}x done")', "10 | 1 | 2 | 1.1x done", True),
        ('print(f"{value}")', "anything at all", False),
        ("print(f\"{'':<4} {'median':>8}   {'/ core':>7}\")", "     median   / core", True),
    ],
    ids=["fields", "changed-text", "padding", "newline", "joined", "no-words", "literal-fields"],
)
def test_a_quoted_line_must_have_the_shape_of_a_printed_one(
    printed: str, quoted: str, matches: bool, tmp_path: Path
) -> None:
    script = tmp_path / "bench_x.py"
    script.write_text(printed + "\n", encoding="utf-8")
    assert any(p.fullmatch(_normal(quoted)) for p in printed_lines(script)) is matches


def site_url() -> str:
    found = re.findall(r"^site_url:\s*(\S+)\s*$", MKDOCS.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(found) == 1, "mkdocs.yml sets site_url once"
    return found[0]


def test_the_code_links_to_the_site_mkdocs_builds() -> None:
    assert site_url() == DOCS_URL
    assert DOCS_URL.startswith("https://")
    assert DOCS_URL.endswith("/")
    # rules/T001.md is served at rules/T001/ only with directory URLs (mkdocs' default).
    assert not re.search(r"^use_directory_urls:\s*false", MKDOCS.read_text(encoding="utf-8"), re.MULTILINE)


DESCRIBED = {**RULES, **SYNTAX_CHECKS}  # every code a finding can carry


@pytest.mark.parametrize("code", sorted(DESCRIBED))
def test_every_rule_has_its_page(code: str) -> None:
    page = DOCS / "rules" / f"{code}.md"
    assert page.is_file(), f"no page for {code}: write docs/rules/{code}.md"
    assert rule_url(code) == f"{DOCS_URL}rules/{code}/"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {code} {DESCRIBED[code].name}\n"), "the page's title is its code and name"
    for section in ("## What it catches", "## Why", "## Example", "## Fix", "## How to silence it"):
        assert section in text, f"docs/rules/{code}.md has no {section!r} section"
    assert any(lang == "python" for _, lang, _, _ in blocks(page)), "its example runs in the tests"


def _fix_section(code: str) -> str:
    text = (DOCS / "rules" / f"{code}.md").read_text(encoding="utf-8")
    return text.split("## Fix\n", 1)[1].split("\n## ", 1)[0].strip()


# The rules whose example (the registry's) is a finding by itself: no schema, no Python code needed.
_NEEDS_MORE = {"T001", "T009", "T010", "T011", "T014", "T015", "T021", "T022", "T023", "T029", "T030", "T032"}
_NEEDS_MORE |= {"T024", "T025", "T026", "T027"}  # the run-order rules need an app (tests/test_lint_order.py)
_NEEDS_MORE |= {"T028"}  # a write a state_schema refuses needs an app (tests/test_lint_enforced_schema.py)
_SELF_CONTAINED = sorted(code for code in RULES if code not in _NEEDS_MORE)


@pytest.mark.parametrize("code", _SELF_CONTAINED)
def test_each_rule_page_says_whether_it_has_a_fix(code: str) -> None:
    """The page's "Fix" section agrees with the fixes: "None" when the rule's example gets none, and the
    edit of its first fix named there (as `before` -> `after`) when it gets one."""
    from templating.linter import ADK_ONLY, lint
    from templating.linter.fixes import fixes_for

    example = RULES[code].example
    dialect = "adk" if code in ADK_ONLY else "angle"
    found = [d for d in lint(example, dialect=dialect) if d.code == code]
    assert found, f"{code}'s example {example!r} is not a finding by itself"
    fixes = [fix for d in found for fix in fixes_for(d, example, dialect=dialect)]
    section = _fix_section(code)
    if not fixes:
        assert section.startswith("None"), section
        return
    start, end, new = fixes[0].edits[0]
    assert f"`{example[start:end]}` -> `{new}`" in section, (example[start:end], new, section)
    assert ("unsafe" in section) != fixes[0].safe or "otherwise unsafe" in section


@pytest.mark.parametrize("code", sorted(RULES))
def test_each_rule_page_says_how_to_change_its_severity(code: str) -> None:
    """The page's `severity = { CODE = "level" }` line is valid configuration, at a level other than the rule's."""
    import tomllib

    from templating.linter.config import severities

    text = (DOCS / "rules" / f"{code}.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"`(severity = \{ " + code + r' = "\w+" \})` under `\[tool\.templating\]`', text)
    (level,) = severities(tomllib.loads(example)["severity"], "the page").values()
    assert level != RULES[code].severity


@pytest.mark.parametrize("code", sorted(DESCRIBED))
def test_each_rule_page_header_agrees_with_the_registry(code: str) -> None:
    rule = DESCRIBED[code]
    header = (DOCS / "rules" / f"{code}.md").read_text(encoding="utf-8").splitlines()[4]
    cells = [cell.strip() for cell in header.strip("|").split("|")]
    assert cells[:3] == [f"`{code}`", f"`{rule.name}`", rule.severity]
    default = cells[3]
    if code in SYNTAX_CHECKS:
        assert default.startswith("always on")
    else:
        assert default.startswith("on" if rule.default else "off"), f"{code}: registry default is {rule.default}"


def test_the_rule_table_in_linting_md_agrees_with_the_registry() -> None:
    rows = {}
    for line in (DOCS / "linting.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| [T") or line.startswith("| [E"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            code = cells[0][1:5]
            rows[code] = (cells[1], cells[-1])
    assert sorted(rows) == sorted(RULES), "the table lists every rule, once"
    for code, (name, severity) in rows.items():
        assert (name, severity) == (RULES[code].name, RULES[code].severity), code


# A range of codes stated in the docs ("T001 to T021", "[T016](rules/T016.md) to [T020](rules/T020.md)",
# "T016..T020", "T002-T008") stands for a whole group of the registry: every rule, every syntax check, or
# the rules of one dialect or scope (ADK's own rules, T016 to T020). A part of a group is written code by
# code ("T016, T017 and T018"), so that a new rule in a group shows where each range must grow.
CODES = [*RULES, *SYNTAX_CHECKS]  # the registry's order
RANGE = re.compile(
    r"\b(?P<first>[TE]\d{3})(?:\]\([^)\s]*\))?(?:\s+to\s+\[?|\s*(?:\.\.|-|\u2013)\s*\[?)(?P<last>[TE]\d{3})\b"
)


def registry_groups() -> dict[str, set[str]]:
    """Every group of codes a range in the docs may name, by a description of what it holds."""
    groups = {"every rule": set(RULES), "every syntax check": set(SYNTAX_CHECKS)}
    for code, rule in RULES.items():
        dialects = "+".join(sorted(rule.dialects))
        groups.setdefault(f"the {dialects} rules", set()).add(code)
        groups.setdefault(f"the {rule.scope}-scope rules", set()).add(code)
        groups.setdefault(f"the {dialects} rules of {rule.scope} scope", set()).add(code)
    return groups


def stated_ranges() -> list[tuple[str, int, str, str]]:
    """(file, line, first code, last code) of every range of codes in the README and the docs (not the changelog,
    which tells what each release had)."""
    found = []
    for path in [README, *PAGES]:
        if path.name == "changelog.md":
            continue
        text = path.read_text(encoding="utf-8")
        for match in RANGE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((path.relative_to(ROOT).as_posix(), line, match["first"], match["last"]))
    return found


def test_a_range_of_codes_in_the_docs_is_a_whole_group_of_the_registry() -> None:
    groups = registry_groups()
    wrong = []
    for name, line, first, last in stated_ranges():
        if first not in CODES or last not in CODES or CODES.index(first) >= CODES.index(last):
            wrong.append(f"{name}:{line}: {first} to {last}: not a range of codes the registry has")
            continue
        start, end = CODES.index(first), CODES.index(last)
        covered = set(CODES[start : end + 1])
        before = CODES[start - 1] if start > 0 else None
        after = CODES[end + 1] if end + 1 < len(CODES) else None
        whole = [
            group for group, codes in groups.items() if covered <= codes and before not in codes and after not in codes
        ]
        if not whole:
            near = [group for group, codes in groups.items() if covered <= codes]
            wrong.append(
                f"{name}:{line}: {first} to {last} is no whole group of the registry, only a part of: "
                f"{', '.join(near) or 'nothing'}; extend the range to the group, or list the codes one by one"
            )
    assert not wrong, "\n".join(wrong)


def test_the_range_tests_read_the_ranges_as_written() -> None:
    # the forms the docs use, so that a change of wording cannot hide a range from the test above
    text = "from [T001](rules/T001.md) to\n[T021](rules/T021.md); T016..T020, T002-T008, E001 to E003; T002, T003"
    assert [(m["first"], m["last"]) for m in RANGE.finditer(text)] == [
        ("T001", "T021"),
        ("T016", "T020"),
        ("T002", "T008"),
        ("E001", "E003"),
    ]
    assert ("docs/index.md", "T001", CODES[len(RULES) - 1]) in [(n, a, b) for n, _, a, b in stated_ranges()], (
        "the home page states the range of every rule"
    )


def test_the_nav_lists_every_rule_by_code_and_name_in_the_registry_order() -> None:
    text = MKDOCS.read_text(encoding="utf-8")
    listed = re.findall(r"^\s*- ([TE]\d{3}) ([\w-]+): rules/([TE]\d{3})\.md\s*$", text, re.MULTILINE)
    assert [(code, name, page) for code, name, page in listed] == [(code, DESCRIBED[code].name, code) for code in CODES]


def test_the_linting_page_links_every_syntax_check() -> None:
    text = (DOCS / "linting.md").read_text(encoding="utf-8")
    for code in SYNTAX_CHECKS:
        assert f"[{code}](rules/{code}.md)" in text, code


def test_rule_pages_are_only_for_known_rules() -> None:
    assert sorted(p.stem for p in (DOCS / "rules").glob("*.md")) == sorted(DESCRIBED)


def test_rule_url_refuses_an_unknown_code() -> None:
    with pytest.raises(ValueError, match="unknown rule 'T999'"):
        rule_url("T999")


def test_every_page_is_in_the_nav_once() -> None:
    named = nav_pages()
    assert len(named) == len(set(named)), "a page is named twice in the nav"
    assert sorted(named) == sorted(p.relative_to(DOCS).as_posix() for p in PAGES)


# The API page: built once for the tests below (needs the docs extra).
API = DOCS / "api.md"
API_MODULES = re.findall(r"^::: (templating\.\w+)$", API.read_text(encoding="utf-8"), re.MULTILINE)
ROLE = re.compile(r":(?:class|meth|func|attr|mod|data|exc|obj):|:param\b|:returns?:|:raises?\b|:rtype:|:type\b")
# Every element mkdocs-material and mkdocstrings write in an API section; any other tag came from a docstring.
HTML_TAGS = set(
    [
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "code",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "kbd",
        "li",
        "ol",
        "p",
        "pre",
        "small",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)


def require_docs_extra() -> None:
    if not installed("mkdocstrings_handlers.python"):
        reason = "building the site needs the docs extra (pip install '.[docs]')"
        if os.environ.get("TEMPLATING_REQUIRE_DOCS") == "1":  # CI: the site must be built, not skipped
            pytest.fail(f"TEMPLATING_REQUIRE_DOCS=1 but {reason}", pytrace=False)
        pytest.skip(reason)


def build_site(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """Build the site of `config` into `site` with .ci/run's own command line (its `mkdocs build` line, read
    from the script), so that what this file checks is what CI runs."""
    lines = [line for line in CI_RUN.read_text(encoding="utf-8").splitlines() if " mkdocs build " in f" {line} "]
    assert len(lines) == 1, ".ci/run builds the site once"
    words = shlex.split(lines[0])
    settings = [word for word in words if re.match(r"^[A-Z_0-9]+=", word)]  # NAME=value before the command
    env = dict(word.split("=", 1) for word in settings)
    command = [str(site) if word == "$site" else word for word in words[len(settings) :]]
    assert command[:2] == ["mkdocs", "build"], command
    return subprocess.run(
        [sys.executable, "-m", *command, "--config-file", str(config)],
        cwd=config.parent,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This site, built once for the module's tests."""
    require_docs_extra()
    site = tmp_path_factory.mktemp("site")
    result = build_site(MKDOCS, site)
    # A cross-reference that resolves nowhere is a warning: `--strict` fails on it, naming the docstring.
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return site


@pytest.fixture(scope="module")
def api_page(site: Path) -> str:
    return (site / "api" / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["py-adk", "py-sql"])
def test_the_site_highlights_the_runnable_python_dialects_as_python(site: Path, lang: str) -> None:
    # ```py-adk and ```py-sql tell this file which examples need an extra; on the site they are Python.
    pages = {name for name, block_lang, _, _ in BLOCKS if block_lang == lang and name.startswith("docs/")}
    assert pages, f"the docs have {lang} blocks"
    for name in sorted(pages):
        page = Path(name).relative_to("docs").with_suffix("")
        html = (site / (page.parent if page.name == "index" else page) / "index.html").read_text(encoding="utf-8")
        opening = rf'<div class="language-{lang} highlight"><pre><span></span><code>'
        shown = re.findall(opening + "(.*?)</code>", html, re.DOTALL)
        assert shown, f"{name}: no {lang} block on the built page"
        for code in shown:  # Python's keywords (from, import, def ...) get pygments' keyword classes
            assert '<span class="kn">import</span>' in code or '<span class="k">' in code, f"{name}: {code[:200]}"


@pytest.mark.slow
def test_a_broken_cross_reference_fails_the_docs_build(tmp_path: Path) -> None:
    # CI's build must fail on any warning (`--strict`, and no `--quiet`, which hides warnings from it): break a
    # cross-reference on purpose in a copy of the docs and see the build stop, naming it and nothing else.
    require_docs_extra()
    copy = tmp_path / "project"
    shutil.copytree(DOCS, copy / "docs")
    shutil.copy(MKDOCS, copy / "mkdocs.yml")
    shutil.copy(ROOT / "CHANGELOG.md", copy / "CHANGELOG.md")  # the changelog page includes it
    index = copy / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\nSee [`Nowhere`][templating.Nowhere].\n", encoding="utf-8")
    result = build_site(copy / "mkdocs.yml", tmp_path / "site")
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"the build passed with a broken cross-reference:\n{output}"
    warnings = [line for line in output.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1, output
    assert "index.md" in warnings[0], warnings
    assert "Could not find cross-reference target 'templating.Nowhere'" in warnings[0], warnings


def module_section(page: str, module: str) -> str:
    """The HTML of one module's part of the API page: from its heading to the next module's (or the page's end)."""
    starts = [page.index(f'id="{name}"') for name in API_MODULES]
    index = API_MODULES.index(module)
    end = starts[index + 1] if index + 1 < len(starts) else page.index("</article>", starts[index])
    return page[starts[index] : end]


def where(section: str, offset: int) -> str:
    """The documented object whose docstring holds ``offset``: the nearest heading id before it."""
    found = re.findall(r'id="(templating\.[\w.]+)"', section[:offset])
    return found[-1] if found else "?"


def text_at(section: str, offset: int) -> str:
    return re.sub(r"<[^>]+>", "", section[offset : offset + 120]).split("\n")[0]


def test_the_api_page_documents_every_module_it_names(api_page: str) -> None:
    assert API_MODULES, "docs/api.md has ::: blocks"
    for module in API_MODULES:
        assert f'id="{module}"' in api_page, f"{module} is not on the built API page"
    assert "autorefs-internal" in api_page, "the API page has cross-references"


@pytest.mark.parametrize("module", API_MODULES)
def test_the_api_page_shows_no_raw_role(api_page: str, module: str) -> None:
    section = module_section(api_page, module)
    found = [f"{where(section, m.start())}: {text_at(section, m.start())!r}" for m in ROLE.finditer(section)]
    assert not found, "reST roles shown as text (write Markdown: `code`, [`Name`][templating.Name]):\n" + "\n".join(
        found
    )


@pytest.mark.parametrize("module", API_MODULES)
def test_the_api_page_has_no_accidental_code_block(api_page: str, module: str) -> None:
    # A signature is a code block of its own (class "doc-signature"); a fenced example has its language's class
    # (mkdocs.yml: pygments_lang_class); a block with none is "language-text": write ```json, or the text inline.
    section = module_section(api_page, module)
    found = [
        f"{where(section, m.start())}: {text_at(section, m.end())!r}"
        for m in re.finditer(r'<div class="language-text highlight"><pre>', section)
    ]
    assert not found, "code blocks without a language (an indented line, or a real line break in a string):\n" + (
        "\n".join(found)
    )


@pytest.mark.parametrize("module", API_MODULES)
def test_the_api_page_has_no_stray_tag(api_page: str, module: str) -> None:
    section = module_section(api_page, module)
    found = [
        f"{where(section, m.start())}: <{m[1]}>"
        for m in re.finditer(r"<([A-Za-z][\w:.?-]*)", section)
        if m[1].lower() not in HTML_TAGS
    ]
    assert not found, "tags the browser reads as HTML (put placeholders in backticks):\n" + "\n".join(found)


def _sarif_workflows() -> list[tuple[str, dict[str, object]]]:
    """Every GitHub Actions workflow shown in the docs that uploads a SARIF log, parsed."""
    import yaml

    found = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match["lang"] == "yaml" and "upload-sarif" in match["code"]:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{path.relative_to(ROOT).as_posix()}:{line}", yaml.safe_load(match["code"])))
    return found


def test_the_sarif_upload_in_the_docs_runs_after_findings(tmp_path: Path) -> None:
    """The documented workflow uploads the log even when the lint finds errors, and the job still fails
    on them: checked on the parsed YAML, and by running its lint commands on a project with an error."""
    workflows = _sarif_workflows()
    assert workflows, "no workflow in the docs uploads the SARIF log"
    for where, workflow in workflows:
        jobs = workflow["jobs"]
        assert isinstance(jobs, dict)
        for job in jobs.values():
            assert job["permissions"]["security-events"] == "write", where
            steps = job["steps"]
            upload = next(i for i, step in enumerate(steps) if "upload-sarif" in step.get("uses", ""))
            sarif_file = steps[upload]["with"]["sarif_file"]
            (lint,) = [s for s in steps[:upload] if "--format sarif" in s.get("run", "")]
            assert f"--output-file {sarif_file}" in lint["run"], where
            # the upload runs after a failed step, or the SARIF lint does not fail
            runs_anyway = any(c in str(steps[upload].get("if", "")) for c in ("always()", "!cancelled()"))
            assert runs_anyway or "--exit-zero" in lint["run"], where
            assert not lint.get("continue-on-error"), where  # that would let the job pass on errors
            gates = [s["run"] for s in steps if "templating lint" in s.get("run", "") and "--exit-zero" not in s["run"]]
            assert gates, f"{where}: no step fails the job on error-level findings"
            # run the lint steps as written on a project with an error: the log is written, the gate fails
            project = tmp_path / "project"
            project.mkdir(exist_ok=True)
            (project / "pyproject.toml").write_text('[tool.templating]\ninclude = ["*.prompt"]\n', encoding="utf-8")
            (project / "a.prompt").write_text("Show <example>x</example>\n", encoding="utf-8")
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            for command, code in [(lint["run"], 0), *((gate, 1) for gate in gates)]:
                args = shlex.split(command)
                done = subprocess.run(
                    [sys.executable, "-m", "templating", *args[1:]],
                    cwd=project,
                    env=env,
                    capture_output=True,
                    text=True,
                )
                assert done.returncode == code, (where, command, done.stderr)
            assert '"ruleId": "T007"' in (project / sarif_file).read_text(encoding="utf-8")
