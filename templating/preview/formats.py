"""A preview as text (for a terminal), Markdown (for a pull request or a notebook) or JSON (for a program)."""

from __future__ import annotations

import json
import re

from .result import AgentPreview, KeyRead, Preview, marker

__all__ = ["as_json", "as_markdown", "as_text", "describe_read", "fence", "instruction_lengths", "summary"]

_GUTTER = "\u2502 "
_PATH = " \u203a "
_DOT = " \u00b7 "
_HOW = {
    "root": "the root agent",
    "sequence": "runs in order in {via}",
    "loop": "runs in {via}'s first iteration",
    "parallel": "runs beside its siblings in {via}",
    "transfer": "runs when {via}'s model transfers to it",
    "agent_tool": "runs when {via}'s model calls it as a tool",
    "workflow": "a node of the workflow {via}",
    "custom": "runs under the custom agent {via}",
}


def how(agent: AgentPreview) -> str:
    return _HOW[agent.reached].format(via=agent.via)


def describe_read(read: KeyRead) -> str:
    """One key an agent reads and where its value comes from, in words."""
    if read.source == "state":
        return f"{read.key} (given{f' by {read.by}, shown as {read.value}' if read.by else ''})"
    if read.source == "earlier":
        return f"{read.key} (from {read.by})"
    if read.source == "marker":
        return f"{read.key} (set by {read.by} at run time, shown as a marker)"
    if read.source == "missing":
        return f"{read.key} (MISSING: nobody supplies it, shown as {read.value})"
    return f"{read.key} (not supplied; optional here)"


def as_json(preview: Preview) -> str:
    return json.dumps(preview.to_json(), indent=2, ensure_ascii=False) + "\n"


def _block(text: str | None) -> list[str]:
    if text is None:
        return ["  (none)"]
    return [(_GUTTER + line).rstrip(" ") if not line else _GUTTER + line for line in text.split("\n")]


def as_text(preview: Preview) -> str:
    lines: list[str] = []
    for agent in preview.agents:
        head = f"{agent.order}. {agent.agent} ({agent.kind}){_DOT}{_PATH.join(agent.path)}{_DOT}{how(agent)}"
        if agent.model:
            head += f"{_DOT}model {agent.model}"
        lines += [("\u2500" * 3) + " " + head, ""]
        if agent.error is not None and agent.system_instruction is None:
            lines += [f"  no request: {agent.error}", ""]
        elif agent.partial is not None:
            lines += [f"PARTIAL: {agent.partial}", ""]
            lines += ["instructions (as templating renders them; not the exact system instruction):"]
            lines += [*_block(agent.system_instruction), ""]
        else:
            lines += ["system instruction:", *_block(agent.system_instruction), ""]
            if agent.instruction_turn is not None:
                lines += ["instruction turn (a user turn before the user's message):", *_block(agent.instruction_turn)]
                lines.append("")
        if agent.partial is None:
            lines.append("tools: " + (", ".join(agent.tools) or "none"))
        lines.append("keys: " + ("; ".join(describe_read(r) for r in agent.reads) or "none"))
        if not agent.exact and agent.partial is None:
            lines.append("NOT EXACT: this may differ at run time (see the notes)")
        lines += [f"note: {note}" for note in agent.notes]
        lines.append("")
    if not preview.agents:
        lines.append("no LlmAgent in this app")
    return "\n".join(lines).rstrip("\n") + "\n"


def fence(text: str) -> str:
    """A Markdown code fence longer than any run of backticks in `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _md_block(text: str) -> list[str]:
    mark = fence(text)
    return [f"{mark}text", text, mark]


def as_markdown(preview: Preview) -> str:
    lines = [f"# What each agent's model sees: `{preview.target}`", ""]
    for agent in preview.agents:
        lines += [f"## {agent.order}. `{agent.agent}` ({agent.kind})", ""]
        where = f"{_PATH.join(agent.path)}{_DOT}{how(agent)}"
        lines += [where + (f"{_DOT}model `{agent.model}`" if agent.model else ""), ""]
        if agent.error is not None and agent.system_instruction is None:
            lines += [f"No request: {agent.error}", ""]
        elif agent.partial is not None:
            lines += [f"**Partial:** {agent.partial}", ""]
            lines += ["**Instructions** (as templating renders them; not the exact system instruction)", ""]
            lines += [*_md_block(agent.system_instruction or ""), ""]
        else:
            lines += ["**System instruction**", "", *_md_block(agent.system_instruction or ""), ""]
            if agent.instruction_turn is not None:
                lines += ["**Instruction turn** (a user turn before the user's message)", ""]
                lines += [*_md_block(agent.instruction_turn), ""]
        if agent.partial is None:
            lines.append("**Tools:** " + (", ".join(f"`{t}`" for t in agent.tools) or "none"))
            lines.append("")
        lines.append("**Keys:** " + ("; ".join(describe_read(r) for r in agent.reads) or "none"))
        lines.append("")
        if not agent.exact and agent.partial is None:
            lines += ["**Not exact:** this may differ at run time.", ""]
        lines += [f"- {note}" for note in agent.notes]
        if agent.notes:
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def summary(preview: Preview) -> list[str]:
    """Lines for stderr: what the values shown as markers stand for, and which keys nobody supplies."""
    out: list[str] = []
    missing: dict[str, list[str]] = {}
    for agent in preview.agents:
        for read in agent.reads:
            if read.source == "missing" and agent.agent not in missing.setdefault(read.key, []):
                missing[read.key].append(agent.agent)
    if missing:
        listed = ", ".join(f"{key} (read by {', '.join(agents)})" for key, agents in missing.items())
        shown = marker("missing: KEY")
        out.append(f"nobody supplies {listed}: the first turn fails there at run time; shown as {shown}")
    inexact = [a.agent for a in preview.agents if not a.exact and a.partial is None]
    if inexact:
        out.append(f"not exact for {', '.join(inexact)} (see each agent's notes)")
    out += list(preview.notes)
    return out


_HEAD = re.compile(r"^\u2500{3} \d+\. (\S+) \(")


def instruction_lengths(text: str) -> dict[str, int]:
    """From a preview in the text format (`as_text`): each agent's name and the length of its instruction (its
    system instruction and instruction turn, the text after each line's gutter), for the snapshot guard."""
    lengths: dict[str, int] = {}
    agent: str | None = None
    inside = False
    for line in text.split("\n"):
        head = _HEAD.match(line)
        if head:
            agent = head.group(1)
            lengths.setdefault(agent, 0)
            inside = False
        elif line == "system instruction:" or line.startswith(("instruction turn", "instructions (")):
            inside = True
        elif agent is not None and inside and line.startswith(_GUTTER.rstrip()):
            lengths[agent] += len(line[len(_GUTTER) :]) + 1
        else:
            inside = False
    return lengths
