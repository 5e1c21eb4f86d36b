"""The HTML lint report: what the page holds, that it escapes the template, and how a real browser shows it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from templating.linter import Diagnostic, lint, rule_url, unused_keys
from templating.linter.outputs.html import CONTEXT_LINES, FileReport, _segments, render_html
from templating.nodes import Span

SOURCE = "Hi <name> <nick?> <<raw>> <nmae> < name >\n<example>x</example> <script>alert(1)</script>\n"
SCHEMA = ["name", "nick?", "spare"]


def page() -> str:
    diagnostics = tuple(lint(SOURCE, schema=SCHEMA, path="agent.prompt"))
    return render_html(
        [FileReport("agent.prompt", SOURCE, diagnostics), FileReport("clean.prompt", "All good <name>", ())],
        run_findings=unused_keys(SCHEMA, [SOURCE]),
    )


def spans_by_kind(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<span class="ph-[\w-]+" data-kind="([\w-]+)"[^>]*>([^<]*)</span>', html)


def test_placeholders_highlighted_by_kind() -> None:
    assert spans_by_kind(page()) == [
        ("required", "&lt;name&gt;"),
        ("optional", "&lt;nick?&gt;"),
        ("escaped", "&lt;&lt;raw&gt;&gt;"),
        ("missing", "&lt;nmae&gt;"),
        ("near-miss", "&lt; name &gt;"),
        ("markup", "&lt;example&gt;"),
        ("markup", "&lt;script&gt;"),
        ("required", "&lt;name&gt;"),
    ]


def test_page_escapes_the_template_and_lists_findings() -> None:
    html = page()
    assert "<script>alert" not in html
    assert "&lt;script&gt;</span><sup>" in html
    assert "alert(1)&lt;/script&gt;" in html
    codes = re.findall(r'<li class="(\w+)" id="f0-\d+" data-code="(T\d+)"', html)
    assert codes == [("error", "T001"), ("warning", "T002"), ("error", "T007"), ("error", "T007")]
    assert 'data-code="T011"' in html
    assert "schema key &#39;spare&#39; is not used by any linted template" in html
    assert '<li class="clean">No findings.</li>' in html
    assert '<span id="count-error">3 errors</span>' in html


def test_each_finding_links_its_rule_page() -> None:
    html = page()
    links = re.findall(r'<a class="code" href="([^"]+)">(T\d+)</a>', html)
    # the four findings beside the template and the run-wide T011, each linked to its own page
    assert [code for _, code in links] == ["T011", "T001", "T002", "T007", "T007"]
    assert all(href == rule_url(code) for href, code in links)


def test_a_python_file_is_shown_as_plain_text_with_its_findings_and_their_origin() -> None:
    source = 'x = a < b > c\nPROMPT = "Hi {nmae}"\n'
    start = source.index("{nmae}")
    finding = Diagnostic(
        "T014", "warning", "'{nmae}' is never written", Span(start, start + 6, 2, 15), "m.py", None, "PROMPT"
    )
    html = render_html([FileReport("m.py", source, (finding,), python=True)])
    # only the finding is marked: the code around it (a < b > c) is not read as a template
    assert re.findall(r'<span class="ph-[\w-]+" data-kind="[\w-]+"[^>]*>([^<]*)</span>', html) == ["{nmae}"]
    assert "x = a &lt; b &gt; c" in html
    assert '<span class="where">2:15</span> <span class="origin">PROMPT</span>' in html


def _module(lines: int, at: dict[int, str]) -> str:
    """A Python module of `lines` lines, `code_N = N` except the 1-based lines of `at`."""
    return "".join(at.get(n, f"code_{n} = {n}") + "\n" for n in range(1, lines + 1))


def _span_of(source: str, text: str) -> Span:
    start = source.index(text)
    line = source.count("\n", 0, start) + 1
    return Span(start, start + len(text), line, start - source.rfind("\n", 0, start))


def _shown_lines(html: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in re.findall(r'<p class="lines" data-first="(\d+)" data-last="(\d+)">', html)]


PROMPT_LINE = 'PROMPT = "Hi {nmae}, see {plan}."'
EXCERPTS = [
    # (id, lines in the module, {line: text}, instruction texts, finding texts, excerpts shown)
    ("one-instruction-in-the-middle", 30, {15: PROMPT_LINE}, ["Hi {nmae}, see {plan}."], [], [(12, 18)]),
    (
        "at-the-top-and-the-end",
        20,
        {1: PROMPT_LINE, 20: 'B = "Bye {x}"'},
        ["Hi {nmae}", "Bye {x}"],
        [],
        [(1, 4), (17, 20)],
    ),
    ("close-ones-merge", 30, {10: PROMPT_LINE, 16: 'B = "Bye {x}"'}, ["Hi {nmae}", "Bye {x}"], [], [(7, 19)]),
    (
        "a-finding-outside-any-instruction",
        40,
        {5: PROMPT_LINE, 30: "a = Agent(state_schema=f())"},
        ["Hi {nmae}"],
        ["f()"],
        [(2, 8), (27, 33)],
    ),
    (
        "multi-line-instruction",
        30,
        {10: 'PROMPT = """', 11: "Hi {nmae}", 12: "see {plan}", 13: '"""'},
        ['"""\nHi {nmae}\nsee {plan}\n"""'],
        ["{plan}"],
        [(7, 16)],
    ),
]


@pytest.mark.parametrize(
    ("lines", "at", "instructions", "findings", "shown"), [c[1:] for c in EXCERPTS], ids=[c[0] for c in EXCERPTS]
)
def test_a_python_file_shows_its_instructions_with_a_few_lines_around_them(
    lines: int, at: dict[int, str], instructions: list[str], findings: list[str], shown: list[tuple[int, int]]
) -> None:
    source = _module(lines, at)
    spans = tuple(_span_of(source, text) for text in instructions)
    diags = tuple(Diagnostic("T021", "info", "not read", _span_of(source, text), "m.py") for text in findings)
    html = render_html([FileReport("m.py", source, diags, python=True, instructions=spans)])
    assert _shown_lines(html) == shown
    visible = {n for first, last in shown for n in range(first, last + 1)}
    for n in range(1, lines + 1):  # each line of the module is on the page exactly when it is in an excerpt
        if n not in at:
            assert (f"code_{n} = {n}\n" in html) == (n in visible), n
    assert all(n - CONTEXT_LINES in visible or n <= CONTEXT_LINES for n in at)


@pytest.mark.parametrize(
    ("source", "instructions", "findings", "sections"),
    [
        ("import os\nx = 1\n", (), (), 0),
        ('P = "Hi {name}"\n', (Span(5, 14, 1, 6),), (), 1),
        ("x = f(\n", (), (Diagnostic("E002", "error", "not valid Python", Span(6, 7, 1, 7), "m.py"),), 1),
    ],
    ids=["no-instruction-no-finding", "an-instruction", "a-finding"],
)
def test_a_python_file_without_instruction_or_finding_is_left_out(
    source: str, instructions: tuple[Span, ...], findings: tuple[Diagnostic, ...], sections: int
) -> None:
    html = render_html(
        [FileReport("m.py", source, findings, python=True, templates=len(instructions), instructions=instructions)]
    )
    assert html.count('<section class="template"') == sections
    assert ("m.py" in html) == bool(sections)


def test_the_html_report_of_a_python_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`templating lint --html`: the instruction's lines with their context; the rest of the module and a
    module without instructions are not on the page."""
    from templating.cli import main

    (tmp_path / "agents").mkdir()
    helpers = "".join(f"def helper_{n}():\n    return {n}\n\n\n" for n in range(12))
    agent = (
        "from google.adk.agents import LlmAgent\n\n"
        + helpers
        + 'agent = LlmAgent(name="a", model="m", instruction="Summarise {plan} now.")\n\n'
        + helpers.replace("helper_", "tail_")
    )
    (tmp_path / "agents" / "agent.py").write_text(agent, encoding="utf-8")
    (tmp_path / "agents" / "util.py").write_text("def util():\n    return 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "agents", "--html", "r.html", "--exit-zero"]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    line = agent.splitlines().index('agent = LlmAgent(name="a", model="m", instruction="Summarise {plan} now.")') + 1
    assert _shown_lines(html) == [(line - CONTEXT_LINES, line + CONTEXT_LINES)]
    assert "Summarise <span" in html
    assert "helper_0" not in html
    assert "tail_11" not in html
    assert "agents/util.py" not in html


def test_references_to_findings_at_one_place_are_separated() -> None:
    source = "Hi <temp:nmae>"
    html = render_html([FileReport("a.prompt", source, tuple(lint(source, schema=["name"])))])
    sup = re.findall(r"<sup>(.*?)</sup>", html)
    assert [re.sub(r"<[^>]+>", "", s) for s in sup] == ["T001, T012"]  # not "T001T012"


def test_findings_are_swept_in_order_of_start() -> None:
    # Findings out of order, nested and overlapping: each piece lists exactly the findings covering it.
    source = "aaaa bbbb cccc"
    diags = (
        Diagnostic("T002", "warning", "outer", Span(0, 9, 1, 1)),
        Diagnostic("T004", "warning", "late", Span(10, 14, 1, 11)),
        Diagnostic("T005", "warning", "inner", Span(5, 7, 1, 6)),
        Diagnostic("T008", "warning", "empty", Span(12, 12, 1, 13)),
    )
    ids = {id(d): d.message for d in diags}
    pieces = [
        (s["text"], s["title"], [r["id"] for r in s["refs"]]) for s in _segments(FileReport("x", source, diags), ids)
    ]
    assert pieces == [
        ("aaaa ", "T002 outer", ["outer"]),
        ("bb", "T002 outer; T005 inner", ["inner"]),
        ("bb", "T002 outer", []),
        (" ", "", []),
        ("cc", "T004 late", ["late"]),
        ("cc", "T004 late; T008 empty", ["empty"]),
    ]


def test_template_ships_in_the_package() -> None:
    import templating

    assert (Path(templating.__file__).parent / "linter" / "outputs" / "report.html.j2").is_file()


CHROMIUM = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)

# Runs in the browser after the page loads: what each highlighted piece looks like, and where the findings sit.
PROBE = """
<script>
const kinds = {};
for (const el of document.querySelectorAll("pre.source [data-kind]")) {
  kinds[el.dataset.kind] = getComputedStyle(el).backgroundColor;
}
const pre = document.querySelector("pre.source").getBoundingClientRect();
const first = document.querySelector("ol.findings li[id]").getBoundingClientRect();
const out = document.createElement("pre");
out.id = "probe";
out.textContent = JSON.stringify({
  kinds,
  besides: first.left >= pre.right && first.top < pre.bottom,
  findings: [...document.querySelectorAll("section.template ol.findings li[id]")].map(li => li.innerText),
});
document.body.appendChild(out);
</script>
"""


def chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1200,800",
    ]
    return subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


# CI (.ci/run) sets TEMPLATING_REQUIRE_BROWSER=1: there a missing browser fails the test instead of skipping it.
REQUIRE_BROWSER = os.environ.get("TEMPLATING_REQUIRE_BROWSER", "") not in ("", "0")


@pytest.mark.slow
@pytest.mark.skipif(
    CHROMIUM is None and not REQUIRE_BROWSER, reason="no Chromium or Chrome (Debian: apt-get install chromium)"
)
def test_report_in_a_headless_browser(tmp_path: Path) -> None:
    assert CHROMIUM is not None, "TEMPLATING_REQUIRE_BROWSER is set but no Chromium or Chrome is installed"
    report = tmp_path / "report.html"
    report.write_text(page().replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = chromium(["--dump-dom", report.as_uri()], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    match = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.DOTALL)
    assert match, proc.stdout[-2000:]
    probe = json.loads(match.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    colors = probe["kinds"]
    assert set(colors) == {"required", "optional", "escaped", "missing", "near-miss", "markup"}
    assert len(set(colors.values())) == len(colors), colors  # every kind looks different
    assert "rgba(0, 0, 0, 0)" not in colors.values()  # and each is highlighted
    assert probe["besides"], "the findings are shown beside the template"
    assert probe["findings"][0].startswith("1:27 T001 error (unknown-key)\n'nmae' is not in the schema")

    shot = tmp_path / "report.png"
    proc = chromium([f"--screenshot={shot}", report.as_uri()], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# Runs in the browser: each excerpt of a Python file, its label, and the first finding beside them.
PYTHON_PROBE = """
<script>
const section = document.querySelector("section.template");
const pres = [...section.querySelectorAll("pre.source")];
const finding = section.querySelector("ol.findings li[id]").getBoundingClientRect();
const out = document.createElement("pre");
out.id = "probe";
out.textContent = JSON.stringify({
  labels: [...section.querySelectorAll("p.lines")].map(p => p.innerText),
  texts: pres.map(pre => pre.innerText),
  heights: pres.map(pre => pre.getBoundingClientRect().height),
  besides: finding.left >= pres[0].getBoundingClientRect().right,
  marked: [...section.querySelectorAll("pre.source [data-kind]")].map(el => el.innerText),
});
document.body.appendChild(out);
</script>
"""


@pytest.mark.skipif(
    CHROMIUM is None and not REQUIRE_BROWSER, reason="no Chromium or Chrome (Debian: apt-get install chromium)"
)
def test_python_excerpts_in_a_headless_browser(tmp_path: Path) -> None:
    assert CHROMIUM is not None, "TEMPLATING_REQUIRE_BROWSER is set but no Chromium or Chrome is installed"
    source = _module(40, {10: PROMPT_LINE, 30: 'B = "Bye {x}"'})
    spans = (_span_of(source, "Hi {nmae}, see {plan}."), _span_of(source, "Bye {x}"))
    finding = Diagnostic("T014", "warning", "'nmae' is never written", _span_of(source, "{nmae}"), "m.py")
    page = render_html([FileReport("m.py", source, (finding,), python=True, templates=2, instructions=spans)])
    report = tmp_path / "report.html"
    report.write_text(page.replace("</body>", PYTHON_PROBE + "</body>"), encoding="utf-8")
    proc = chromium(["--dump-dom", report.as_uri()], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    match = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.DOTALL)
    assert match, proc.stdout[-2000:]
    probe = json.loads(match.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert probe["labels"] == ["lines 7-13", "lines 27-33"]
    first, second = probe["texts"]
    assert first.splitlines() == [
        *(f"code_{n} = {n}" for n in (7, 8, 9)),
        PROMPT_LINE.replace("{nmae}", "{nmae}T014"),  # the finding's reference follows the marked text
        *(f"code_{n} = {n}" for n in (11, 12, 13)),
    ]
    assert second.splitlines()[3] == 'B = "Bye {x}"'
    assert all(height > 0 for height in probe["heights"])  # both are laid out, one above the other
    assert probe["besides"], "the findings are shown beside the excerpts"
    assert probe["marked"] == ["{nmae}"]
