"""The HTML lint report: what the page holds, that it escapes the template, and how a real browser shows it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from templating.lint import Diagnostic, lint, rule_url, unused_keys
from templating.nodes import Span
from templating.report import FileReport, _segments, render_html

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

    assert (Path(templating.__file__).parent / "report.html.j2").is_file()


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
