"""Character offsets of a text to LSP positions and back, in the encoding the client negotiated.

The engine counts Python characters (code points); an LSP position counts UTF-16 code units by
default, UTF-8 bytes or code points when client and server agree on them. An emoji before a
placeholder is one character, two UTF-16 units and four UTF-8 bytes.
"""

from __future__ import annotations

import bisect

__all__ = ["Lines"]


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    return len(text)  # utf-32: code points


class Lines:
    """A text's line starts, to convert between offsets and (line, character) in `encoding`
    (`"utf-16"`, `"utf-8"` or `"utf-32"`)."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        starts = [0]
        i = text.find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = text.find("\n", i + 1)
        self.starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        """The 0-based line and character (in the encoding's units) of `offset`."""
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, _units(self.text[self.starts[line] : offset], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The offset of a position; past a line's end it is the line's end, past the text the text's end."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)
        if self.encoding == "utf-32":
            return min(start + max(character, 0), end)
        count = 0
        i = start
        while i < end and count < character:
            count += _units(self.text[i], self.encoding)
            i += 1
        return i
