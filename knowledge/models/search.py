"""Derived search data: embedded chunks of entries and full-text lexeme counts."""

from __future__ import annotations

from django.db import models
from pgvector.django import HnswIndex, VectorField

from knowledge.models.entries import Entry
from knowledge.models.projects import Project

# The vector column's width. The default model (multilingual-e5-small) is 384-d; an HTTP model
# with another width must be asked for 384 dims or truncated (Matryoshka), see knowledge.search.
EMBEDDING_DIM = 384


class EntryChunk(models.Model):
    """A piece of an entry's text and its embedding; an entry's semantic score is its best chunk.

    `model` names the embedding model per vector so a model change re-embeds instead of mixing
    two vector spaces; search only reads vectors of the configured model.
    """

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    model = models.CharField(max_length=120)
    embedding = VectorField(dimensions=EMBEDDING_DIM)
    # sha256 of the text the model read (title and heading included): an edit re-embeds only
    # the chunks whose hash changed; "" (chunks stored before 0007) never matches.
    source_hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["entry", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["entry", "ordinal"], name="entrychunk_entry_ordinal"),
        ]
        indexes = [
            HnswIndex(
                name="entrychunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            models.Index(fields=["model"], name="entrychunk_model"),
        ]

    def __str__(self) -> str:
        return f"{self.entry_id}#{self.ordinal}"


class LexemeStat(models.Model):
    """How many searchable entries of a project contain a full-text lexeme: the IDF of
    full-text ranking (ts_rank alone cannot tell a rare word from a common one). The row with
    word "" holds the project's number of searchable entries. Counted per project so a reader's
    ranking sums only the projects they may see: hidden content never moves their scores.
    Derived data, recounted by lexeme_stats_refresh()."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    word = models.TextField()
    ndoc = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["word", "project"], name="lexemestat_word_project")
        ]

    def __str__(self) -> str:
        return f"{self.word}: {self.ndoc} in project {self.project_id}"
