"""Entries (Markdown notes) and the external sources they were made from."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django.db.models.functions import MD5, Lower, Trim
from simple_history.models import HistoricalRecords

from knowledge.models.projects import Project, Subtopic
from knowledge.models.revisions import EntryRevisionBase

SHORT_ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: easy to read aloud


def new_short_id() -> str:
    return "".join(secrets.choice(SHORT_ID_ALPHABET) for _ in range(8))


def content_hash(kind: str, body: str) -> str:
    """sha256 of the normalized kind and body: same text, same hash, whatever the line endings."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    normalized = "\n".join(line.rstrip() for line in lines).strip()
    return hashlib.sha256(f"{kind.strip().lower()}\n{normalized}".encode()).hexdigest()


def body_key() -> models.Func:
    """md5 of a body with its whitespace collapsed and its case folded, computed by PostgreSQL
    and indexed (entry_body_key): entries that say the same word for word are found by one
    index lookup, whatever their line breaks or capitals. A query must use this very
    expression for the index to serve it."""
    collapsed = models.Func(
        "body",
        models.Value(r"\s+"),
        models.Value(" "),
        models.Value("g"),
        function="REGEXP_REPLACE",
        output_field=models.TextField(),
    )
    return MD5(Lower(Trim(collapsed)))


def embedding_key(entry: Entry) -> str:
    """What an entry's vectors are made from: the content hash plus the title, which every
    chunk carries as context, so a rename re-embeds as well."""
    return hashlib.sha256(f"{entry.content_hash}\n{entry.title}".encode()).hexdigest()


class EntryStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    OPEN = "open", "Open (needs follow-up)"
    RESOLVED = "resolved", "Resolved"
    SUPERSEDED = "superseded", "Superseded"
    ARCHIVED = "archived", "Archived"


class Source(models.Model):
    """An external item (mail, URL, chat, ticket) an entry was made from."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sources")
    kind = models.SlugField(max_length=40)
    external_id = models.CharField(max_length=500)
    url = models.URLField(max_length=2000, blank=True)
    title = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "kind", "external_id"], name="source_identity_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.external_id}"


def body_lines(body: str) -> int:
    """How many lines a body has (a last line without a newline counts)."""
    return body.count("\n") + (1 if body and not body.endswith("\n") else 0)


class Entry(models.Model):
    """A Markdown note. Identity for upsert: (project, subtopic, title), case-insensitive."""

    short_id = models.CharField(max_length=12, unique=True, default=new_short_id, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="entries")
    subtopic = models.ForeignKey(
        Subtopic, null=True, blank=True, on_delete=models.PROTECT, related_name="entries"
    )
    title = models.CharField(max_length=300)
    slug = models.SlugField(max_length=120, allow_unicode=True)
    body = models.TextField(blank=True)
    kind = models.SlugField(max_length=40, default="note")
    tags = ArrayField(models.CharField(max_length=60), default=list, blank=True)
    status = models.CharField(
        max_length=20, choices=EntryStatus.choices, default=EntryStatus.ACTIVE
    )
    searchable = models.BooleanField(
        default=True, help_text="Transcripts are kept but left out of normal search."
    )
    metadata = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64, editable=False)
    version = models.PositiveIntegerField(default=1, editable=False)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    generated_by = models.CharField(
        max_length=120, blank=True, help_text="Who wrote it, e.g. agent:claude-code or human:alice"
    )
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verified_at = models.DateTimeField(null=True, blank=True)
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sources = models.ManyToManyField(Source, blank=True, related_name="entries")

    # Maintained by the service layer (see knowledge.services.entries._index_text).
    search_vector = SearchVectorField(null=True, editable=False)
    # Set by the embedding task: which content and which model the stored vectors belong to.
    embedded_hash = models.CharField(max_length=64, blank=True, editable=False)
    embedding_model = models.CharField(max_length=120, blank=True, editable=False)
    # Since when its text waits for vectors (set by the write that changed it, cleared when they
    # are stored): the embedding workers take the oldest first; search and /readyz report it.
    embed_pending_since = models.DateTimeField(null=True, blank=True, editable=False)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    history = HistoricalRecords(
        bases=[EntryRevisionBase], excluded_fields=["search_vector", "embed_pending_since"]
    )

    class Meta:
        verbose_name_plural = "entries"
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                "project",
                "subtopic",
                Lower("title"),
                name="entry_identity_unique",
                nulls_distinct=False,
                violation_error_message="An entry with this title already exists here.",
            ),
            models.CheckConstraint(condition=~Q(title=""), name="entry_title_not_empty"),
        ]
        indexes = [
            GinIndex(fields=["tags"], name="entry_tags_gin"),
            GinIndex(fields=["search_vector"], name="entry_search_gin"),
            # Close-enough link targets (pg_trgm similarity), see knowledge.services._kernel.graph.
            GinIndex(fields=["title"], name="entry_title_trgm", opclasses=["gin_trgm_ops"]),
            models.Index(fields=["project", "status"], name="entry_project_status"),
            models.Index(fields=["project", "kind"], name="entry_project_kind"),
            models.Index(body_key(), name="entry_body_key"),
            models.Index(
                fields=["embed_pending_since"],
                name="entry_embed_pending",
                condition=Q(embed_pending_since__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def path(self) -> str:
        """`project/subtopic/path` without the title; costs a query unless related are loaded."""
        return (
            f"{self.project.slug}/{self.subtopic.path}" if self.subtopic_id else self.project.slug
        )

    @property
    def permalink(self) -> str:
        """`memory://project/subtopic/path/entry-slug`: accepted wherever an entry reference is."""
        return f"memory://{self.path}/{self.slug}"

    @property
    def chars(self) -> int:
        """The body's size in characters (listings and search hits show it)."""
        return len(self.body)

    @property
    def lines(self) -> int:
        return body_lines(self.body)

    @property
    def is_verified(self) -> bool:
        return self.verified_at is not None
