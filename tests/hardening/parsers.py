"""The parsers of test_parsers_fuzz.py as calls of strings only, for the watchdog child
(tests/watchdog.py), which imports a function by name and calls it with the strings it is sent.

A refusal (ValidationFailed, ValueError) is an answer the child times like any other."""

from __future__ import annotations

from pathlib import Path

from history.importing import record_from
from knowledge.markdown import parse_heading
from knowledge.services.entries_edit import apply_edit


def heading_for_chunking(line: str):
    """parse_heading as chunking calls it: CommonMark's indent, empty headings allowed."""
    return parse_heading(line, max_indent=3, allow_empty=True)


def replace_section(body: str, section: str) -> str:
    return apply_edit(body, operation="replace_section", section=section, content="x")


def import_record(body: str):
    """An imported file's fields; its title comes from its first heading."""
    return record_from({}, body, Path("note.md"))
