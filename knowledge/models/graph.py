"""The knowledge graph parsed from entry bodies: observations and typed relations, versioned
by validity ranges."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q

from knowledge.models.entries import Entry


class Observation(models.Model):
    """A fact about an entry, parsed from a `- [category] content #tag (context)` list item.

    Rows are never rewritten: a write that drops or changes the item closes the row
    (`valid_to*`) and adds a new one, so what was believed at any time stays answerable.
    """

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="observations")
    category = models.CharField(max_length=60)
    content = models.TextField()
    tags = ArrayField(models.CharField(max_length=60), default=list, blank=True)
    context = models.CharField(max_length=500, blank=True)
    position = models.PositiveIntegerField(default=0)
    valid_from = models.DateTimeField()
    valid_from_version = models.PositiveIntegerField()
    valid_to = models.DateTimeField(null=True, blank=True)
    valid_to_version = models.PositiveIntegerField(null=True, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)

    class Meta:
        ordering = ["entry", "position", "id"]
        indexes = [
            models.Index(fields=["entry", "valid_to"], name="observation_entry_current"),
            models.Index(fields=["category"], name="observation_category"),
            GinIndex(fields=["search_vector"], name="observation_search_gin"),
        ]

    def __str__(self) -> str:
        return f"[{self.category}] {self.content[:60]}"

    @property
    def is_current(self) -> bool:
        return self.valid_to is None


class Relation(models.Model):
    """A typed link from an entry to another, parsed from `- type [[Target]]` or `[[Target]]`.

    `target_text` is the link as written (shown to readers who may not see the target);
    `target` is the entry it resolved to, or null while it waits for a matching entry.
    `target_key` is the slug of the link's last segment: what a new entry's slug is matched on.
    """

    source = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="relations_out")
    relation_type = models.CharField(max_length=60)
    target_text = models.CharField(max_length=500)
    target_key = models.CharField(max_length=120)
    target = models.ForeignKey(
        Entry, null=True, blank=True, on_delete=models.SET_NULL, related_name="relations_in"
    )
    position = models.PositiveIntegerField(default=0)
    valid_from = models.DateTimeField()
    valid_from_version = models.PositiveIntegerField()
    valid_to = models.DateTimeField(null=True, blank=True)
    valid_to_version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["source", "position", "id"]
        indexes = [
            models.Index(fields=["source", "valid_to"], name="relation_source_current"),
            models.Index(fields=["target", "valid_to"], name="relation_target_current"),
            models.Index(
                fields=["target_key"],
                name="relation_waiting",
                condition=Q(target__isnull=True, valid_to__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.relation_type} [[{self.target_text}]]"

    @property
    def is_current(self) -> bool:
        return self.valid_to is None
