"""Per-line Markdown parsing in linear time (pure: no database).

User text reaches these functions on every edit, chunking and import, so none of them uses a
backtracking pattern: a heading line of a few thousand spaces once held the GIL for half a
minute (`^(#{1,6})\\s+(.+?)\\s*#*\\s*$` is cubic on it). Each step here is a scan or a strip.
"""

from __future__ import annotations

_SPACE = " \t"


def parse_heading(
    line: str, *, max_indent: int = 0, allow_empty: bool = False
) -> tuple[int, str] | None:
    """(level, text) when `line` is an ATX heading (`## Text ##`), else None.

    Up to `max_indent` leading spaces are allowed (CommonMark allows 3); the opening run of 1-6
    `#` must be followed by a space or tab, the text is stripped, and a closing run of `#` is
    dropped when a space precedes it (`# C#` keeps its `#`). An empty heading (`## `) is None
    unless `allow_empty`.
    """
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > max_indent or not stripped.startswith("#"):
        return None
    rest = stripped.lstrip("#")
    level = len(stripped) - len(rest)
    if level > 6 or not rest or rest[0] not in _SPACE:
        return None
    text = rest.strip()
    closing = text.rstrip("#")
    if closing != text and (not closing or closing[-1] in _SPACE):
        text = closing.rstrip()
    if not text and not allow_empty:
        return None
    return level, text


def is_fence(line: str) -> bool:
    """A code fence line (``` or ~~~ after optional indentation)."""
    return line.lstrip().startswith(("```", "~~~"))


def is_list_item(line: str) -> bool:
    """A bullet (`- `, `* `, `+ `) or numbered (`1. `, `1) `) list item, indented or not."""
    text = line.lstrip(_SPACE)
    if text[:1] in ("-", "*", "+"):
        return text[1:2] in (" ", "\t")
    digits = len(text) - len(text.lstrip("0123456789"))
    return (
        0 < digits <= 9
        and text[digits : digits + 1] in (".", ")")
        and (text[digits + 1 : digits + 2] in (" ", "\t"))
    )


def first_h1(body: str) -> str | None:
    """The text of the first level-1 heading in `body`, or None."""
    for line in body.split("\n"):
        heading = parse_heading(line.rstrip("\r"))
        if heading and heading[0] == 1:
            return heading[1]
    return None
