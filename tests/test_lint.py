"""The linter: every rule on its own table of cases, schemas, configuration, and no false positives on prose."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from templating.inputs import DEFAULT_MAX_FILE_SIZE
from templating.linter import (
    DEFAULT_RULES,
    DOCS_URL,
    RULES,
    Diagnostic,
    LintConfig,
    LintConfigError,
    SchemaError,
    _matches,
    collect_files,
    glob_regex,
    lint,
    load_config,
    load_schema,
    rules_for,
    select_rules,
    unused_keys,
)
from templating.nodes import Literal, Span
from templating.template import Template


class Profile(BaseModel):
    language: str
    zip: str | None = None


class State(BaseModel):
    name: str
    nick: str = ""
    order_id: str
    user_name: str = Field(alias="user:name")
    user_profile: Profile = Field(alias="user:profile")
    items: list[Profile] = []
    temp_step: int = Field(0, alias="temp:step")


def found(source: str, **options: Any) -> list[tuple[str, str]]:
    """(code, flagged text) for each finding."""
    return [(d.code, source[d.span.start : d.span.end]) for d in lint(source, **options) if d.span]


# Each rule: templates that trigger it (with what is flagged) and near cases that must not.
RULE_CASES = [
    # T002 whitespace inside
    ("T002", "Hello < name >!", [("T002", "< name >")]),
    ("T002", "Hi <name >, <  user:name?>", [("T002", "<name >"), ("T002", "<  user:name?>")]),
    ("T002", "if a < b and c > d", []),
    ("T002", "x << y >> 1", []),
    ("T002", "`< name >` in code", []),
    # T003 unknown scope
    ("T003", "Hi <usr:name>", [("T003", "<usr:name>")]),
    (
        "T003",
        "<User:name> <tmp:step?> <ap:tier>",
        [("T003", "<User:name>"), ("T003", "<tmp:step?>"), ("T003", "<ap:tier>")],
    ),
    ("T003", "<xsl:template>x</xsl:template>", []),
    ("T003", "<session:id> <https://example.com>", []),
    ("T003", "<usr:x>body</usr:x>", []),
    ("T003", "<team:lead> <step:name> <api:key> <term:definition> <temporary:note>", []),  # words of their own
    (
        "T003",
        "<users:name> <USER:name> <uesr:name>",
        [("T003", "<users:name>"), ("T003", "<USER:name>"), ("T003", "<uesr:name>")],
    ),
    # T004 unclosed
    ("T004", "Hello <name, welcome", [("T004", "<name")]),
    ("T004", "Hi <user:name.\nBye <nick?", [("T004", "<user:name"), ("T004", "<nick?")]),
    ("T004", '<a href="https://x.com">link</a>', []),
    ("T004", "for (i=0; i<n; i++) and 3 <4 and <-- arrows", []),
    ("T004", "mail <ada@example.com> and `<name` in code", []),
    # T005 bad name
    ("T005", "Dear <first-name>,", [("T005", "<first-name>")]),
    ("T005", "<user:last-name?> <1st>", [("T005", "<user:last-name?>"), ("T005", "<1st>")]),
    ("T005", "<my-card>x</my-card> <--> <!-- c --> <3 <-x> <x->", []),
    ("T005", "Rate it <1-10>, score <0-100>, dates as <YYYY-MM-DD> at <HH-MM>", []),
    # key combinations and blanks for the reader to fill in are text, not keys
    ("T005", "Press <Ctrl-C> or <Shift-Tab>; replace <your-api-key> with yours", []),
    ("T005", "<user:your-name> <control-panel?>", [("T005", "<user:your-name>"), ("T005", "<control-panel?>")]),
    ("T005", "<FIRST-NAME?> <user:1st-name>", [("T005", "<FIRST-NAME?>"), ("T005", "<user:1st-name>")]),
    # URL and path templates (Flask, Express, REST docs): the name is for whoever calls the URL
    ("T005", "GET /users/<user-id>/orders/<order-id> or gs://<bucket-name> then <base-url>/health", []),
    # a hyphenated tag listed after another tag (as `templating convert` leaves ADK text: <<sku>>)
    ("T005", "IDs such as <sku> or <order-id>; <<sku>>, <order-id> and <<a>>/<b-c>; <x>, or <y-z>", []),
    (
        "T005",
        "<sku> or <first-name?>, <a> or <user:first-name>, or <Ship-To>",
        [("T005", "<first-name?>"), ("T005", "<user:first-name>"), ("T005", "<Ship-To>")],
    ),
    # T006 doubled ??
    ("T006", "Hi <nick??>", [("T006", "<nick??>")]),
    ("T006", "<user:x???>", [("T006", "<user:x???>")]),
    ("T006", "Really?? <<nick??>> <nick?>", []),
    # T007 markup
    ("T007", "<example>\nHi\n</example>", [("T007", "<example>")]),
    ("T007", "Use <b>bold</b> and <instructions>x</instructions>", [("T007", "<b>"), ("T007", "<instructions>")]),
    ("T007", "</example> then <example>", []),
    ("T007", "<<example>>x</example> <name> <note?>x</note>", []),
    # T008 ADK braces
    ("T008", "Hello {user:name}, order {order_id}.", [("T008", "{user:name}"), ("T008", "{order_id}")]),
    ("T008", "Maybe {nick?} {artifact.report}", [("T008", "{nick?}"), ("T008", "{artifact.report}")]),
    ("T008", '{"a": 1} {"a": {name}} {{ name }} {{name}} { total += x }', []),
    ("T008", '${HOME} \\frac{a}{b} a{3} %{x} #{y} `f"{name}"`', []),
    ("T008", "```python\nprint(f'{name}')\n```\n", []),
    # T013 escapes that cannot be one
    ("T013", "<<example>>x<</example>>", [("T013", "<</example>>")]),
    (
        "T013",
        '<<example id="1">> <<img src=a.png />>',
        [("T013", '<<example id="1">>'), ("T013", "<<img src=a.png />>")],
    ),
    ("T013", "<<example>> <</a> <<<x>>> `<</a>>`", []),
    # T012 temp keys (once per key)
    ("T012", "<temp:step> <temp:step?> <temp:other?>", [("T012", "<temp:step>"), ("T012", "<temp:other?>")]),
    ("T012", "<<temp:step>> <step> <user:temp>", []),
]


@pytest.mark.parametrize(
    ("code", "source", "expected"), RULE_CASES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(RULE_CASES)]
)
def test_rule(code: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found(source, select=[code]) == expected


SCHEMA_CASES = [
    # T001 unknown key, with a close-match suggestion, also inside nested models
    ("T001", "Hi <nmae>", [("T001", "<nmae>")], "'nmae' is not in the schema; did you mean 'name'?"),
    ("T001", "<user:profile.langauge>", [("T001", "<user:profile.langauge>")], "did you mean 'user:profile.language'?"),
    ("T001", "<usr:name> <user:nmae>", [("T001", "<user:nmae>")], "did you mean 'user:name'?"),
    ("T001", "<name> <user:name> <user:profile.language> <items.0.zip?> <order_id>", [], ""),
    # T009 required placeholder on a field with a default (or behind an index)
    ("T009", "<nick> <user:profile.zip>", [("T009", "<nick>"), ("T009", "<user:profile.zip>")], "has a default"),
    (
        "T009",
        "<items.0.language> <user:profile.zip>",
        [("T009", "<items.0.language>"), ("T009", "<user:profile.zip>")],
        "",
    ),
    ("T009", "<nick?> <name> <user:profile.language>", [], ""),
    # T010 optional placeholder on a required field
    ("T010", "<name?> <user:profile.language?>", [("T010", "<name?>"), ("T010", "<user:profile.language?>")], ""),
    ("T010", "<nick?> <user:profile.zip?> <name>", [], ""),
]


@pytest.mark.parametrize(
    ("code", "source", "expected", "message"),
    SCHEMA_CASES,
    ids=[f"{c}-{i}" for i, (c, _, _, _) in enumerate(SCHEMA_CASES)],
)
def test_schema_rule(code: str, source: str, expected: list[tuple[str, str]], message: str) -> None:
    assert found(source, schema=State, select=[code]) == expected
    if message:
        assert message in lint(source, schema=State, select=[code])[0].message


def test_schema_rules_are_off_without_a_schema() -> None:
    assert found("<nmae> <nick> <name?>", select=["T001", "T009", "T010"]) == []


def test_markup_tag_is_not_also_an_unknown_key() -> None:
    assert found("<example>x</example>", schema=["name"]) == [("T007", "<example>")]
    # a schema key that happens to have a closing tag later is a real placeholder
    assert found("<note>x</note>", schema=["note"]) == []


PROSE = textwrap.dedent(
    """\
    You are <app:assistant_name?>, a careful assistant. Greet <user:name> in <user:lang?>.

    Compare values: if a < b and b > c, answer "yes"; 3 < 4 > 2 is not valid syntax. x << 2 >> 1.
    Never output HTML such as <<div>> unless asked; a link looks like <a href="https://x.com">here</a>,
    a line break is <br/> and comments look like <!-- note -->. Arrows: <- -> <=> <-- -->. Love <3.
    Contact <support@example.com> or see <https://example.com/docs?a=1&b=2>.

    Return JSON exactly like {"tool": "lookup", "args": {"id": "..."}} or {"ok": true}.
    Jinja users write {{ name }} and {% if x %}; shells use ${HOME}; regexes use a{2,3}.

    ```python
    def greet(name: str) -> str:
        return f"Hello {name}" if len(name) < 10 else "<name"
    ```
    Inline code such as `items[i<n]` or `{key}` is fine. Escaped: <<first-name>> <<example>>.
    <<example>>Input: hi</example>
    Really?? Are you sure??
    """
)


def test_no_false_positives_on_prose_code_html_and_json() -> None:
    assert lint(PROSE, select=["ALL"]) == []


def test_diagnostic_fields_and_order() -> None:
    source = "line one\n  Hi <usr:name> and < x >"
    diags = lint(source, path="p.txt")
    assert diags == [
        Diagnostic(
            "T003",
            "error",
            "unknown scope 'usr:', so '<usr:name>' renders as literal text; did you mean <user:name>?",
            Span(14, 24, 2, 6),
            "p.txt",
            "the scopes are app:, user: and temp:",
        ),
        Diagnostic(
            "T002",
            "warning",
            "'< x >' has whitespace inside, so it renders as literal text; did you mean <x>?",
            Span(29, 34, 2, 21),
            "p.txt",
            "write <x> (no spaces) for a placeholder; as written, < x > already renders unchanged",
        ),
    ]
    assert diags[0].as_dict()["line"] == 2
    assert diags[0].as_dict()["name"] == "unknown-scope"
    assert diags[0].as_dict()["url"] == diags[0].url == f"{DOCS_URL}rules/T003/"
    assert Diagnostic("X001", "error", "not a rule", None).as_dict()["url"] is None
    with pytest.raises(AttributeError):
        diags[0].code = "T999"  # type: ignore[misc]


def test_every_rule_has_a_case() -> None:
    tested = {c for c, _, e in RULE_CASES + ADK_RULE_CASES if e} | {c for c, _, e, _ in SCHEMA_CASES if e} | {"T011"}
    tested |= {"T014", "T015", "T021"}  # rules over Python trees: tests/test_pysource.py, tests/test_lint_engine.py
    tested |= {"T022", "T023"}  # suppression comments: tests/test_suppress.py
    tested |= {"T029", "T030", "T032"}  # state keys named where nothing inserts them: tests/test_lint_state_names.py
    tested |= {"T024", "T025", "T026", "T027"}  # run order, over the agent model: tests/test_lint_order.py
    tested |= {"T028"}  # writes a state_schema google-adk enforces does not declare: tests/test_lint_enforced_schema.py
    assert tested == set(RULES)
    assert {rule.severity for rule in RULES.values()} <= {"error", "warning", "info"}


SCHEMA_SPECS = [
    ("pydantic", State),
    ("json-schema", State.model_json_schema(by_alias=True)),
    ("keys", ["name", "nick?", "order_id", "user:name", "user:profile.language", "user:profile.zip?", "items?"]),
]


@pytest.mark.parametrize(("kind", "spec"), SCHEMA_SPECS, ids=[k for k, _ in SCHEMA_SPECS])
def test_schema_sources(kind: str, spec: Any) -> None:
    schema = load_schema(spec)
    assert {"name", "nick", "order_id", "user:name", "user:profile"} <= set(schema.fields)
    assert schema.fields["name"].required
    assert not schema.fields["nick"].required
    profile = schema.fields["user:profile"].fields
    assert profile is not None
    assert profile["language"].required
    assert not profile["zip"].required


JSON_TYPES = [
    ("string", {"type": "string"}, "str", None),
    ("default", {"type": "integer", "default": 0}, "int", "0"),
    ("string-default", {"type": "string", "default": "en"}, "str", '"en"'),
    ("array-of", {"type": "array", "items": {"type": "number"}}, "list[float]", None),
    ("bare-array", {"type": "array"}, "list", None),
    ("object", {"type": "object", "default": {}}, "dict", "{}"),
    ("type-list", {"type": ["string", "null"]}, "str | None", None),
    ("nullable", {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None}, "bool | None", "null"),
    ("ref-title", {"$ref": "#/$defs/Item"}, "Thing", None),
    ("ref-untitled", {"$ref": "#/$defs/Bare"}, "Bare", None),
    ("union-partly-unknown", {"anyOf": [{"type": "string"}, {}]}, None, None),
    ("nothing-declared", {}, None, None),
]


@pytest.mark.parametrize(("node", "type_", "default"), [c[1:] for c in JSON_TYPES], ids=[c[0] for c in JSON_TYPES])
def test_json_schema_fields_carry_type_and_default(
    node: dict[str, Any], type_: str | None, default: str | None
) -> None:
    defs = {"Item": {"title": "Thing", "type": "object"}, "Bare": {"type": "object"}}
    field = load_schema({"type": "object", "properties": {"a": node}, "$defs": defs}).fields["a"]
    assert (field.type, field.default) == (type_, default)


def test_a_pydantic_models_fields_carry_type_and_default() -> None:
    class Order(BaseModel):
        id: int

    class Trip(BaseModel):
        lang: str = "en"
        order: Order
        tags: list[str] = []

    fields = load_schema(Trip).fields
    got = {name: (fields[name].type, fields[name].default) for name in fields}
    assert got == {"lang": ("str", '"en"'), "order": ("Order", None), "tags": ("list[str]", "[]")}


def test_schema_from_files_and_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "schema.json").write_text(json.dumps(State.model_json_schema(by_alias=True)), encoding="utf-8")
    (tmp_path / "keys.json").write_text('["a", "b?"]', encoding="utf-8")
    (tmp_path / "mymodels.py").write_text("from pydantic import BaseModel\nclass S(BaseModel):\n    zz: int\n")
    assert "user:profile" in load_schema(tmp_path / "schema.json").fields
    assert not load_schema("keys.json", base=tmp_path).fields["b"].required
    monkeypatch.setattr(sys, "path", list(sys.path))  # the import adds base to sys.path; undo it afterwards
    assert set(load_schema("mymodels:S", base=tmp_path).fields) == {"zz"}
    sys.modules.pop("mymodels", None)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("missing.json", "schema file not found"),
        ("bad.json", "schema file is not valid JSON"),
        ("num.json", "a schema file holds a JSON Schema object or a list of keys"),
        ("noprops.json", "must be an object with 'properties'"),
        ("no_such_module_xyz:Model", "cannot import schema 'no_such_module_xyz:Model'"),
        (["ok", ""], "a schema key must be a non-empty string"),
    ],
    ids=["missing", "bad-json", "number", "no-properties", "import", "empty-key"],
)
def test_schema_errors(tmp_path: Path, spec: Any, message: str) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    (tmp_path / "num.json").write_text("3", encoding="utf-8")
    (tmp_path / "noprops.json").write_text('{"type": "object"}', encoding="utf-8")
    with pytest.raises(SchemaError, match=message):
        load_schema(spec, base=tmp_path)
    with pytest.raises(TypeError, match="a schema is a pydantic model"):
        load_schema(42)


def test_unused_keys_once_per_run() -> None:
    diags = unused_keys(["name", "nick?", "order_id"], ["Hi <name>", "<order_id> and < nick >"])
    assert [(d.code, d.message, d.span) for d in diags] == [
        ("T011", "schema key 'nick' is not used by any linted template", None)
    ]
    assert "T011" not in DEFAULT_RULES


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, DEFAULT_RULES),
        ({"select": ["T001", "markup-tag"]}, {"T001", "T007"}),
        ({"extend_select": ["T011"], "ignore": ["T012", "T008"]}, (DEFAULT_RULES | {"T011"}) - {"T012", "T008"}),
        ({"select": ["ALL"]}, set(RULES)),
    ],
    ids=["default", "select-by-code-and-name", "extend-and-ignore", "all"],
)
def test_select_rules(options: dict[str, Any], expected: set[str]) -> None:
    assert select_rules(**options) == expected


def test_unknown_rule_is_a_config_error() -> None:
    with pytest.raises(LintConfigError, match="unknown rule 'T999'"):
        select_rules(select=["T999"])


def write_project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.templating]\n{table}\n", encoding="utf-8")
    prompts = tmp_path / "prompts"
    (prompts / "legacy").mkdir(parents=True)
    (prompts / "drafts").mkdir()
    (prompts / "agent.prompt").write_text("Hi <name>", encoding="utf-8")
    (prompts / "notes.md").write_text("notes", encoding="utf-8")
    (prompts / "legacy" / "old.prompt").write_text("Hi {name}", encoding="utf-8")
    (prompts / "drafts" / "wip.prompt").write_text("<nmae>", encoding="utf-8")
    return tmp_path


def test_config_from_pyproject(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        'schema = ["name"]\ninclude = ["prompts/**/*.prompt"]\nexclude = ["prompts/drafts/**"]\n'
        'ignore = ["T012"]\nextend-select = ["T011"]\n'
        '[tool.templating.per-file-ignores]\n"prompts/legacy/*" = ["T008"]',
    )
    (root / "prompts" / "sub").mkdir()
    config = load_config(root / "prompts" / "sub")  # found by walking up
    assert config.root == root.resolve()
    assert config.schema == ["name"]
    assert config.ignore == ("T012",)
    files = [Path(f).relative_to(root).as_posix() for f in collect_files([], config)]
    assert files == ["prompts/agent.prompt", "prompts/legacy/old.prompt"]
    codes = select_rules(extend_select=config.extend_select, ignore=config.ignore)
    assert "T008" in codes
    assert "T008" not in rules_for(str(root / "prompts/legacy/old.prompt"), config, codes)
    assert "T008" in rules_for(str(root / "prompts/agent.prompt"), config, codes)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('shema = "x.json"', "unknown key"),
        ("include = 'prompts/*'", "'include' must be a list of strings"),
        ("select = ['T404']", "unknown rule 'T404'"),
        ("schema = 3", "'schema' must be"),
        ("per-file-ignores = 3", "'per-file-ignores' must be a table"),
        ("include = [", "not valid TOML"),
        ('include = ["[z-a].txt"]', "bad glob '.z-a..txt': bad character range z-a"),
        ('exclude = ["x/[z-a]"]', "bad glob 'x/.z-a.'"),
        ('[tool.templating.per-file-ignores]\n"[z-a]" = ["T008"]', "bad glob '.z-a.'"),
        ("select = []", "'select' is empty"),
        ("allow = ['']", "'allow' holds literal snippets"),
        ("allow = '<x-y>'", "'allow' must be a list of strings"),
        ("max-file-size = 9223372036854775807", "'max-file-size' must be a number of bytes from 1 to 1073741824"),
        ("max-file-size = 1073741825", "'max-file-size' must be a number of bytes from 1 to 1073741824"),
        ('cache-dir = "a\\u0000b"', "'cache-dir' holds a NUL character"),
        ('include = ["a\\u0000b"]', "'include' holds a NUL character"),
        ('exclude = ["a\\u0000b"]', "'exclude' holds a NUL character"),
        ('schema = "s\\u0000.json"', "'schema' holds a NUL character"),
        ('per-file-ignores = { "a\\u0000" = ["T001"] }', "'per-file-ignores' holds a NUL character"),
        ('constant-suffixes = ["_P\\u0000"]', "'constant-suffixes' holds a NUL character"),
        ("constant-suffixes = ['-PROMPT']", "'constant-suffixes' holds name endings: '-PROMPT' is not one"),
        ("include = " + "[" * 50_000 + "]" * 50_000, "is nested too deeply to read"),
        ("[tool.templating.x]\ny = " + "[" * 50_000 + "]" * 50_000, "is nested too deeply to read"),
    ],
    ids=[
        "unknown-key",
        "include-not-list",
        "unknown-rule",
        "schema-type",
        "per-file-type",
        "bad-toml",
        "bad-include-glob",
        "bad-exclude-glob",
        "bad-per-file-glob",
        "empty-select",
        "empty-allow",
        "allow-not-list",
        "max-file-size-too-large-for-any-read",
        "max-file-size-over-a-gibibyte",
        "cache-dir-nul",
        "include-nul",
        "exclude-nul",
        "schema-nul",
        "per-file-ignores-nul",
        "constant-suffix-nul",
        "constant-suffix-not-a-name-ending",
        "nested-arrays",
        "nested-arrays-in-a-subtable",
    ],
)
def test_config_errors(tmp_path: Path, table: str, message: str) -> None:
    write_project(tmp_path, table)
    with pytest.raises(LintConfigError, match=message):
        load_config(tmp_path)


def test_no_paths_and_no_include_collect_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.prompt", "sub/b.prompt", "sub/c.txt"):
        (tmp_path / name).write_text("Hi <name>", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "sub")
    assert collect_files([], LintConfig(root=tmp_path)) == [str(tmp_path / "sub" / "b.prompt")]
    monkeypatch.chdir(tmp_path.parent)  # outside the root (a caller naming it): the root
    assert sorted(collect_files([], LintConfig(root=tmp_path))) == [
        str(tmp_path / "a.prompt"),
        str(tmp_path / "sub" / "b.prompt"),
    ]


def test_folders_use_default_patterns_and_skip_hidden(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.prompt").write_text("x", encoding="utf-8")
    (tmp_path / "a.prompt").write_text("x", encoding="utf-8")
    (tmp_path / "b.txt").write_text("x", encoding="utf-8")
    (tmp_path / "c.prompt.md").write_text("x", encoding="utf-8")
    config = LintConfig(root=tmp_path)
    assert [Path(f).name for f in collect_files([str(tmp_path)], config)] == ["a.prompt", "c.prompt.md"]
    assert collect_files([str(tmp_path / "b.txt"), "-"], config) == [str(tmp_path / "b.txt"), "-"]


def test_a_file_named_twice_is_linted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    assert collect_files(["a.txt", "./a.txt", str(tmp_path / "a.txt"), "-"], LintConfig(root=tmp_path)) == [
        "a.txt",
        "-",
    ]


def test_hidden_vendored_and_excluded_folders_are_not_entered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in (".git", ".venv/lib", "node_modules/pkg", "drafts/old", "prompts"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "x.prompt").write_text("x", encoding="utf-8")
    entered: list[str] = []
    real_walk = os.walk

    def spy(top: Any, **kwargs: Any) -> Any:
        for here, dirs, files in real_walk(top, **kwargs):
            entered.append(Path(here).relative_to(tmp_path).as_posix())
            yield here, dirs, files

    monkeypatch.setattr(os, "walk", spy)
    config = LintConfig(root=tmp_path, exclude=("drafts",))
    assert [Path(f).relative_to(tmp_path).as_posix() for f in collect_files([str(tmp_path)], config)] == [
        "prompts/x.prompt"
    ]
    assert sorted(entered) == [".", "prompts"]  # pruned during the walk, not filtered after it


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.prompt", "a/b/c.prompt", True),
        ("**/*.prompt", "c.prompt", True),
        ("prompts/*.txt", "prompts/a/b.txt", False),
        ("prompts/**", "prompts/a/b.txt", True),
        ("a?.txt", "ab.txt", True),
        ("a?.txt", "a/.txt", False),
        ("./prompts/*.txt", "prompts/a.txt", True),
        ("[ab].txt", "b.txt", True),
        ("[ab].txt", "c.txt", False),
        ("[!ab].txt", "c.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("x[!ab]y", "x/y", False),
        ("[a-c]?.md", "b1.md", True),
    ],
    ids=[
        "deep",
        "top",
        "one-level",
        "under",
        "question",
        "question-no-slash",
        "dot-slash",
        "class",
        "class-miss",
        "negated-class",
        "negated-class-miss",
        "negated-class-no-slash",
        "range",
    ],
)
def test_glob(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is matches


@pytest.mark.parametrize(
    ("patterns", "path", "matches"),
    [
        (["drafts"], "prompts/drafts/wip.prompt", True),
        (["prompts/drafts"], "prompts/drafts/deep/wip.prompt", True),
        (["./prompts/drafts/"], "prompts/drafts/wip.prompt", True),
        (["draft"], "prompts/drafts/wip.prompt", False),
        (["prompts/drafts"], "other/prompts/drafts/wip.prompt", False),
        (["*.prompt"], "a/b/c.prompt", True),
    ],
    ids=["folder-name", "folder-path", "dot-slash-folder", "not-a-prefix-of-a-name", "anchored", "file-name"],
)
def test_patterns_match_files_and_their_folders(patterns: list[str], path: str, matches: bool) -> None:
    assert _matches(path, patterns) is matches


def test_dot_slash_include_and_folder_exclude(tmp_path: Path) -> None:
    root = write_project(tmp_path, 'include = ["./prompts/**/*.prompt"]\nexclude = ["drafts", "legacy/"]')
    files = [Path(f).relative_to(root).as_posix() for f in collect_files([], load_config(root))]
    assert files == ["prompts/agent.prompt"]


def test_lint_report_snapshot(lint_snapshot: Any, snapshot: Any) -> None:
    source = "You are <app:name>.\nHello < user:name >, order {order_id}.\n<example>\nhi <nick>\n</example>\n"
    assert lint_snapshot(source, schema=["app:name", "user:name", "order_id", "nick?"]) == snapshot


NEAR_MISS = {"T002", "T003", "T004", "T005", "T006", "T008", "T013"}


@given(
    st.text(alphabet=st.sampled_from(list('<>?-: {}`.\nab_1/"=$^')), max_size=60) | st.text(max_size=40),
    st.booleans(),
)
def test_lint_is_total_and_near_misses_lie_in_literal_text(source: str, markdown: bool) -> None:
    diagnostics = lint(source, schema=["a", "b?", "user:a"], select=["ALL"], markdown=markdown)
    literals = [node.span for node in Template(source).nodes if isinstance(node, Literal)]
    for diag in diagnostics:
        assert diag.span is not None
        assert 0 <= diag.span.start < diag.span.end <= len(source)
        if diag.code in NEAR_MISS:
            assert any(lit.start <= diag.span.start and diag.span.end <= lit.end for lit in literals)


# --- bad schemas and configs: a SchemaError / LintConfigError, never another exception ---------

BAD_MODULE = """\
import dataclasses
from typing import Callable, TypedDict

from pydantic import BaseModel, ConfigDict


@dataclasses.dataclass
class DC:
    name: str


class TD(TypedDict):
    name: str


class Plain(BaseModel):
    name: str


inst = Plain(name="x")


class Thing:
    pass


class Arbitrary(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    thing: Thing


class WithCallable(BaseModel):
    fn: Callable[[], int]


class NotDefined(BaseModel):
    x: "Undefined"  # noqa: F821
"""


def bad_schema_spec(tmp_path: Path, spec: Any) -> Any:
    """``spec`` with ``mod:`` meaning the module above (written to tmp_path, imported from there)."""
    module = f"badschemas_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{module}.py").write_text(BAD_MODULE, encoding="utf-8")
    return spec.replace("mod:", f"{module}:") if isinstance(spec, str) else spec


SCHEMA_ERROR_CASES = [
    ("mod:DC", "is the class DC, not a pydantic model class"),
    ("mod:TD", "is the class TD, not a pydantic model class"),
    ("mod:inst", "is a Plain object, not a pydantic model class"),
    ("json:loads", "is a function object, not a pydantic model class"),
    ("os:path", "is a module object, not a pydantic model class"),
    ("mod:Arbitrary", "cannot read the schema of model .*Arbitrary: PydanticInvalidForJsonSchema"),
    ("mod:WithCallable", "cannot read the schema of model .*WithCallable: PydanticInvalidForJsonSchema"),
    ("mod:NotDefined", "cannot read the schema of model .*NotDefined: PydanticUserError: .*not fully defined"),
    ("mod:", "a schema to import is written 'module:Model'"),
    ({"properties": {"name": {}}, "required": True}, r"'required' .* must be a list of property names, not True"),
    ({"properties": {"name": {}}, "required": 5}, r"'required' .* must be a list of property names, not 5"),
    ({"properties": {"name": {}}, "required": "name"}, r"must be a list of property names, not 'name'"),
    (
        {"properties": {"a": {"type": "object", "properties": {"b": {}}, "required": [1]}}},
        r"must be a list of property names, not \[1\]",
    ),
]


@pytest.mark.parametrize(
    ("spec", "message"),
    SCHEMA_ERROR_CASES,
    ids=[
        "dataclass",
        "typeddict",
        "instance",
        "function",
        "module",
        "arbitrary-type",
        "callable-field",
        "not-fully-defined",
        "no-attribute",
        "required-true",
        "required-number",
        "required-string",
        "nested-required",
    ],
)
def test_bad_schemas_are_schema_errors(tmp_path: Path, spec: Any, message: str) -> None:
    before = list(sys.path)
    with pytest.raises(SchemaError, match=message):
        load_schema(bad_schema_spec(tmp_path, spec), base=tmp_path)
    assert sys.path == before  # the import does not leave the folder on sys.path


def test_import_restores_sys_path(tmp_path: Path) -> None:
    (tmp_path / "okmodels_restore.py").write_text("from pydantic import BaseModel\nclass S(BaseModel):\n    zz: int\n")
    before = list(sys.path)
    assert set(load_schema("okmodels_restore:S", base=tmp_path).fields) == {"zz"}
    assert sys.path == before
    sys.modules.pop("okmodels_restore", None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tool = 3\n", "'tool' must be a table, not int"),
        ("[tool]\ntemplating = 3\n", r"\[tool.templating\] must be a table, not int"),
        ("[tool]\ntemplating = [1]\n", r"\[tool.templating\] must be a table, not list"),
    ],
    ids=["tool-not-table", "templating-not-table", "templating-array"],
)
def test_config_tables_must_be_tables(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    with pytest.raises(LintConfigError, match=message):
        load_config(tmp_path)


def _unreadable(folder: Path, kind: str, name: str) -> Path:
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "not-utf8":
        path.write_bytes(b"\xff\xfe")
    else:  # too large
        path.write_bytes(b" " * (DEFAULT_MAX_FILE_SIZE + 1))
    return path


UNREADABLE = [
    ("fifo", "not a regular file (a device, a pipe or a socket): not read"),
    ("folder", "path is a directory, not a file"),
    ("not-utf8", "file is not valid UTF-8"),
    ("too-large", f"more than the limit of {DEFAULT_MAX_FILE_SIZE} bytes"),
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX pipes")
@pytest.mark.parametrize(("kind", "message"), UNREADABLE, ids=[c[0] for c in UNREADABLE])
def test_config_and_schema_files_are_read_as_templates_are(tmp_path: Path, kind: str, message: str) -> None:
    # The reader the command line uses: a pipe is refused, not waited on; the error names the file.
    config = _unreadable(tmp_path, kind, "pyproject.toml")
    with pytest.raises(LintConfigError, match=re.escape(message)) as raised:
        load_config(path=config)
    assert str(config) in raised.value.message
    schema = _unreadable(tmp_path, kind, "keys.json")
    with pytest.raises(SchemaError, match=re.escape(message)):
        load_schema(schema)


def test_config_and_schema_files_may_start_with_a_bom(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('\ufeff[tool.templating]\ninclude = ["*.txt"]\n', encoding="utf-8")
    (tmp_path / "keys.json").write_text('\ufeff["a", "b?"]', encoding="utf-8")
    assert load_config(tmp_path).include == ("*.txt",)
    assert set(load_schema("keys.json", base=tmp_path).fields) == {"a", "b"}


# --- schemas: a top-level $ref, recursion, open objects ------------------------------------------


class Node(BaseModel):
    name: str
    note: str = ""
    children: list[Node] = []
    parent: Node | None = None


class Order(BaseModel):
    items: list[Profile]
    tags: list[str] = []


@pytest.mark.parametrize(
    ("source", "expected", "message"),
    [
        ("<order.items.x>", [("T001", "<order.items.x>")], "'order.items' is a list, which has no field 'x'"),
        ("<order.tags.name?>", [("T001", "<order.tags.name?>")], "'order.tags' is a list, which has no field 'name'"),
        ("<order.items.0.language> <order.tags.1?>", [], ""),
    ],
    ids=["list-of-models", "list-of-str", "indexes-are-fine"],
)
def test_a_list_has_no_fields(source: str, expected: list[tuple[str, str]], message: str) -> None:
    class Wrapper(BaseModel):
        order: Order

    assert found(source, schema=Wrapper, select=["T001", "T009"]) == expected
    if message:
        assert lint(source, schema=Wrapper)[0].message == message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"properties": {"a": {"$ref": "#/nope"}}}, "'$ref' '#/nope' points at nothing in the schema"),
        ({"$ref": "#/$defs/Missing", "$defs": {}}, "'$ref' '#/$defs/Missing' points at nothing"),
        ({"properties": {"a": 3}}, "the schema of property 'a' must be an object (or true/false), not 3"),
        ({"properties": {"a": {"properties": []}}}, "'properties' in a JSON Schema must be an object, not []"),
        ({"properties": {"a": {"properties": {"b": {}}, "required": 1}}}, "'required' in a JSON Schema must be a list"),
    ],
    ids=["ref-nowhere", "top-ref-nowhere", "property-not-schema", "nested-properties-list", "nested-required"],
)
def test_malformed_json_schemas_are_schema_errors_at_load_time(spec: Any, message: str) -> None:
    with pytest.raises(SchemaError) as info:
        load_schema(spec)
    assert message in info.value.message


def test_boolean_property_schemas_are_fine() -> None:
    assert found("<a.x> <b>", schema={"properties": {"a": True, "b": {}}, "required": ["a", "b"]}) == []


def test_json_schema_lists_and_refs() -> None:
    spec = {
        "properties": {
            "tags": {"type": ["array", "null"]},
            "anchored": {"$ref": "#item"},  # an anchor, not a path: nothing known inside, no error
            "tree": {"$ref": "#"},
        },
        "required": ["tags", "anchored", "tree"],
    }
    assert found("<tags.x> <tags.0> <anchored.x> <tree.tree.tags.y> <tree.nope>", schema=spec) == [
        ("T001", "<tags.x>"),
        ("T001", "<tree.tree.tags.y>"),
        ("T001", "<tree.nope>"),
    ]


def test_recursive_model_and_top_level_ref() -> None:
    schema = load_schema(Node)  # pydantic writes {"$defs": {"Node": ...}, "$ref": "#/$defs/Node"}
    assert set(schema.fields) == {"name", "note", "children", "parent"}
    assert found("<name> <children.0.name> <parent.name> <nmae>", schema=Node, select=["T001"]) == [("T001", "<nmae>")]
    # recursion is followed as deep as a key goes: a typo anywhere down the tree is found
    assert found("<parent.parent.children.0.nmae?> <children.0.children.1.name?>", schema=Node) == [
        ("T001", "<parent.parent.children.0.nmae?>")
    ]
    assert found("<children.x?>", schema=Node) == [("T001", "<children.x?>")]
    ref_schema = {
        "$defs": {"S": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}},
        "$ref": "#/$defs/S",
    }
    assert found("<a?> <b>", schema=ref_schema) == [("T010", "<a?>"), ("T001", "<b>")]


class OpenState(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    profile: Profile


OPEN_CASES = [
    ("pydantic-extra-allow", OpenState, "<anything> <name?>", [("T010", "<name?>")]),
    (
        "json-additional-true",
        {"type": "object", "properties": {"name": {}}, "required": ["name"], "additionalProperties": True},
        "<anything> <name>",
        [],
    ),
    (
        "json-additional-schema",
        {"properties": {"name": {}}, "additionalProperties": {"type": "string"}},
        "<anything?> <name?>",
        [],
    ),
    ("closed-nested-stays-closed", OpenState, "<profile.langauge>", [("T001", "<profile.langauge>")]),
    (
        "open-nested",
        {
            "properties": {
                "p": {"type": "object", "properties": {"a": {}}, "required": ["a"], "additionalProperties": True}
            },
            "required": ["p"],
        },
        "<p.other?> <p.a?> <q>",
        [("T010", "<p.a?>"), ("T001", "<q>")],
    ),
]


@pytest.mark.parametrize(("spec", "source", "expected"), [c[1:] for c in OPEN_CASES], ids=[c[0] for c in OPEN_CASES])
def test_open_schemas_allow_other_keys(spec: Any, source: str, expected: list[tuple[str, str]]) -> None:
    assert found(source, schema=spec) == expected


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        (State, "(it has a default)"),
        ({"properties": {"nick": {}}}, "(not listed in 'required')"),
        (["nick?"], "(listed with a '?')"),
    ],
    ids=["pydantic", "json-schema", "keys"],
)
def test_optional_field_message_says_why(spec: Any, why: str) -> None:
    [diag] = lint("<nick>", schema=spec, select=["T009"])
    assert diag.message == f"'<nick>' is required, but 'nick' is optional in the schema {why}"


def test_nested_unknown_key_message() -> None:
    [diag] = lint("<user:profile.langauge>", schema=State, select=["T001"])
    assert diag.message == "'user:profile' has no field 'langauge' in the schema; did you mean 'user:profile.language'?"


# --- rule selection, T007 off, dialects --------------------------------------------------------


def test_ignoring_t007_keeps_the_placeholder_checks() -> None:
    source = "<nmae>b</nmae> <temp:x>y</temp:x>"
    assert found(source, schema=["name", "temp:x"]) == [("T007", "<nmae>"), ("T012", "<temp:x>")]
    assert found(source, schema=["name", "temp:x"], ignore=["T007"]) == [
        ("T001", "<nmae>"),
        ("T012", "<temp:x>"),
    ]
    assert [d.code for d in lint("<nmae>b</nmae>", schema=["name"], ignore=["T007"])] == ["T001"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"select": "T002"}, [("T002", "< a >")]),
        ({"select": "T002,T008"}, [("T002", "< a >"), ("T008", "{bb}")]),
        ({"ignore": "T002"}, [("T008", "{bb}")]),
    ],
    ids=["one-code", "comma-separated", "ignore-string"],
)
def test_select_and_ignore_take_a_string(options: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert found("Hi < a >, {bb}.", **options) == expected


def test_a_template_is_linted_in_its_own_dialect() -> None:
    source = "Hi {user-name}, <example>x</example> {nick}"
    assert found(source, dialect="adk") == [("T019", "{user-name}")]  # no T007: angle brackets are text in ADK
    assert lint(Template(source, dialect="adk")) == lint(source, dialect="adk")
    assert [d.code for d in lint(source)] == ["T007", "T008"]  # the angle syntax: no ADK rules
    assert lint(Template(source), dialect="angle") == lint(source)
    with pytest.raises(ValueError, match="dialect='angle' was given for a Template whose dialect is 'adk'"):
        lint(Template(source, dialect="adk"), dialect="angle")
    with pytest.raises(ValueError, match="dialect= must be 'angle' or 'adk'"):
        lint(source, dialect="jinja")  # type: ignore[arg-type]


# --- precision of the near-miss rules T002-T006 (a definition-time error check relies on them) ---

LEGITIMATE = [
    ("comparison", "Only answer if a < b; otherwise say so."),
    ("comparison-chain", "The check a < b > c is not valid Python."),
    ("comparison-words", "If count < limit > 0 then continue."),
    ("no-space-right", "Stop when x <y."),
    ("no-space-right-word", "if count <limit, stop"),
    ("number-left", "Values 3 <n and 10 <max_size are fine."),
    ("bracket-left", "len(items) <limit holds."),
    ("condition-clause", "Retry while attempts <max_attempts, then give up."),
    ("arrows", "Flow: input <- user -> model <=> tools <-- cache --> disk."),
    ("heart", "We <3 our customers."),
    ("email", "Write to <support@example.com> or <a.b@c.org>."),
    ("url", "See <https://example.com/docs?a=1&b=2> and <mailto:x@y.z>."),
    ("html-inline", 'A link: <a href="https://x.com">here</a>, a break <br/>, an image <img src="a.png" alt="x">.'),
    (
        "html-multiline",
        '<div\n  class="card"\n  id="main">\n  <img\n   src="a.png"\n   alt="pic" />\n  <p>Hi</p>\n</div>',
    ),
    ("html-multiline-bare-attr", "<input\n  type=checkbox\n  checked\n>"),
    ("html-comment", "<!-- < name > <first-name> <x?? --> done"),
    ("custom-elements", "<my-card>\n  <card-title>Hello</card-title>\n</my-card>"),
    ("custom-element-named", "Wrap the answer in <answer-block> tags and use the <x-card> element."),
    ("custom-element-spaced", "<example >an example</example> and <note\n>text</note>"),
    ("xml-namespaces", '<xsl:template match="/">x</xsl:template> <usr:data>1</usr:data>'),
    ("xml-self-closing", '<item id="1"/>\n<item\n  id="2"\n/>'),
    ("markdown-fenced", "Example:\n```\nHello < name >, <first-name> <nick??> <user\n```\n"),
    ("markdown-tilde-fence", "~~~xml\n<my-tag attr='1'>\n< a >\n~~~\n"),
    ("markdown-inline", "Write `< name >`, `<first-name>` or `<nick??>` only in code."),
    ("json", '{"tool": "lookup", "args": {"id": "<id>", "cmp": "a < b"}, "ok": true}'),
    ("jinja", "{{ a < b }} {% if count < limit %}x{% endif %} {# < name > #}"),
    ("jinja-tight", "{% if x <y %}small{% endif %}"),
    ("escapes", "Escaped: <<first-name>> <<nick??>> << name >> <<example>>"),
    ("shifts", "x << 2 >> 1 and y<<3"),
    ("generics", "List<String> and Map<K, V> and Optional<T>"),
    ("questions", "Really?? Is a <b? Maybe."),
]


LEGITIMATE += [
    ("tag-inside", "Think inside <scratch-pad> first, then answer."),
    ("tag-format", "Use the <tool-call> format for every call."),
    ("tag-named-after", "Put the plan in <plan-steps> blocks."),
    ("shell-redirection", "Run: sort < input > output"),
    ("shell-redirection-files", "Then `cat` it: cat < in.txt > out.txt | wc -l"),
]


@pytest.mark.parametrize("text", [t for _, t in LEGITIMATE], ids=[i for i, _ in LEGITIMATE])
def test_legitimate_text_has_no_near_miss_findings(text: str) -> None:
    assert found(text, select=["T002", "T003", "T004", "T005", "T006"]) == []


NEAR_MISS_STILL_CAUGHT = [
    ("spaced", "Hello < name >, welcome", [("T002", "< name >")]),
    ("spaced-after-word", "Hi < name > and bye", [("T002", "< name >")]),
    ("unclosed-greeting", "Hello <name, welcome", [("T004", "<name")]),
    ("unclosed-scoped", "Stop when x <user:name ends", [("T004", "<user:name")]),
    ("unclosed-line-end", "Dear <name\nThanks", [("T004", "<name")]),
    ("doubled-spaced", "Hi <nick ??>", [("T006", "<nick ??>")]),
    ("bad-name-no-tag", "Dear <first-name>,", [("T005", "<first-name>")]),
    ("bad-name-scoped", "Write to <user:first-name> now", [("T005", "<user:first-name>")]),
    ("bad-name-optional", "Inside <middle-name?> maybe", [("T005", "<middle-name?>")]),
    ("bad-name-dotted", "Use the <order.ship-date>", [("T005", "<order.ship-date>")]),
    ("spaced-sentence-after", "Hi < name > there.", [("T002", "< name >")]),
    ("spaced-prose-after", "Hi < name > and bye", [("T002", "< name >")]),
]


@pytest.mark.parametrize(
    ("source", "expected"), [c[1:] for c in NEAR_MISS_STILL_CAUGHT], ids=[c[0] for c in NEAR_MISS_STILL_CAUGHT]
)
def test_near_misses_are_still_caught(source: str, expected: list[tuple[str, str]]) -> None:
    assert found(source, select=["T002", "T003", "T004", "T005", "T006"]) == expected


def test_public_api_names() -> None:
    import importlib

    import templating

    lint_module = importlib.import_module("templating.linter")

    assert templating.lint is lint
    for name in ("Diagnostic", "LintConfigError", "SchemaError", "lint", "load_schema", "unused_keys"):
        assert name in templating.__all__
        assert getattr(templating, name) is getattr(lint_module, name)
    assert issubclass(templating.SchemaError, templating.TemplatingError)
    assert issubclass(templating.LintConfigError, templating.TemplatingError)


INDENTED = "<<context>>\n\n    Language: <usr:lang>\n    Method: < method > and <first-name>\n    Nick: <nick??>\n"


@pytest.mark.parametrize(
    ("path", "markdown", "expected"),
    [
        (
            "agent.txt",
            None,
            [("T003", "<usr:lang>"), ("T002", "< method >"), ("T005", "<first-name>"), ("T006", "<nick??>")],
        ),
        (None, None, [("T003", "<usr:lang>"), ("T002", "< method >"), ("T005", "<first-name>"), ("T006", "<nick??>")]),
        ("agent.prompt.md", None, []),
        ("README.markdown", None, []),
        (None, True, []),
        (
            "agent.md",
            False,
            [("T003", "<usr:lang>"), ("T002", "< method >"), ("T005", "<first-name>"), ("T006", "<nick??>")],
        ),
    ],
    ids=["txt", "no-path", "md", "markdown", "markdown-flag", "md-flag-off"],
)
def test_indented_blocks_are_code_only_in_markdown(path: str | None, markdown: bool | None, expected: Any) -> None:
    found_ = [
        (d.code, INDENTED[d.span.start : d.span.end]) for d in lint(INDENTED, path=path, markdown=markdown) if d.span
    ]
    assert found_ == expected


def test_fenced_code_is_code_everywhere() -> None:
    assert lint("```\n<usr:lang> < a >\n```\n", path="a.txt") == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("$e^{x}$ and x^{n} and x_{i}", []),
        ("$$\\sum_{k} {name}$$ the set {x}", []),
        ("Price $5, then {user:name} and $10", [("T008", "{user:name}")]),
        ("Hello {name}", [("T008", "{name}")]),
    ],
    ids=["inline-math", "display-math-and-set", "dollars-are-not-math", "still-caught"],
)
def test_adk_braces_skip_math(source: str, expected: list[tuple[str, str]]) -> None:
    assert found(source, select=["T008"]) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Line one<br>line two<hr>", [("T007", "<br>"), ("T007", "<hr>")]),
        ("<br?> <<br>> <link> <input> <img>", []),
    ],
    ids=["void-elements", "optional-escaped-or-plausible-keys"],
)
def test_html_void_elements_are_markup(source: str, expected: list[tuple[str, str]]) -> None:
    assert found(source, select=["T007"]) == expected
    assert found("<br>", schema=["br"], select=["T007", "T001"]) == []  # a declared key is a key


def test_allow_drops_findings_on_exact_snippets() -> None:
    source = "Say <scratch-pad> then <first-name> and <usr:id>."
    assert found(source) == [("T005", "<scratch-pad>"), ("T005", "<first-name>"), ("T003", "<usr:id>")]
    assert found(source, allow=["<scratch-pad>", "<usr:id>"]) == [("T005", "<first-name>")]
    assert found("a<br>b", allow=["<br>"]) == []


# Every help that says what to write, checked against the renderer: (code, template, lint options,
# text the help tells you to write, state, what that text renders as).
HELP_CLAIMS = [
    ("T001", "Hi <nmae>", {"schema": ["name"]}, "<<nmae>>", {}, "<nmae>"),
    ("T002", "Hi < name >", {}, "<name>", {"name": "Ada"}, "Ada"),
    ("T002", "Hi < name >", {}, "< name >", {}, "< name >"),
    ("T004", "Hi <name, ok", {}, "<name>", {"name": "Ada"}, "Ada"),
    ("T004", "Hi <name, ok", {}, "<name", {}, "<name"),
    ("T006", "Hi <nick??>", {}, "<nick?>", {}, ""),
    ("T007", "<example>x</example>", {}, "<<example>>", {}, "<example>"),
    ("T007", "a<br>b", {}, "<<br>>", {}, "<br>"),
    ("T008", "Hi {user:name}", {}, "<user:name>", {"user:name": "Ada"}, "Ada"),
    ("T009", "Hi <nick>", {"schema": ["nick?"]}, "<nick?>", {}, ""),
    ("T010", "Hi <name?>", {"schema": ["name"]}, "<name>", {"name": "Ada"}, "Ada"),
    ("T013", "<</example>>", {}, "</example>", {}, "</example>"),
    ("T013", '<<example id="1">>', {}, '<example id="1">', {}, '<example id="1">'),
]


@pytest.mark.parametrize(
    ("code", "source", "options", "written", "state", "rendered"),
    HELP_CLAIMS,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(HELP_CLAIMS)],
)
def test_help_suggestions_render_as_they_claim(
    code: str, source: str, options: dict[str, Any], written: str, state: dict[str, Any], rendered: str
) -> None:
    (diag,) = [d for d in lint(source, **options) if d.code == code]
    assert diag.help is not None
    assert f"write {written}" in diag.help or f"close it as {written}" in diag.help or f"{written} already" in diag.help
    assert Template(written).render(state) == rendered


def test_every_help_that_says_write_has_a_claim() -> None:
    claimed = {c[0] for c in HELP_CLAIMS}
    sources = [(c, s) for c, s, e in RULE_CASES if e] + [(c, s) for c, s, e, _ in SCHEMA_CASES if e]
    for code, source in sources:
        schema = ["name", "nick?", "user:name"] if code in {"T001", "T009", "T010"} else None
        for diag in lint(source, schema=schema, select=[code]):
            if diag.help and "write " in diag.help:
                assert diag.code in claimed, diag.help


SCOPE_WORDS = ["usr", "User", "USER", "tmp", "tem", "temps", "ap", "apps", "apt", "uesr", "users", "userz"]
NOT_SCOPE_WORDS = ["team", "step", "term", "temporary", "api", "use", "ape", "usa", "xsl", "session", "type"]


@pytest.mark.parametrize("prefix", SCOPE_WORDS + NOT_SCOPE_WORDS)
def test_scope_typos_are_the_same_in_both_dialects(prefix: str) -> None:
    """T003 (``<usr:name>``) and T019 (``{usr:name}``) take the same prefixes for misspelt scopes."""
    angle = [code for code, _ in found(f"Hi <{prefix}:name> there")]
    adk = [code for code, _ in found(f"Hi {{{prefix}:name}} there", dialect="adk")]
    assert angle == (["T003"] if prefix in SCOPE_WORDS else [])
    assert adk == (["T019"] if prefix in SCOPE_WORDS else [])


# --- the ADK dialect: what google-adk 2.x would do wrong at run time (T016..T019) ------------------
# tests/test_adk_integration.py runs each claim through google-adk's own inject_session_state.

ADK_RULE_CASES = [
    # T016 ADK eats the braces after a placeholder
    ("T016", 'Return {"id": {order_id}}', [("T016", "{order_id}}")]),
    ("T016", '{"a": {"b": {user:name?}}}', [("T016", "{user:name?}}}")]),
    ("T016", '{"a": { key }}', [("T016", "{ key }}")]),
    ("T016", '{"a": {key} } {"a": "{key}"} {"a": 1}} {{key}} ${key}} {first-name}} {a.b}}', []),
    # T017 ADK substitutes doubled braces, which its documentation keeps
    ("T017", "Use {{topic}} here", [("T017", "{{topic}}")]),
    (
        "T017",
        "{{ user:name }} and {{nick?}} and {{key} and {{{deep}}}",
        [("T017", "{{ user:name }}"), ("T017", "{{nick?}}"), ("T017", "{{key}"), ("T017", "{{{deep}}}")],
    ),
    ("T017", "{{ customer.first_name }} {% if vip %} {{ items | length }} {{.Name}} {{#each items}}", []),
    ("T017", "{{ {key} }} ${{key}} \\{{key}} {{}} {{ }} {{first-name}}", []),
    # T018 artifacts
    ("T018", "See {artifact.report.pdf}", [("T018", "{artifact.report.pdf}")]),
    (
        "T018",
        "{artifact.notes?} {{artifact.x}} { artifact.y }",
        [("T018", "{artifact.notes?}"), ("T018", "{{artifact.x}}"), ("T018", "{ artifact.y }")],
    ),
    ("T018", '${artifact.x} artifact.x {"artifact.x": 1} {artifacts.x} \\{artifact.x}', []),
    # T019 near misses that ADK leaves as written
    ("T019", "Dear {first-name},", [("T019", "{first-name}")]),
    (
        "T019",
        "{usr:name} {User:lang} {tmp:step?} { ap:tier }",
        [("T019", "{usr:name}"), ("T019", "{User:lang}"), ("T019", "{tmp:step?}"), ("T019", "{ ap:tier }")],
    ),
    (
        "T019",
        "{nick??} {nick ?} {user:first-name}",
        [("T019", "{nick??}"), ("T019", "{nick ?}"), ("T019", "{user:first-name}")],
    ),
    ("T019", "Press {Ctrl-C} or {cmd-k}; replace {your-api-key} with yours", []),
    ("T019", "{a-b} {x ?} x^{n-1} {ORD-1234} {user.name} {user: name} {user name} {session:id} {http://x}", []),
    ("T019", "`{first-name}` \\text{first-name} ${first-name} \\{first-name} {{first-name}} {first-name}}", []),
    ("T019", "```\nf'{first-name}'\n```\n$f({first-name})$ {{ {first-name} }} {type:string} {note:x}", []),
    ("T019", "{team:name} {api:key} {time:now} {use:case} {Application:tier} {apps:tier}", [("T019", "{apps:tier}")]),
    (
        "T019",
        "{uesr:name} {users:name} {temps:step} {ap:tier}",
        [("T019", c) for c in ("{uesr:name}", "{users:name}", "{temps:step}", "{ap:tier}")],
    ),
    # URL and path templates (OpenAPI, REST docs): the braces are meant for whoever calls the URL
    ("T019", "GET /v1/users/{user-id}/orders/{order-id} then GET {base-url}/health", []),
    ("T019", "Save to gs://{bucket-name}/{object-name} or ~/{file-name}", []),
    # capitals: a format or a placeholder for the reader to fill in, not a state key
    ("T019", "Dates as {YYYY-MM-DD}; replace {YOUR-API-KEY} and {PROJECT-ID} yourself; {HH-MM}", []),
    (
        "T019",
        "Dear {first-name}, call /{x} and {Ship-To} and {user:First-Name}",
        [("T019", "{first-name}"), ("T019", "{Ship-To}"), ("T019", "{user:First-Name}")],
    ),
    # T020 braces google-adk sends as written: ${...} and dotted paths
    ("T020", "Keep within ${weekend_budget.budget}.", [("T020", "${weekend_budget.budget}")]),  # adk-docs' routing
    ("T020", "Hi ${name}, ${ user:name? }", [("T020", "${name}"), ("T020", "${ user:name? }")]),
    (
        "T020",
        "{order.id} {user:profile.name} {legs.0.origin?} { a.b }",
        [("T020", c) for c in ("{order.id}", "{user:profile.name}", "{legs.0.origin?}", "{ a.b }")],
    ),
    ("T020", "{name} {user:name?} {artifact.notes} {{a.b}} {{ customer.first_name }} \\{a.b} $${a} {a.b}}", []),
    ("T020", "`${name}` and\n```\n{order.id}\n```\n${HOME} ${API_KEY} {A.B} \\text{a.b} /users/{a.b}/", []),
    ("T020", "${first-name} ${} {a..b} {a.} {.a} {e. g.} $x.y$ ${a b}", []),
    # T031 workflow placeholders of ADK's docs and its TypeScript port, which Python google-adk sends as written
    (
        "T031",
        "It is {CityTime.time_info} in {CityTime.city} right now.",  # adk-docs' data-handling page, as it was
        [("T031", "{CityTime.time_info}"), ("T031", "{CityTime.city}")],
    ),
    (
        "T031",
        "It is <CityTime.time_info from lookup_time_function> in\n<CityTime.city from lookup_time_function> now.",
        [("T031", f"<CityTime.{field} from lookup_time_function>") for field in ("time_info", "city")],
    ),
    ("T031", "{ TopicDetails.title? } and < Order.items.0x from fetch_order >", [("T031", "{ TopicDetails.title? }")]),
    (
        "T031",
        "< Order.id from fetch_order > {Report.summary}",
        [("T031", "< Order.id from fetch_order >"), ("T031", "{Report.summary}")],
    ),
    # not a workflow placeholder: a path of a key (T020's), capitals, code, doubled braces, no field, prose
    ("T031", "{order.id} {A.B} {HTTP.GET} `{CityTime.city}` {{CityTime.city}} ${CityTime.city} {CityTime}", []),
    ("T031", "```\nIt is {CityTime.time_info}\n```\n<time_info from lookup> <a reply from the user>", []),
    ("T031", "\\{CityTime.city} x{CityTime.city} <CityTime.city from> <CityTime.city from two nodes>", []),
]


@pytest.mark.parametrize(
    ("code", "source", "expected"),
    ADK_RULE_CASES,
    ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(ADK_RULE_CASES)],
)
def test_adk_rule(code: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found(source, select=[code], dialect="adk") == expected


def test_t020_leaves_workflow_placeholders_to_t031() -> None:
    """One finding per place: `{CityTime.city}` is T031's when T031 is on, T020's when it is off."""
    source = "It is {CityTime.time_info}; order {order.id}."
    assert found(source, dialect="adk") == [("T031", "{CityTime.time_info}"), ("T020", "{order.id}")]
    assert found(source, dialect="adk", ignore=["T031"]) == [("T020", "{CityTime.time_info}"), ("T020", "{order.id}")]
    (finding,) = lint("{CityTime.city}", dialect="adk")
    assert finding.message == (
        "'{CityTime.city}' reads a field of the node's input, named by its class: a workflow placeholder that "
        "Python google-adk does not have, so the model receives it as written"
    )
    assert finding.help is not None
    assert finding.help.startswith(
        "write the value to state (the node's output_key, or Event(state={'city': ...}) in a function node) "
        "and insert it with {city}"
    )
    (node,) = lint("<CityTime.city from lookup_time_function>", dialect="adk")
    assert "a field of the output of node 'lookup_time_function'" in node.message
    assert [d.code for d in lint("It is {CityTime.city}.")] == ["T008"]  # the angle syntax: ADK braces left over


def test_adk_rules_are_off_in_the_angle_syntax() -> None:
    for _, source, expected in ADK_RULE_CASES:
        if expected:
            assert not {d.code for d in lint(source)} & {"T016", "T017", "T018", "T019"}


ADK_MESSAGES = [
    (
        '{"id": {order_id}}',
        "T016",
        "google-adk replaces '{order_id}}' as a whole: it inserts the value of 'order_id' and drops the '}' after it",
        "write {order_id} } (a space after the placeholder): ADK then keeps the '}'",
    ),
    (
        "{{topic}}",
        "T017",
        "google-adk substitutes '{{topic}}' with the value of 'topic' (it strips every brace), though its "
        "documentation says doubled braces stay literal; it raises KeyError when 'topic' is not in state",
        "write {topic} to insert the value; to send {{topic}} as written, give ADK an instruction provider",
    ),
    (
        "{{topic?}}",
        "T017",
        "though its documentation says doubled braces stay literal",
        "write {topic?} to insert the value",
    ),
    (
        "{artifact.notes}",
        "T018",
        "google-adk loads the artifact 'notes' here: it raises ValueError when the Runner has no artifact service, "
        "and raises KeyError when no artifact 'notes' is saved",
        "give the Runner an artifact_service and save 'notes' before the turn, or write {artifact.notes?} so",
    ),
    (
        "{artifact.notes?}",
        "T018",
        "and renders empty when no artifact 'notes' is saved",
        "save 'notes' before the turn;",
    ),
    (
        "{usr:name}",
        "T019",
        "'{usr:name}' is not a state name for google-adk (unknown scope 'usr:'), so it is sent as written; "
        "did you mean {user:name}?",
        "write {user:name} to insert the value",
    ),
    ("{User:first-name}", "T019", "(scopes are lowercase: user:; '-' is not allowed in a name)", "{user:first_name}"),
    ("{user:first-name}", "T019", "google-adk ('-' is not allowed in a name), so", "{user:first_name}"),
    ("{nick ?}", "T019", "(white space before '?')", "write {nick?} to insert"),
    ("{nick??}", "T019", "(more than one '?')", "write {nick?} to insert"),
]


@pytest.mark.parametrize(
    ("source", "code", "message", "help"), ADK_MESSAGES, ids=[f"{c[1]}-{i}" for i, c in enumerate(ADK_MESSAGES)]
)
def test_adk_messages_and_help(source: str, code: str, message: str, help: str) -> None:
    (diag,) = lint(source, dialect="adk")
    assert (diag.code, diag.severity) == (code, RULES[code].severity)
    assert message in diag.message
    assert diag.help is not None
    assert help in diag.help


# A realistic ADK instruction with one seeded mistake per rule: (code, line, column, flagged text).
SEEDED_ADK = textwrap.dedent(
    """\
    # Role
    You are the booking assistant of {app:brand}. Greet {user:first-name} by name.

    <itinerary>
    {itinerary}
    </itinerary>

    ## Output
    Reply with JSON like {"booking": {booking_id}}, nothing else.
    Attach the policy text: {artifact.policy}
    Templates for the e-mail service are written {{customer_name}}.
    """
)
SEEDED_FINDINGS = [
    ("T019", 2, 53, "{user:first-name}"),
    ("T016", 9, 34, "{booking_id}}"),
    ("T018", 10, 25, "{artifact.policy}"),
    ("T017", 11, 46, "{{customer_name}}"),
]


def test_seeded_adk_mistakes_are_found_at_their_exact_positions() -> None:
    diags = lint(SEEDED_ADK, dialect="adk", path="booking.txt")
    got = [(d.code, d.span.line, d.span.column, SEEDED_ADK[d.span.start : d.span.end]) for d in diags if d.span]
    assert got == SEEDED_FINDINGS
    assert {d.path for d in diags} == {"booking.txt"}


ADK_LEGITIMATE = [
    ("json-one-line", 'Reply as {"status": "ok", "items": [{"id": 1}, {"id": 2}]}.'),
    ("json-multi-line", '{\n  "trip": "Lisbon",\n  "days": [\n    {"day": 1, "plan": ["walk"]}\n  ]\n}'),
    ("json-with-placeholders", 'Reply as {"user": "{user:name}", "order": "{order_id}", "note": "{note?}"}.'),
    ("code-fence", '```python\nprint(f"{first-name}: {total:.2f}")\nd = {k: v for k, v in pairs}\n```'),
    ("inline-code", "Write keys in kebab case, like `{first-name}`, in the YAML."),
    ("jinja", "The web layer renders {{ customer.first_name }} and {% if vip %}VIP{% endif %}."),
    ("go-and-handlebars", "Go: {{.Name}}; Handlebars: {{#each items}}{{/each}}."),
    ("math", "Cost is $O(n^{2})$ and $x_{i-1} + x_{i+1}$; a set {a, b, c}; a range {1-10}."),
    ("latex-text", "Use \\textbf{first-name} and \\frac{a-b}{c}."),
    ("shell-and-regex", "Run ${HOME}/bin/go and match \\d{2,4}-[a-z]{3}."),
    ("css", ".btn {color: red; margin-top: 4px} .card {display: flex}"),
    ("xml-sections", "<user_profile>\n{user_profile}\n</user_profile>\n<notes>{notes?}</notes>"),
    ("br-and-html", "Line one<br>line two<br/>\n<b>bold</b> and <a href='x'>link</a>"),
    ("prose-braces", "Fill in {the customer's name} and {date of birth} on the form."),
    ("colon-words", "Values like {type:string} and {label: text} stay."),  # dotted names: T020 (the model sees them)
    ("placeholders", "Hi {user:name}, your order {order_id} is { status? }. Step {temp:step?}."),
]


@pytest.mark.parametrize("text", [t for _, t in ADK_LEGITIMATE], ids=[i for i, _ in ADK_LEGITIMATE])
def test_adk_rules_have_no_findings_on_what_adk_leaves_alone(text: str) -> None:
    assert lint(text, dialect="adk", select=["ALL"], ignore=["T012"]) == []


ADK_PROMPTS = Path(__file__).parent / "adk_prompts"
ADK_PROMPT_FILES = sorted(ADK_PROMPTS.glob("*.*"))


@pytest.mark.parametrize("prompt", ADK_PROMPT_FILES, ids=[p.name for p in ADK_PROMPT_FILES])
def test_sample_adk_prompts_lint_clean_in_their_dialect_and_after_convert(prompt: Path) -> None:
    from templating.convert import convert_adk

    text = prompt.read_text(encoding="utf-8")
    assert lint(text, dialect="adk", path=prompt.name, select=["ALL"]) == []
    converted, differences = convert_adk(text)
    assert differences == ()
    assert lint(converted, path=prompt.name, select=["ALL"]) == []


def test_the_sample_prompts_use_the_xml_tag_idiom() -> None:
    from templating.convert import convert_adk

    converted = convert_adk((ADK_PROMPTS / "travel_planner.txt").read_text(encoding="utf-8"))[0]
    assert "<<itinerary>>\n<itinerary>\n</itinerary>" in converted
    assert "<<user_profile>>\n<user_profile>\n</user_profile>" in converted


# Pieces of ADK instructions: braces, names, near misses, the characters ADK's pattern treats specially.
ADK_PIECES = ["{", "}", "a", "bc", "user:", "usr:", "-", " ", "?", "$", "\\", '"', "\n", "artifact."]
adk_texts = st.lists(st.sampled_from(ADK_PIECES), max_size=25).map("".join)


@given(adk_texts)
def test_adk_lint_is_total_and_agrees_with_convert(source: str) -> None:
    """T016..T018 report exactly the spans convert warns about (two implementations of ADK's behaviour),
    but for a {key} inside {{ ... }}, which no rule reports."""
    from templating.convert import adk_code_differences

    diags = lint(source, dialect="adk", select=["ALL"])
    for diag in diags:
        assert diag.span is not None
        assert 0 <= diag.span.start < diag.span.end <= len(source)
    ours = {(d.span.start, d.span.end) for d in diags if d.span and d.code in {"T016", "T017", "T018"}}
    theirs = {
        (d.span.start, d.span.end)
        for d in adk_code_differences(source)
        if d.text.startswith(("{{", "{artifact.")) or d.text.endswith("}}") or "artifact." in d.text
    }
    assert ours == theirs


# --- the XML-tag idiom: <<tag>> ... <tag> ... </tag> ------------------------------------------------

XML_TAG_IDIOM = [
    ("escape-then-placeholder", "<<itinerary>>\n<itinerary>\n</itinerary>", []),
    ("one-line", "<<name>><name></name> and <<city>><city></city>", []),
    ("optional-inside", "<<notes>>\n<notes?>\n</notes>", []),
    (
        "nested-sections",
        "<<trip>>\n<<itinerary>>\n<itinerary>\n</itinerary>\n<<budget>>\n<budget>\n</budget>\n</trip>",
        [],
    ),
    (
        "markdown-and-json-around",
        '## Context\n<<user_profile>>\n<user_profile>\n</user_profile>\n\nReply as {"ok": true}.\n'
        "<<itinerary>>\nCurrent plan:\n<itinerary>\n</itinerary>",
        [],
    ),
    ("placeholder-as-opening-tag", "<example>\nInput: hi\n</example>", [(1, 1)]),
    ("escape-missing", "<itinerary>\n<itinerary>\n</itinerary>", [(1, 1)]),
    ("escape-closed-before", "<<example>>a</example>\n<example>\nb\n</example>", [(2, 1)]),
    ("other-tag-inside-escape", "<<plan>>\n<example>x</example>\n</plan>", [(2, 1)]),
    ("second-section-without-escape", "<<a>>\n<a>\n</a>\n<a>\nx\n</a>", [(4, 1)]),
    ("two-tags-one-escaped", "<<itinerary>><itinerary></itinerary> <example>e</example>", [(1, 38)]),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in XML_TAG_IDIOM], ids=[c[0] for c in XML_TAG_IDIOM])
def test_xml_tag_idiom(source: str, expected: list[tuple[int, int]]) -> None:
    diags = lint(source, select=["ALL"])
    assert [(d.span.line, d.span.column) for d in diags if d.span] == expected
    assert {d.code for d in diags} <= {"T007"}
    # Doing what each help says (escaping the opening tag) leaves nothing to report.
    fixed = source
    for diag in sorted(diags, key=lambda d: -d.span.start if d.span else 0):
        assert diag.span is not None
        assert diag.help is not None
        written = diag.help.removeprefix("write ").split(" ")[0]
        fixed = fixed[: diag.span.start] + written + fixed[diag.span.end :]
    assert lint(fixed, select=["ALL"]) == []
