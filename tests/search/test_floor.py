"""The relevance floor: a hit found only by meaning below CAIRN_SEARCH_MIN_SIMILARITY (or far
under the nearest hit) is dropped; a hit that holds the query's words stays, however low its
fused score, unless it holds only a small share of the query's weight (common words) and is
not near in meaning."""

from knowledge.search.fusion import Fusion, above_floor, floored, fuse_lists, shown_above_floor


def test_the_floor_drops_only_meaning_only_hits_below_it():
    text, text_scores = [1, 2], {1: 0.5, 2: 0.01}
    semantic, semantic_scores = [1, 3, 4, 2], {1: 0.9, 3: 0.85, 4: 0.6, 2: 0.55}
    fused = fuse_lists(Fusion(), text, text_scores, semantic, semantic_scores)
    assert {i for i, _ in fused} == {1, 2, 3, 4}
    kept = above_floor(fused, text, semantic_scores, 0.8)
    assert [i for i, _ in kept] == [i for i, _ in fused if i != 4]  # 2 has the words: kept
    assert above_floor(fused, text, semantic_scores, 0.0) == fused  # 0: off


def test_a_word_hit_holding_only_common_words_and_not_near_in_meaning_falls_below():
    # 1 holds the rare words (weight 4.5), 2 and 3 only the common one (1.4); 3 is as near in
    # meaning as the nearest hit, 2 is not; 4 is found only by meaning, far under the nearest.
    text, held = [2, 1, 3], {1: 4.5, 2: 1.4, 3: 1.4}
    semantic_scores = {1: 0.90, 3: 0.89, 2: 0.85, 4: 0.82, 5: 0.5}
    fused = [(2, 1.3), (1, 1.2), (3, 0.9), (4, 0.3), (5, 0.1)]
    kept, left = floored(fused, text, semantic_scores, 0.8, held=held)
    assert [i for i, _ in kept] == [1, 3]
    assert left == {2, 4}  # 5, under the floor by meaning alone, is not counted
    assert shown_above_floor(fused, text, semantic_scores, 0.8, 2, held=held) == (
        [(1, 1.2), (3, 0.9)],
        1,
    )
    # Without the words' weights only the meaning-only rule applies: 4 is 0.08 under 1.
    assert [i for i, _ in floored(fused, text, semantic_scores, 0.8)[0]] == [2, 1, 3]
    assert floored(fused, text, semantic_scores, 0.0) == (fused, set())  # 0: off
