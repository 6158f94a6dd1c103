"""Search: full text + local embeddings, fused. See knowledge.search.engine."""

from knowledge.search.engine import MODES, SearchHit, search_entries

__all__ = ["MODES", "SearchHit", "search_entries"]
