"""Search: full text + local embeddings, fused. See knowledge.search.engine."""

from knowledge.search.engine import MODES, search_entries
from knowledge.search.explain import EXPLAIN_TOP, explain_parts, left_out_note, no_words_note
from knowledge.search.filters import SearchFilters
from knowledge.search.providers import EmbeddingUnavailable, get_provider
from knowledge.search.types import SearchHit, SearchResults, Signals

__all__ = [
    "EXPLAIN_TOP",
    "MODES",
    "EmbeddingUnavailable",
    "SearchFilters",
    "SearchHit",
    "SearchResults",
    "Signals",
    "explain_parts",
    "get_provider",
    "left_out_note",
    "no_words_note",
    "search_entries",
]
