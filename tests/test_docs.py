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

The README's performance table is the performance page's (the same figures, from one bench run).

The site itself: every lint rule the linter knows has its page at ``docs/rules/<CODE>.md`` (the
address ``rule_url`` gives), every page is in the navigation of ``mkdocs.yml``, and the site's
address there is the one the code uses (``templating.linter.DOCS_URL``). ``mkdocs build --strict``
(run by ``.ci/run``) checks the links.

The API reference: the site is built (``mkdocs build --strict``, so a cross-reference that resolves
nowhere fails it), and each module's section of the built API page is checked for what a docstring
not written in Markdown leaves: a raw reST role (``:class:``, ``:meth:``, ``:param`` ...), a code
block made by accident (indentation, a real line break in a string) and a ``<key>``-like tag the
browser reads as HTML. A failure names the object whose docstring it is in.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

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


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize(
    ("name", "lang", "line", "code"), BLOCKS, ids=[f"{name}:{line}-{lang}" for name, lang, line, _ in BLOCKS]
)
def test_example_runs(name: str, lang: str, line: int, code: str, tmp_path: Path) -> None:
    needs = RUN[lang]
    if needs is not None and not _has(needs):
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


def extras(command: str) -> set[str]:
    found = re.findall(r'pip install [^\n]*"\.\[([\w,-]+)\]"', command)
    assert len(found) == 1, f"one pip install of the checkout with extras in {command!r}"
    return set(found[0].split(","))


def test_the_development_set_up_is_what_ci_installs() -> None:
    ci = CI_RUN.read_text(encoding="utf-8")
    setup = section(CONTRIBUTING, "## Set up for development")
    block = sh_blocks(setup)[0]
    assert extras(block) == extras(ci), "docs/contributing.md's set-up installs the extras .ci/run installs"
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


def test_the_readme_performance_table_is_the_performance_page_one() -> None:
    readme = README.read_text(encoding="utf-8")
    assert "\n## Performance\n" in readme, "the README has a Performance section"
    section = readme.split("\n## Performance\n", 1)[1].split("\n## ", 1)[0]
    found = tables(section)
    assert len(found) == 1, f"the README's Performance section has one table (rows are lines from | to |): {found}"
    assert "| state keys | ADK `inject_session_state` |" in found[0]
    assert found[0] in tables((DOCS / "performance.md").read_text(encoding="utf-8")), (
        "the README's performance table differs from the one on docs/performance.md: copy it from there"
    )


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


@pytest.fixture(scope="module")
def api_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    if not _has("mkdocstrings_handlers.python"):
        reason = "building the site needs the docs extra (pip install '.[docs]')"
        if os.environ.get("TEMPLATING_REQUIRE_DOCS") == "1":  # CI: the site must be built, not skipped
            pytest.fail(f"TEMPLATING_REQUIRE_DOCS=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    site = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    # A cross-reference that resolves nowhere is a warning: `--strict` fails on it, naming the docstring.
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return (site / "api" / "index.html").read_text(encoding="utf-8")


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
    # A signature is a code block of its own (class "doc-signature"); a fenced example has a language class.
    section = module_section(api_page, module)
    found = [
        f"{where(section, m.start())}: {text_at(section, m.end())!r}"
        for m in re.finditer(r'<div class="highlight"><pre>', section)
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
