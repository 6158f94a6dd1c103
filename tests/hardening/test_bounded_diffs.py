"""Every diff a writer can make Cairn compute stays near-linear (issue 32): the write report's
line counts, the unified diff and the admin's side-by-side table, on the issue's input of
repeated lines rewritten into other repeated lines (difflib's ndiff did not finish in 30 s)."""

import pytest

from history.selectors import side_by_side_html, unified_diff
from knowledge.diffs import line_opcodes
from knowledge.reads.write_reports import body_change
from tests.hardening.forked import timed
from tests.watchdog import Watchdog


def rewrite(n: int) -> tuple[str, str]:
    return "A\n" + "x\n" * n + "B", "C\n" + "x\ny\n" * (n // 2) + "D"


def _side(old, new):
    html = side_by_side_html(old, new, old_label="v1", new_label="v2")
    return html.count("<tr>"), html.count("diff_add")


def _report(old, new):
    added, removed, gone = body_change(old, new)
    return added, removed, len(gone)


def _unified(old, new):
    return len(unified_diff(old, new, old_label="a", new_label="b").splitlines())


@pytest.fixture(scope="module")
def watchdog():
    # A spawned child, not a fork of this process: forked from a test process that had run a
    # thousand tests, the same call measured 0.42 s instead of 0.03 s (twice, on fresh clones).
    dog = Watchdog()
    yield dog
    dog.close()


@pytest.mark.parametrize("pipeline", [_side, _report, _unified], ids=["side", "report", "unified"])
def test_a_repetitive_rewrite_costs_about_its_length(watchdog, pipeline):
    def seconds(n: int) -> float:  # the best of three: one descheduled run is not the cost
        return min(watchdog.seconds(f"{__name__}.{pipeline.__name__}", *rewrite(n)) for _ in "abc")

    small, large = seconds(1_000), seconds(10_000)
    # Ten times the lines: near-linear work takes about ten times as long, quadratic a hundred.
    assert large < max(small, 0.005) * 40, (small, large)


def test_the_report_counts_a_long_rewrite_line_by_line():
    # The rewrite keeps half the x lines: counted, not "replaced whole" past 2,000 lines.
    assert timed(_report, *rewrite(10_000))[1] == (5_002, 5_002, 5_002)


def test_the_side_by_side_table_marks_changes_and_escapes():
    html = side_by_side_html(
        "one\ntwo\nkeep the words\n<i>gone</i>",
        "one\n<b>three</b>\nkeep these words",
        old_label="v<1>",
        new_label="v2",
    )
    assert '<th colspan="2" class="diff_header">v&lt;1&gt;</th>' in html
    assert '<span class="diff_sub">two</span>' in html
    assert '<span class="diff_add">&lt;b&gt;three&lt;/b&gt;</span>' in html
    assert 'keep the<span class="diff_chg">se</span> words' in html
    assert (
        '<span class="diff_sub">&lt;i&gt;gone&lt;/i&gt;</span></td><td class="diff_header"></td>'
        in html
    )
    assert "<b>" not in html and "<i>" not in html


def test_the_side_by_side_table_shows_context_only_around_changes():
    old = "\n".join(f"line {i}" for i in range(100))
    html = side_by_side_html(
        old, old.replace("line 50", "line fifty"), old_label="a", new_label="b"
    )
    assert html.count("<tr>") == 1 + 7 and "line 47" in html and "line 46" not in html


def _check_opcodes(a: list[str], b: list[str]) -> list:
    """line_opcodes(a, b) as difflib's get_opcodes promises them: contiguous from (0, 0) to
    (len(a), len(b)), each tag what its two ranges are, and together they turn a into b."""
    ops = line_opcodes(a, b)
    i = j = 0
    out: list[str] = []
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j), f"{ops} does not continue at {(i, j)}"
        assert tag in {"equal", "replace", "delete", "insert"}
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2] and i2 > i1
        elif tag == "replace":
            assert i2 > i1 and j2 > j1
        elif tag == "delete":
            assert i2 > i1 and j2 == j1
        else:
            assert i2 == i1 and j2 > j1
        out += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b)) and out == b
    return ops


@pytest.mark.parametrize(
    "a, b, tags",
    [
        ([], [], []),
        (["x"], ["x"], ["equal"]),
        (["x", "y"], ["x", "y"], ["equal"]),
        ([], ["x"], ["insert"]),
        (["x"], [], ["delete"]),
        (["a", "x", "b"], ["a", "y", "b"], ["equal", "replace", "equal"]),
        (["a", "b"], ["a", "n", "b"], ["equal", "insert", "equal"]),
        (["n", "a", "b"], ["a", "b"], ["delete", "equal"]),
        (["a", "b"], ["a", "b", "n"], ["equal", "insert"]),
        (["a", "b", "c"], ["a", "b"], ["equal", "delete"]),
        (
            ["a", "x", "b", "y", "c"],
            ["a", "b", "c"],
            ["equal", "delete", "equal", "delete", "equal"],
        ),
        (["a", "b", "c"], ["X", "b", "Y"], ["replace", "equal", "replace"]),
        (["a\0b", "c"], ["a\0c", "c"], ["replace", "equal"]),  # a NUL byte is text, not binary
    ],
)
def test_line_opcodes_turn_one_text_into_the_other_as_difflib_would(a, b, tags):
    assert [op[0] for op in _check_opcodes(a, b)] == tags
