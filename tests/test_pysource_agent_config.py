"""google-adk's Agent Config files read into the scan (templating/pysource/agent_config.py): the tree of
`config_path:` references, instructions placed exactly in the YAML file, callbacks and tools followed by dotted
name into the project's Python files, and what cannot be read skipped with the reason."""

from __future__ import annotations

import builtins
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from templating.pysource import AgentCall, Scan, scan

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "agent_apps"


def read_app(tmp_path: Path, files: dict[str, str]) -> Scan:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan([], root=str(tmp_path), configs=[str(tmp_path / "root_agent.yaml")])


def by_name(found: Scan) -> dict[str | None, AgentCall]:
    return {a.name: a for a in found.agents}


def test_the_yaml_pipeline_fixture(tmp_path: Path) -> None:
    app = tmp_path / "yaml_pipeline"
    shutil.copytree(FIXTURES / "yaml_pipeline", app)
    python = [str(p) for p in app.rglob("*.py")]
    found = scan(python, root=str(tmp_path), configs=[str(app / "root_agent.yaml")])
    agents = by_name(found)
    pipeline, writer, critic = agents["pipeline"], agents["writer"], agents["critic"]
    assert (pipeline.kind, writer.kind, critic.kind) == ("sequential", "llm", "llm")
    assert [ref.target for ref in pipeline.sub_agents or ()] == [writer.id, critic.id]
    assert pipeline.option("description") == "Writes a draft, then critiques it."
    (seed,) = pipeline.callback("before_agent_callback")
    assert seed.kind == "function"
    assert [(s.key, s.conditional) for s in found.functions[seed.target].steps] == [("topic", False)]
    save, search = writer.tools or ()
    assert save.kind == "function"
    assert [s.key for s in found.functions[save.target].steps] == ["notes"]
    assert (search.kind, search.target) == ("external", "google.adk.tools.google_search")
    assert writer.output_key is not None
    assert writer.output_key.key == "draft"
    # every character of the literal block scalar maps to its place in writer.yaml
    source = (app / "writer.yaml").read_text(encoding="utf-8")
    (instruction,) = [i for i in found.config_instructions if i.label == "writer.instruction"]
    assert instruction.text == "Write a short draft about {topic}.\nApply the critique: {critique}\n"
    for index, char in enumerate(instruction.text):
        _, span = instruction.locate(index, index + 1)
        assert source[span.start : span.end] == char
    ref = writer.instruction()
    assert ref is not None
    assert ref.key == instruction.key
    (quoted,) = [i for i in found.config_instructions if i.label == "critic.instruction"]
    critic_source = (app / "sub" / "critic.yaml").read_text(encoding="utf-8")
    _, span = quoted.locate(10, 15)
    assert critic_source[span.start : span.end] == "draft"
    assert found.config_skipped == []


PLACES = [
    # (id, the instruction as written in the YAML file, the value, whether each character is placed exactly)
    ("literal-block", "instruction: |\n  Hello {name}.\n\n  Bye.\n", "Hello {name}.\n\nBye.\n", True),
    ("literal-strip", "instruction: |-\n    Hello {name}.\n", "Hello {name}.", True),
    ("literal-keep", "instruction: |+\n  Hello {name}.\n\n", "Hello {name}.\n\n", True),
    ("plain", "instruction: Hello {name}.\n", "Hello {name}.", True),
    ("single-quoted", "instruction: 'Hello {name}.'\n", "Hello {name}.", True),
    ("double-quoted-escape", 'instruction: "Hello\\t{name}."\n', "Hello\t{name}.", False),
    ("folded", "instruction: >\n  Hello\n  {name}.\n", "Hello {name}.\n", False),
]


@pytest.mark.parametrize(("written", "value", "exact"), [c[1:] for c in PLACES], ids=[c[0] for c in PLACES])
def test_instruction_characters_are_placed_where_exact(tmp_path: Path, written: str, value: str, exact: bool) -> None:
    found = read_app(tmp_path, {"root_agent.yaml": "name: a\n" + written})
    (instruction,) = found.config_instructions
    assert instruction.text == value
    source = (tmp_path / "root_agent.yaml").read_text(encoding="utf-8")
    at = value.index("{name}")
    _, span = instruction.locate(at, at + len("{name}"))
    if exact:
        assert source[span.start : span.end] == "{name}"
    else:  # pointed at the whole scalar: never a wrong column
        assert "{name}" in source[span.start : span.end] or "{name}" in source[span.start :]
        assert span.start >= source.index("instruction:") + len("instruction:")


SKIPPED = [
    # (id, files, the start of the reason recorded)
    ("not-yaml", {"root_agent.yaml": "name: [unclosed\n"}, "not valid YAML"),
    ("not-a-mapping", {"root_agent.yaml": "- a\n- b\n"}, "an Agent Config file holds a mapping"),
]


@pytest.mark.parametrize(("files", "why"), [c[1:] for c in SKIPPED], ids=[c[0] for c in SKIPPED])
def test_a_file_that_cannot_be_read_is_skipped_with_the_reason(tmp_path: Path, files: dict[str, str], why: str) -> None:
    found = read_app(tmp_path, files)
    assert found.agents == []
    (skipped,) = found.config_skipped
    assert skipped.reason.startswith(why)


REFERENCES = [
    # (id, a sub_agents item, the ref's kind, the start of its reason)
    ("escaping-path", "  - config_path: ../outside.yaml\n", "unknown", "google-adk takes a config_path relative"),
    ("absolute-path", "  - config_path: /etc/passwd\n", "unknown", "google-adk takes a config_path relative"),
    ("missing-file", "  - config_path: nowhere.yaml\n", "unknown", ""),
    ("code-outside-the-project", "  - code: some_library.agents.helper\n", "dotted", "some_library.agents.helper"),
]


@pytest.mark.parametrize(("item", "kind", "why"), [c[1:] for c in REFERENCES], ids=[c[0] for c in REFERENCES])
def test_references_that_lead_nowhere_stay_unknown(tmp_path: Path, item: str, kind: str, why: str) -> None:
    (tmp_path / "outside.yaml").write_text("name: outside\n", encoding="utf-8")
    found = read_app(
        tmp_path / "app", {"root_agent.yaml": "agent_class: SequentialAgent\nname: r\nsub_agents:\n" + item}
    )
    (root,) = found.agents  # nothing outside the app's folder is read
    (ref,) = root.sub_agents or ()
    assert ref.kind == kind
    assert str(ref.reason).startswith(why)


def test_code_references_reach_the_projects_python_agents(tmp_path: Path) -> None:
    found = read_app(
        tmp_path / "agents",
        {
            "root_agent.yaml": (
                "agent_class: SequentialAgent\nname: root\nsub_agents:\n  - code: helpers.agent.helper\n"
            ),
            "helpers/__init__.py": "",
            "helpers/agent.py": (
                "from google.adk.agents import LlmAgent\n"
                "helper = LlmAgent(name='helper', instruction='Help with {task}.', output_key='help')\n"
            ),
        },
    )
    agents = by_name(found)
    (ref,) = agents["root"].sub_agents or ()
    assert ref.kind == "agent"
    assert ref.target == agents["helper"].id
    assert agents["helper"].output_key is not None


def test_without_pyyaml_each_file_is_skipped_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_yaml(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "yaml":
            raise ImportError("No module named 'yaml'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_yaml)
    found = read_app(tmp_path, {"root_agent.yaml": "name: a\ninstruction: Hi {x}\n"})
    assert found.agents == []
    (skipped,) = found.config_skipped
    assert "PyYAML" in skipped.reason
    assert "pip install 'agent-prompt-templating[adk]'" in skipped.reason
