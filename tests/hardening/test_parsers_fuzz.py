"""The parsers that read user text run in linear time: no input may hold the process.

Every parse runs in a watchdog child (tests/watchdog.py) and is timed there, answer and refusal
alike (a missing heading is refused, and a slow refusal holds a request as long as a slow
answer): a call over the bound fails the test, and a call that never returns is killed and fails
it too, instead of hanging the suite. Hypothesis builds lines from the characters that make
backtracking patterns blow up (runs of spaces, tabs, `#`, sentence ends); the graph parser, path
splitting and the other functions reviewed for their patterns get inputs up to 100,000
characters. What a call answers is checked in this process, once the child has shown it fast.
"""

import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from knowledge.errors import ValidationFailed
from knowledge.markdown import first_h1, is_fence, parse_heading
from tests.hardening.parsers import replace_section
from tests.watchdog import WATCHDOG_SECONDS, Watchdog

# Generous for a shared 2-core machine; the backtracking patterns took 9-30 s on 2-3 KB lines.
BOUND_SECONDS = 0.5
_ATOMS = st.sampled_from(["#", " ", "\t", "x", ".", "!", " #", "# ", "\x0b", "```", "\r", "é"])
_RUN = st.tuples(_ATOMS, st.integers(1, 3000)).map(lambda t: t[0] * t[1])
LINES = st.lists(_RUN, min_size=1, max_size=6).map("".join)
BODIES = st.lists(LINES, min_size=1, max_size=4).map("\n".join)

PARSERS = "tests.hardening.parsers"  # the calls below with their other arguments bound
HEADINGS = ["knowledge.markdown.parse_heading", f"{PARSERS}.heading_for_chunking",
            "knowledge.markdown.first_h1"]  # fmt: skip


@pytest.fixture(scope="module")
def watchdog():
    dog = Watchdog()
    yield dog
    dog.close()
    # The worst time per function, for the record (shown with `pytest -s`).
    for name, (seconds, size) in sorted(dog.worst.items()):
        print(f"worst {name}: {seconds * 1000:.1f} ms on {size:,} chars")


def _timed(watchdog, names: list[str], *args: str) -> None:
    """Each function, called with `args` in the child, answers or refuses within the bound.
    The first one over it fails the test: a killed call costs the watchdog's whole time."""
    for name in names:
        seconds = watchdog.seconds(name, *args)
        took = "killed" if seconds == float("inf") else f"{seconds:.2f}s"
        shape = ", ".join(f"{a[:40]!r}… ({len(a):,} chars)" for a in args)
        assert seconds < BOUND_SECONDS, (
            f"{name} over {BOUND_SECONDS}s (watchdog {WATCHDOG_SECONDS}s) on {shape}: {took}"
        )


def _replaced_or_refused(body: str, section: str) -> None:
    """The section replaced, or a refusal that names the missing heading."""
    try:
        assert isinstance(replace_section(body, section), str)
    except ValidationFailed as exc:
        assert "heading" in exc.message


# No shrinking: every replay of a slow input costs up to the watchdog's time.
FUZZ = settings(
    max_examples=150,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@FUZZ
@given(LINES)
def test_heading_parsing_is_bounded(watchdog, line):
    _timed(watchdog, HEADINGS, line)


@FUZZ
@given(BODIES)
def test_chunking_is_bounded(watchdog, body):
    _timed(watchdog, ["knowledge.search.chunking.chunk_text"], body)


@FUZZ
@given(BODIES, LINES)
def test_replace_section_is_bounded_whether_it_finds_the_heading_or_not(watchdog, body, section):
    _timed(watchdog, [f"{PARSERS}.replace_section"], body, section)
    _replaced_or_refused(body, section)


@FUZZ
@given(BODIES)
def test_import_title_parsing_is_bounded(watchdog, body):
    _timed(watchdog, [f"{PARSERS}.import_record"], body)


@pytest.mark.parametrize(
    "line",
    [
        "# " + " " * 5000,
        "# a" + " " * 5000 + "b",
        "# x" + " " * 3000 + "#" * 3000 + " x",
        "# a" + " \t" * 3000 + "\x0bb#",
    ],
)
def test_the_reported_hostile_headings_parse_fast(watchdog, line):
    _timed(watchdog, [*HEADINGS, "knowledge.search.chunking.chunk_text"], line)
    body = f"{line}\n\nsome text\n"
    _timed(watchdog, [f"{PARSERS}.replace_section"], body, "nope")  # refused: no such heading
    with pytest.raises(ValidationFailed, match="heading"):
        replace_section(body, "nope")


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
        ("###### Six", (6, "Six")),
        ("#X Y", None),  # the run of `#` is all `#`, and a space ends it
        ("# Box X", (1, "Box X")),  # only `#` closes a heading
    ],
)
def test_heading_rules(line, expected):
    assert parse_heading(line) == expected


def test_only_spaces_indent_a_heading():
    """A tab is a code block's indent in CommonMark, and nothing else comes before the `#`."""
    assert parse_heading("\t# Tab", max_indent=3) is None
    assert parse_heading("X# not", max_indent=3) is None


def test_fences_open_with_backticks_or_tildes_after_any_indent():
    assert is_fence("```") and is_fence("~~~yaml") and is_fence("  ```python")
    assert not is_fence("text ```") and not is_fence("``")


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("# Title\ntext", "Title"),
        ("intro\n## Two\ntext\n# One\n# Later\n", "One"),
        ("## Only two\ntext", None),
        ("no heading at all", None),
    ],
)
def test_the_first_level_one_heading_titles_an_imported_file(body, title):
    assert first_h1(body) == title


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


def _bounded(watchdog, text):
    _timed(watchdog, TEXT_FUNCTIONS, text)


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
