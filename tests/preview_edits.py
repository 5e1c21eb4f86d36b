"""Edits an author makes to an app's agents, one of each kind, for the tests that a preview made after edits
(kept requests reused) is the fresh preview of the edited text (tests/test_preview.py in process,
tests/test_lsp_preview.py through the language server). Each: app, file, the text replaced (its first
occurrence), the new text, and the agents whose request must be assembled again (None: not asserted). With the
helpers those tests share: a preview whole, and a fresh preview of edited text written to disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from templating.preview import Preview, build_preview
from templating.preview.build import clear_cache


def whole(preview: Preview) -> tuple[Any, ...]:
    return (preview.target, preview.mode, preview.to_json(), preview.notes)


def fresh_on_disk(target: str, edits: dict[str, str]) -> Preview:
    """`build_preview` of the edited text written to disk (nothing kept), the files then put back."""
    before = {path: Path(path).read_text(encoding="utf-8") for path in edits}
    try:
        for path, text in edits.items():
            Path(path).write_text(text, encoding="utf-8")
        clear_cache()
        return build_preview(target)
    finally:
        for path, text in before.items():
            Path(path).write_text(text, encoding="utf-8")


class Edit(NamedTuple):
    app: str
    file: str
    old: str
    new: str
    assembled: frozenset[str] | None = None

    def apply(self, text: str) -> str:
        assert self.old in text, (self.file, self.old)
        return text.replace(self.old, self.new, 1)


_CONCIERGE = frozenset({"concierge", "greeting_agent", "booking_agent"})

EDITS = {
    "a sub-agent's instruction": Edit(
        "concierge",
        "agent.py",
        "Greet {user:name?} warmly.",
        "Greet {user:name?} briefly.",
        frozenset({"greeting_agent"}),
    ),
    "the root's instruction": Edit(
        "concierge", "agent.py", "You are the concierge.", "You are the head concierge.", frozenset({"concierge"})
    ),
    "a static_instruction": Edit(
        "concierge", "agent.py", "Always confirm the date", "Always confirm the day", frozenset({"booking_agent"})
    ),
    "a key read": Edit(
        "concierge", "agent.py", "{last_booking?}.", "{last_booking?} in {app:city}.", frozenset({"booking_agent"})
    ),
    "the root's global_instruction": Edit("concierge", "agent.py", "Be courteous.", "Be brief.", _CONCIERGE),
    "a description": Edit("concierge", "agent.py", "Books tables at restaurants.", "Books tables.", _CONCIERGE),
    "an agent added": Edit(
        "concierge",
        "agent.py",
        "sub_agents=[greeting_agent, booking_agent],",
        'sub_agents=[greeting_agent, booking_agent, Agent(name="farewell_agent", model=MODEL, '
        'description="Says goodbye.", instruction="Say goodbye to {user:name?}.")],',
    ),
    "an agent removed": Edit(
        "concierge", "agent.py", "sub_agents=[greeting_agent, booking_agent],", "sub_agents=[greeting_agent],"
    ),
    "an agent renamed": Edit("concierge", "agent.py", 'name="greeting_agent"', 'name="greeter"'),
    "a tool added": Edit("concierge", "agent.py", "tools=[get_weather],", "tools=[get_weather, get_current_time],"),
    "the model": Edit("concierge", "agent.py", 'MODEL = "gemini-2.5-flash"', 'MODEL = "gemini-2.0-flash"'),
    "an output_key": Edit("story_loop", "agent.py", "output_key=STATE_CURRENT_DOC,", 'output_key="draft",'),
    "include_contents": Edit("story_loop", "agent.py", 'include_contents="none",\n', ""),
    "a loop's sub-agent removed": Edit(
        "story_loop",
        "agent.py",
        "sub_agents=[critic_agent_in_loop, refiner_agent_in_loop]",
        "sub_agents=[critic_agent_in_loop]",
    ),
}
