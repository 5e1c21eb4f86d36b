"""Draws the extension's icon: writes icon.svg and the 128x128 icon.png the Marketplace shows.

Run from anywhere with any Python 3 (standard library only): `python3 images/icon.py`. The picture is
a placeholder between angle brackets, `<key>`, on a rounded square. Both files come from the shapes
below; the PNG is rasterised here (4x4 samples a pixel) so that no SVG renderer is needed.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

SIZE = 128
BACKGROUND = (15, 76, 92)  # dark teal
BRACKETS = (255, 255, 255)
KEY = (244, 185, 66)  # amber
RADIUS = 24  # of the square's corners
STROKE = 11  # width of the brackets and the key

# Strokes with round ends: (x1, y1, x2, y2, colour). The brackets are chevrons of two strokes each.
STROKES = [
    (50, 38, 26, 64, BRACKETS),
    (26, 64, 50, 90, BRACKETS),
    (78, 38, 102, 64, BRACKETS),
    (102, 64, 78, 90, BRACKETS),
    (58, 64, 70, 64, KEY),
]


def in_square(x: float, y: float) -> bool:
    """Inside the rounded square covering the whole icon."""
    cx = min(max(x, RADIUS), SIZE - RADIUS)
    cy = min(max(y, RADIUS), SIZE - RADIUS)
    return (x - cx) ** 2 + (y - cy) ** 2 <= RADIUS**2


def near(x: float, y: float, x1: float, y1: float, x2: float, y2: float) -> bool:
    """Within half a stroke of the segment (x1, y1)-(x2, y2)."""
    dx, dy = x2 - x1, y2 - y1
    t = max(0.0, min(1.0, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy or 1)))
    return math.hypot(x - (x1 + t * dx), y - (y1 + t * dy)) <= STROKE / 2


def pixel(px: int, py: int, samples: int = 4) -> tuple[int, int, int, int]:
    """The colour of one pixel: the average of samples x samples points, premultiplied then divided."""
    r = g = b = a = 0.0
    for i in range(samples):
        for j in range(samples):
            x, y = px + (i + 0.5) / samples, py + (j + 0.5) / samples
            if not in_square(x, y):
                continue
            colour = BACKGROUND
            for x1, y1, x2, y2, stroke_colour in STROKES:
                if near(x, y, x1, y1, x2, y2):
                    colour = stroke_colour
            r, g, b, a = r + colour[0], g + colour[1], b + colour[2], a + 1
    if not a:
        return (0, 0, 0, 0)
    return (round(r / a), round(g / a), round(b / a), round(255 * a / samples**2))


def png(rows: list[bytes]) -> bytes:
    """An 8-bit RGBA PNG of these rows (each already RGBA bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 on every row
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def svg() -> str:
    """The same picture as SVG."""
    hex_ = "#{:02x}{:02x}{:02x}".format
    lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}" viewBox="0 0 {SIZE} {SIZE}">',
        f'  <rect width="{SIZE}" height="{SIZE}" rx="{RADIUS}" fill="{hex_(*BACKGROUND)}"/>',
        f'  <g fill="none" stroke-width="{STROKE}" stroke-linecap="round">',
    ]
    for x1, y1, x2, y2, colour in STROKES:
        lines.append(f'    <line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{hex_(*colour)}"/>')
    lines += ["  </g>", "</svg>", ""]
    return "\n".join(lines)


def main() -> None:
    here = Path(__file__).resolve().parent
    rows = [b"".join(bytes(pixel(x, y)) for x in range(SIZE)) for y in range(SIZE)]
    (here / "icon.png").write_bytes(png(rows))
    (here / "icon.svg").write_text(svg(), encoding="utf-8")


if __name__ == "__main__":
    main()
