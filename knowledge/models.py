"""Cairn's data: projects, nested subtopics, entries and their sources, access and tokens.

Models hold data and invariants only; every write goes through knowledge.services.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from pgvector.django import HnswIndex, VectorField
from simple_history.models import HistoricalRecords

SHORT_ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: easy to read aloud


def new_short_id() -> str:
    return "".join(secrets.choice(SHORT_ID_ALPHABET) for _ in range(8))


def content_hash(kind: str, body: str) -> str:
    """sha256 of the normalized kind and body: same text, same hash, whatever the line endings."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    normalized = "\n".join(line.rstrip() for line in lines).strip()
    return hashlib.sha256(f"{kind.strip().lower()}\n{normalized}".encode()).hexdigest()


class RevisionBase(models.Model):
    """Extra columns on each history row (django-simple-history `bases`): the git mirror
    fills in the commit that holds it."""

    git_commit = models.CharField(max_length=40, blank=True, default="", db_index=True)

    class Meta:
        abstract = True


class Sensitivity(models.TextChoices):
    PUBLIC = "public", "Public (every signed-in user)"
    INTERNAL = "internal", "Internal (every active user)"
    CONFIDENTIAL = "confidential", "Confidential (members only)"
    RESTRICTED = "restricted", "Restricted (members only, hidden from others)"


class Project(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    sensitivity = models.CharField(
        max_length=20, choices=Sensitivity.choices, default=Sensitivity.INTERNAL
    )
    archived = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(bases=[RevisionBase])

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="project_name_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.slug


class Subtopic(models.Model):
    """A node of a project's topic tree; `path` is the materialized slug path (`a/b/c`)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="subtopics")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    slug = models.SlugField(max_length=80)
    name = models.CharField(max_length=200)
    path = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords(bases=[RevisionBase])

    class Meta:
        ordering = ["project__slug", "path"]
        constraints = [
            models.UniqueConstraint(fields=["project", "path"], name="subtopic_path_unique"),
        ]
        indexes = [
            # path LIKE 'a/b/%' for subtree filters
            models.Index(
                fields=["path"], name="subtopic_path_prefix", opclasses=["text_pattern_ops"]
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.path}"

    @property
    def depth(self) -> int:
        return self.path.count("/")


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

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    history = HistoricalRecords(bases=[RevisionBase], excluded_fields=["search_vector"])

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
            # Close-enough link targets (pg_trgm similarity), see knowledge.services._graph.
            GinIndex(fields=["title"], name="entry_title_trgm", opclasses=["gin_trgm_ops"]),
            models.Index(fields=["project", "status"], name="entry_project_status"),
            models.Index(fields=["project", "kind"], name="entry_project_kind"),
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
    def is_verified(self) -> bool:
        return self.verified_at is not None


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


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    EDITOR = "editor", "Editor"
    MAINTAINER = "maintainer", "Maintainer"


class Membership(models.Model):
    """A user or a group's role in a project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="memberships",
    )
    group = models.ForeignKey(
        "auth.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True)
                | Q(user__isnull=True, group__isnull=False),
                name="membership_user_xor_group",
            ),
            models.UniqueConstraint(fields=["project", "user"], name="membership_user_unique"),
            models.UniqueConstraint(fields=["project", "group"], name="membership_group_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user or self.group} → {self.project} ({self.role})"


class TokenScope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Read and write"


class ApiToken(models.Model):
    """A personal API token. Only the sha256 of the secret is stored; the secret is shown once."""

    PREFIX = "cairn_"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, db_index=True, editable=False)
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    scope = models.CharField(max_length=10, choices=TokenScope.choices, default=TokenScope.WRITE)
    projects = models.ManyToManyField(
        Project, blank=True, related_name="+", help_text="Leave empty for all the user's projects."
    )
    agent_label = models.CharField(
        max_length=120, blank=True, help_text="Recorded as generated_by, e.g. agent:claude-code"
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def hash_secret(secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()


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
