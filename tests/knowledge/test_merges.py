"""The three-way merge's sweep finds exactly the clashes that comparing every pair finds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge import merges

LINES = st.lists(st.sampled_from(["a", "b", "c", "", "# h"]), max_size=30)


def _pairwise(ours, others):
    return [[o for o in others if merges.touches(change, o)] for change in ours]


@settings(max_examples=300, deadline=None)
@given(base=LINES, theirs=LINES, mine=LINES)
def test_the_sweep_finds_the_clashes_every_pair_would(base, theirs, mine):
    ours, others = merges.changes(base, mine), merges.changes(base, theirs)
    assert merges.clashes(ours, others) == _pairwise(ours, others)
