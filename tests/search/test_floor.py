"""The relevance floor: a hit found only by meaning below CAIRN_SEARCH_MIN_SIMILARITY is dropped;
a hit that holds the query's words always stays, however low its fused score."""

from knowledge.search.fusion import Fusion, above_floor, fuse_lists


def test_the_floor_drops_only_meaning_only_hits_below_it():
    text, text_scores = [1, 2], {1: 0.5, 2: 0.01}
    semantic, semantic_scores = [1, 3, 4, 2], {1: 0.9, 3: 0.85, 4: 0.6, 2: 0.55}
    fused = fuse_lists(Fusion(), text, text_scores, semantic, semantic_scores)
    assert {i for i, _ in fused} == {1, 2, 3, 4}
    kept = above_floor(fused, text, semantic_scores, 0.8)
    assert [i for i, _ in kept] == [i for i, _ in fused if i != 4]  # 2 has the words: kept
    assert above_floor(fused, text, semantic_scores, 0.0) == fused  # 0: off
