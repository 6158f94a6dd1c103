"""The parsers that read user text run in linear time: no input may hold the process.

Hypothesis builds lines from the characters that make backtracking patterns blow up (runs of
spaces, tabs, `#`, sentence ends) and each parse must finish within a bound per input. The graph
parser, path splitting and the other functions reviewed for their patterns run in a watchdog
child (tests/watchdog.py), on inputs up to 100,000 characters: a regression fails, not hangs.
"""

import re
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from history.importing import record_from
from knowledge.markdown import first_h1, parse_heading
from knowledge.search.chunking import chunk_text
from knowledge.services.entries_edit import apply_edit
from tests.watchdog import WATCHDOG_SECONDS, Watchdog

# Generous for a shared 2-core machine; the backtracking patterns took 9-30 s on 2-3 KB lines.
BOUND_SECONDS = 0.5
_ATOMS = st.sampled_from(["#", " ", "\t", "x", ".", "!", " #", "# ", "\x0b", "```", "\r", "é"])
_RUN = st.tuples(_ATOMS, st.integers(1, 3000)).map(lambda t: t[0] * t[1])
LINES = st.lists(_RUN, min_size=1, max_size=6).map("".join)
BODIES = st.lists(LINES, min_size=1, max_size=4).map("\n".join)


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    assert elapsed < BOUND_SECONDS, f"{fn.__name__} took {elapsed:.2f}s"
    return result


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(LINES)
def test_heading_parsing_is_bounded(line):
    _timed(parse_heading, line)
    _timed(parse_heading, line, max_indent=3, allow_empty=True)
    _timed(first_h1, line)


@FUZZ
@given(BODIES)
def test_chunking_is_bounded(body):
    _timed(chunk_text, body)


@FUZZ
@given(BODIES, LINES)
def test_replace_section_is_bounded(body, section):
    try:
        _timed(apply_edit, body, operation="replace_section", section=section, content="x")
    except Exception as exc:  # a missing heading is a clear refusal, also in bounded time
        assert "heading" in str(exc)


@FUZZ
@given(BODIES)
def test_import_title_parsing_is_bounded(body):
    from pathlib import Path

    _timed(record_from, {}, body, Path("note.md"))


@pytest.mark.parametrize(
    "line",
    [
        "# " + " " * 5000,
        "# a" + " " * 5000 + "b",
        "# x" + " " * 3000 + "#" * 3000 + " x",
        "# a" + " \t" * 3000 + "\x0bb#",
    ],
)
def test_the_reported_hostile_headings_parse_fast(line):
    _timed(parse_heading, line)
    _timed(chunk_text, line)
    body = f"{line}\n\nsome text\n"
    with pytest.raises(Exception, match="heading"):
        _timed(apply_edit, body, operation="replace_section", section="nope", content="x")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Title", (1, "Title")),
        ("###   Spaced   ###  ", (3, "Spaced")),
        ("## C#", (2, "C#")),
        ("## ##", None),
        ("####### seven", None),
        ("#hashtag", None),
        ("  # indented", None),
        ("\tTab", None),
        ("# Title #not-closing", (1, "Title #not-closing")),
    ],
)
def test_heading_rules(line, expected):
    assert parse_heading(line) == expected


def test_indented_and_empty_headings_for_chunking():
    assert parse_heading("   ## Three", max_indent=3) == (2, "Three")
    assert parse_heading("    ## Four", max_indent=3) is None
    assert parse_heading("## ", allow_empty=True) == (2, "")


_OLD = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="#ab \t", max_size=30))
def test_headings_agree_with_the_old_pattern_on_ordinary_lines(line):
    """On short lines the old pattern was fast: the new parser finds the same headings, except
    that a closing `#` now needs a space before it (`# C#` keeps its name, as in CommonMark)."""
    old = _OLD.match(line)
    new = parse_heading(line)
    if old is None:
        assert new is None
    elif new is not None:
        assert new[0] == len(old.group(1))
        assert new[1].rstrip("#").rstrip() == old.group(2).strip().rstrip("#").rstrip() or (
            new[1].startswith(old.group(2).strip())
        )


# --- graph parser, paths and the other patterns on user text, in a watchdog child -------------

# Each function reviewed for its patterns, called with one string (helpers bind other arguments).
TEXT_FUNCTIONS = [
    "knowledge.graph.parsing.parse",
    "knowledge.graph.parsing.targets",
    "knowledge.graph.parsing.relation_type",
    "knowledge.graph.parsing.split_link",
    "knowledge.paths.split_path",
    "knowledge.paths.normalize_path",
    "knowledge.paths.entry_slug",
    "knowledge.search.query.parse",
    "knowledge.search.snippets.lexemes_of",
    "knowledge.search.chunking.chunk_text",
    "knowledge.inputs.when",
    "knowledge.inputs.str_list",
    "history.file_format.safe_segment",
    "web.templatetags.web.snippet",
]
MAX_CHARS = 100_000
_HOSTILE = st.sampled_from(
    [
        " ",
        " ",
        " ",
        "\t",
        "[",
        "[[",
        "]",
        "]]",
        "(",
        ")",
        "#",
        "`",
        "``",
        "/",
        ">",
        "::",
        "\\",
        "|",
        "- ",
        "- [",
        "- rel [[",
        "x",
        "'",
        '"',
        "**",
        ".",
        "é",
        "\n",
    ]
)  # fmt: skip  (spaces thrice: most of the old patterns blew up on a run of them)
# Long runs are what hurt; Hypothesis alone prefers small numbers.
_LENGTH = st.sampled_from([1, 2, 3, 500, 5_000, 20_000]) | st.integers(1, 20_000)
_LONG_RUN = st.tuples(_HOSTILE, _LENGTH).map(lambda t: t[0] * t[1])
HOSTILE_TEXT = st.lists(_LONG_RUN, min_size=1, max_size=6).map(
    lambda runs: "".join(runs)[:MAX_CHARS]
)
# The shapes of the report and of this review: each froze or slowed its parser before.
SHAPES = [
    "- [" + " " * 20_000 + "x",
    "- rel [[" + " " * 20_000,
    "- [rel" + " " * 20_000 + "[[",
    "x " + "`" * 1_000 + " " * 10_000,
    "x " + "``" * 1_000 + " " * 10_000,
    "p/a" + " " * 200_000 + "b/x",
    "a" + " :: " * 20_000 + "b",
    "- [a] x (" + " " * 50_000 + ")" + " " * 40_000 + "x",
    "- [a] " + "#" * 90_000,
    "[[" * 50_000,
    "1 d" + " " * 60 + "x",
]


@pytest.fixture(scope="module")
def watchdog():
    dog = Watchdog()
    yield dog
    dog.close()
    # The worst time per function, for the record (shown with `pytest -s`).
    for name, (seconds, size) in sorted(dog.worst.items()):
        print(f"worst {name}: {seconds * 1000:.1f} ms on {size:,} chars")


def _bounded(watchdog, text):
    slow = {}
    for name in TEXT_FUNCTIONS:
        seconds = watchdog.seconds(name, text)
        if seconds >= BOUND_SECONDS:
            slow[name] = "killed" if seconds == float("inf") else f"{seconds:.2f}s"
    assert not slow, (
        f"over {BOUND_SECONDS}s (watchdog {WATCHDOG_SECONDS}s) on {text[:40]!r}…: {slow}"
    )


@pytest.mark.parametrize("text", SHAPES, ids=lambda t: repr(t[:12]) + f"…{len(t)}")
def test_the_hostile_shapes_parse_fast(watchdog, text):
    _bounded(watchdog, text)


# No shrinking: every replay of a slow input costs up to the watchdog's time.
@settings(
    max_examples=60,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(HOSTILE_TEXT)
def test_generated_hostile_text_parses_fast(watchdog, text):
    _bounded(watchdog, text)
