"""Cairn's data: projects, nested subtopics, entries and their sources, access and tokens.

Models hold data and invariants only; every write goes through knowledge.services.
"""

from knowledge.models.access import ApiToken, Membership, Role, TokenScope
from knowledge.models.entries import (
    SHORT_ID_ALPHABET,
    Entry,
    EntryStatus,
    Source,
    body_lines,
    content_hash,
    embedding_key,
    new_short_id,
)
from knowledge.models.graph import Observation, Relation
from knowledge.models.oauth import (
    OAuthClient,
    OAuthCode,
    OAuthGrant,
    OAuthRefreshToken,
    secret_digest,
)
from knowledge.models.projects import Project, SchemaMode, Sensitivity, Subtopic
from knowledge.models.revisions import RevisionBase
from knowledge.models.search import EMBEDDING_DIM, EntryChunk, LexemeStat

# The revision tables django-simple-history builds: named once, here, for every reader.
HistoricalEntry = Entry.history.model
HistoricalProject = Project.history.model
HistoricalSubtopic = Subtopic.history.model

__all__ = [
    "EMBEDDING_DIM", "SHORT_ID_ALPHABET", "ApiToken", "Entry", "EntryChunk", "EntryStatus",
    "HistoricalEntry", "HistoricalProject", "HistoricalSubtopic", "LexemeStat", "Membership",
    "OAuthClient", "OAuthCode", "OAuthGrant", "OAuthRefreshToken", "Observation", "Project",
    "Relation", "RevisionBase", "Role", "SchemaMode", "Sensitivity", "Source", "Subtopic",
    "TokenScope", "body_lines", "content_hash", "embedding_key", "new_short_id", "secret_digest",
]  # fmt: skip
