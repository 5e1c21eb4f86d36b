"""The distribution a stranger installs: the built wheel, with no extras, in a fresh virtual environment.

It pulls in the core dependencies only (no test tool), renders, and the pytest plugin its entry point
registers loads without syrupy: a test using `prompt_snapshot` fails with one line naming the extra, the
others pass. This test builds the wheel (once per session; `TEMPLATING_WHEEL=path/to.whl` hands it one built
already, as .ci/run does) and installs from the package index (PyPI), so it takes some 10 to 30 seconds;
`pytest -m "not slow"` (or `-m "not wheel"`) leaves it out, CI runs it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DISTRIBUTION = PYPROJECT["project"]["name"]
CORE = {"lark", "pydantic", "jinja2"}
TEST_TOOLS = {"pytest", "syrupy", "hypothesis"}


def requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return match[0].lower().replace("_", "-")


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (None, CORE),
        ("pytest", {"pytest", "syrupy"}),
        (
            "dev",
            {"pytest", "syrupy", "hypothesis", "mypy", "ruff", "build", "twine", "pyyaml", "jsonschema", "pytest-lsp"},
        ),
    ],
    ids=["core", "pytest-extra", "dev-extra"],
)
def test_declared_dependencies(extra: str | None, names: set[str]) -> None:
    project = PYPROJECT["project"]
    declared = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    assert {requirement_name(r) for r in declared} == names


def test_the_entry_point_names_the_module_that_loads_without_syrupy() -> None:
    assert PYPROJECT["project"]["entry-points"]["pytest11"] == {"templating": "templating.pytest_entry"}


SNAPSHOT_TESTS = """
def test_uses_the_fixture(prompt_snapshot):
    prompt_snapshot("Hello <name>", {"name": "Ada"})

def test_plain():
    import templating
    assert templating.render("<a>", {"a": 1}) == "1"
"""


def run(*args: str | Path, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout: the one named by TEMPLATING_WHEEL (.ci/run builds it before the tests),
    else built here once per test session."""
    given = os.environ.get("TEMPLATING_WHEEL")
    if given:
        path = Path(given)
        assert path.is_file(), f"TEMPLATING_WHEEL={given!r} is not a file"
        return path
    dist = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", dist, ROOT, cwd=dist)
    (built,) = dist.glob("*.whl")
    return built


@pytest.mark.wheel
@pytest.mark.slow
def test_the_wheel_installs_lean_and_renders(tmp_path: Path, wheel: Path) -> None:
    assert wheel.name.startswith(DISTRIBUTION.replace("-", "_") + "-")
    # A venv without pip of its own (seeding one costs more than all the rest): this interpreter's pip
    # installs into it (pip --python).
    run(sys.executable, "-m", "venv", "--without-pip", tmp_path / "venv", cwd=tmp_path)
    python = tmp_path / "venv" / ("Scripts" if os.name == "nt" else "bin") / "python"
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--disable-pip-version-check"]
    run(*pip, wheel, cwd=tmp_path)

    code = (
        "import json, importlib.metadata as m, templating\n"
        "assert templating.render('Hi <user:name>, {\"json\": 1}', {'user:name': 'Ada'}) == 'Hi Ada, {\"json\": 1}'\n"
        "print(json.dumps(sorted(d.metadata['Name'].lower().replace('_', '-') for d in m.distributions())))"
    )
    installed = set(json.loads(run(python, "-I", "-c", code, cwd=tmp_path)))
    assert not installed & TEST_TOOLS, f"a plain install pulled in test tools: {sorted(installed & TEST_TOOLS)}"
    assert {DISTRIBUTION, *CORE} <= installed

    # pytest without syrupy: the entry point loads, the fixtures say which extra they need.
    run(*pip, "pytest", cwd=tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(SNAPSHOT_TESTS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    result = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "-rE", "tests"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert re.search(r"\b1 passed, 1 error\b", result.stdout), result.stdout + result.stderr
    assert f"pip install '{DISTRIBUTION}[pytest]'" in result.stdout


# The release workflow cannot run here; its structure is checked instead (actionlint ships no wheel).
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def steps_running(job: dict[str, Any]) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def uses(job: dict[str, Any]) -> list[str]:
    return [step["uses"].split("@")[0] for step in job["steps"] if "uses" in step]


def test_the_release_workflow_runs_on_a_version_tag_only() -> None:
    assert workflow()["on"] == {"push": {"tags": ["v*"]}}
    assert workflow()["permissions"] == {"contents": "read"}  # each job asks for more only where it needs it


def test_every_job_is_well_formed() -> None:
    jobs = workflow()["jobs"]
    for name, job in jobs.items():
        assert set(job) <= {"needs", "runs-on", "steps", "environment", "permissions"}, name
        assert job["runs-on"] == "ubuntu-latest", name
        needs = job.get("needs", [])
        assert set([needs] if isinstance(needs, str) else needs) <= set(jobs), f"{name} needs an unknown job"
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), f"{name}: a step either uses an action or runs commands"
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[\w./-]+", step["uses"]), step["uses"]


@pytest.mark.parametrize(
    ("job", "runs", "actions"),
    [
        ("build", ["python -m build", "twine check --strict dist/*"], ["actions/upload-artifact"]),
        ("publish", [], ["actions/download-artifact", "pypa/gh-action-pypi-publish"]),
        ("docs", ["mkdocs build --strict"], ["actions/upload-pages-artifact"]),
        ("deploy-docs", [], ["actions/deploy-pages"]),
        (
            "vscode",
            ["npm ci", "npm run typecheck", "npm test", "npm run build", "npm run package"],
            ["actions/setup-node", "actions/upload-artifact"],
        ),
    ],
    ids=["build", "publish", "docs", "deploy-docs", "vscode"],
)
def test_each_job_does_its_part(job: str, runs: list[str], actions: list[str]) -> None:
    found = workflow()["jobs"][job]
    for command in runs:
        assert command in steps_running(found), f"{job} does not run {command!r}"
    assert [a for a in uses(found) if a not in ("actions/checkout", "actions/setup-python")] == actions


def test_publishing_is_trusted_and_checked_before() -> None:
    jobs = workflow()["jobs"]
    publish = jobs["publish"]
    # The files built and checked once are the files uploaded, and only once the extension's type-check, unit
    # tests and package passed: a release is not half made (the package on PyPI, the .vsix failing).
    assert publish["needs"] == ["build", "vscode"]
    assert publish["permissions"] == {"id-token": "write"}  # trusted publishing: no token stored
    assert publish["environment"]["name"] == "pypi"
    assert publish["environment"]["url"] == f"https://pypi.org/project/{DISTRIBUTION}/"
    assert "GITHUB_REF_NAME" in steps_running(jobs["build"]), "the tag is checked against the version"
    assert jobs["deploy-docs"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["deploy-docs"]["environment"]["name"] == "github-pages"


# The VS Code extension (editors/vscode) is released with the package: same version, same licence.
VSCODE = ROOT / "editors" / "vscode"


def test_the_vscode_extension_is_released_with_the_package() -> None:
    import templating

    manifest = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    assert manifest["version"] == templating.__version__
    assert manifest["license"] == PYPROJECT["project"]["license"]
    assert "MIT License" in (VSCODE / "LICENSE").read_text(encoding="utf-8")
    minimum = re.search(r'MIN_VERSION = "(.+?)"', (VSCODE / "src" / "find.ts").read_text(encoding="utf-8"))
    assert minimum, "src/find.ts names the oldest templating it accepts"
    assert tuple(map(int, minimum.group(1).split("."))) <= tuple(map(int, templating.__version__.split(".")[:3]))
    job = workflow()["jobs"]["vscode"]
    assert "GITHUB_REF_NAME" in steps_running(job), "the tag is checked against the extension's version"
    upload = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "editors/vscode/*.vsix"
