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
address there is the one the code uses (``templating.lint.DOCS_URL``). ``mkdocs build --strict``
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
import subprocess
import sys
from pathlib import Path

import pytest

from templating.lint import DOCS_URL, RULES, SYNTAX_CHECKS, rule_url

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
    assert list(folder.glob("__snapshots__/**/*.txt")), "the example's snapshots were written"


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
    for section in ("## What it catches", "## Why", "## Example", "## How to silence it"):
        assert section in text, f"docs/rules/{code}.md has no {section!r} section"
    assert any(lang == "python" for _, lang, _, _ in blocks(page)), "its example runs in the tests"


@pytest.mark.parametrize("code", sorted(RULES))
def test_each_rule_page_says_how_to_change_its_severity(code: str) -> None:
    """The page's `severity = { CODE = "level" }` line is valid configuration, at a level other than the rule's."""
    import tomllib

    from templating.lint.config import severities

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
        pytest.skip("building the site needs the docs extra (pip install '.[docs]')")
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
