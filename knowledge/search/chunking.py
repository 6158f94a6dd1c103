"""Split an entry into overlapping, heading- and paragraph-aware chunks for embedding.

e5-small reads at most 512 tokens, so a long entry embedded whole loses its end; chunks of a few
hundred words keep every part findable, and an entry scores by its best chunk.

A word counts once per WORD_CHARS characters: text without spaces (CJK, base64, a URL, a line of
8,000 `[`) would otherwise be one "word" and one chunk of any length, and the model's cost grows
with its tokens (a 168,000-character chunk of `[` held the only worker for ten minutes, and the
mirror behind it). Long words are cut into pieces of WORD_CHARS, joined again inside a chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.markdown import parse_heading

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PUNCTUATION = re.compile(r"[^\w\s]")
_RUN = re.compile(r"\w+")
WORD_CHARS = 16


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    text: str  # the chunk's own words (shown as a snippet)
    heading: str  # the nearest heading above it, for context

    def for_embedding(self, title: str) -> str:
        context = " — ".join(part for part in (title, self.heading) if part)
        return f"{context}\n{self.text}" if context else self.text


def estimated_tokens(text: str) -> int:
    """About how many tokens a model reads in `text` (within ~20 % for prose, code, CJK and
    punctuation, against e5's own tokenizer): one per punctuation mark and per non-ASCII
    character, and for ASCII words one per four letters, at least one a word."""
    runs = _RUN.findall(text)
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    ascii_letters = max(0, sum(len(r) for r in runs) - non_ascii)
    return len(_PUNCTUATION.findall(text)) + non_ascii + max(len(runs), ascii_letters // 4)


def _words(text: str) -> int:
    return sum(-(-len(word) // WORD_CHARS) for word in text.split())


def _pieces(text: str) -> list[str]:
    """The words of `text`, a long word cut into WORD_CHARS pieces (each but the first marked
    by a leading NUL, so _join glues it back without a space)."""
    pieces = []
    for word in text.split():
        pieces.append(word[:WORD_CHARS])
        pieces.extend(
            "\0" + word[i : i + WORD_CHARS] for i in range(WORD_CHARS, len(word), WORD_CHARS)
        )
    return pieces


def _join(pieces: list[str]) -> str:
    return " ".join(pieces).replace(" \0", "").lstrip("\0")


def _split_long(unit: str, size: int) -> list[str]:
    """A paragraph or line longer than a chunk: cut at sentence ends, then at word counts."""
    pieces: list[str] = []
    current: list[str] = []
    for sentence in _SENTENCE_END.split(unit):
        words = _pieces(sentence)
        while len(words) > size:
            if current:
                pieces.append(_join(current))
                current = []
            pieces.append(_join(words[:size]))
            words = words[size:]
        if current and len(current) + len(words) > size:
            pieces.append(_join(current))
            current = []
        current.extend(words)
    if current:
        pieces.append(_join(current))
    return pieces


def _units(body: str, size: int) -> list[tuple[str, str]]:
    """(heading, unit) pairs: paragraphs, or lines when a paragraph is a list of short lines."""
    units: list[tuple[str, str]] = []
    heading = ""
    paragraph: list[str] = []

    def flush() -> None:
        if not paragraph:
            return
        text = "\n".join(paragraph).strip()
        paragraph.clear()
        if not text:
            return
        if _words(text) <= size:
            units.append((heading, text))
            return
        for line in text.split("\n"):
            for piece in _split_long(line, size) if _words(line) > size else [line.strip()]:
                if piece:
                    units.append((heading, piece))

    for line in body.replace("\r\n", "\n").split("\n"):
        match = parse_heading(line, max_indent=3, allow_empty=True)
        if match:
            flush()
            heading = match[1]
            units.append((heading, ""))  # marks a section start
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
    flush()
    return units


def chunk_text(body: str, *, size: int = 200, overlap: int = 40) -> list[Chunk]:
    """Chunks of at most ~`size` words; consecutive chunks of a section share ~`overlap` words.

    A new section (heading) starts a new chunk once the current one holds a third of a chunk,
    so small sections stay together and large ones don't bleed into each other.
    """
    size = max(size, 20)
    overlap = max(0, min(overlap, size // 2))
    chunks: list[Chunk] = []
    current: list[str] = []
    current_heading = ""
    count = 0

    def emit() -> None:
        nonlocal current, count
        text = "\n".join(current).strip()
        if text:
            chunks.append(Chunk(len(chunks), text, current_heading))
        current, count = [], 0

    for heading, unit in _units(body, size):
        if not unit:  # a heading
            if count >= size // 3:
                emit()
            if not current:
                current_heading = heading
            continue
        n = _words(unit)
        if current and count + n > size:
            tail: list[str] = []
            kept = 0
            same_section = heading == current_heading
            for prev in reversed(current):
                if not same_section or kept + _words(prev) > overlap:
                    break
                tail.insert(0, prev)
                kept += _words(prev)
            emit()
            current, count = tail, kept
            current_heading = heading
        if not current:
            current_heading = heading
        current.append(unit)
        count += n
    emit()
    return chunks
