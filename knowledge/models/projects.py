"""Projects and their nested subtopics: where entries live, and who may see them."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Lower
from simple_history.models import HistoricalRecords

from knowledge.models.revisions import RevisionBase


class Sensitivity(models.TextChoices):
    PUBLIC = "public", "Public (every signed-in user)"
    INTERNAL = "internal", "Internal (every active user)"
    CONFIDENTIAL = "confidential", "Confidential (members only)"
    RESTRICTED = "restricted", "Restricted (members only, hidden from others)"


class SchemaMode(models.TextChoices):
    OFF = "off", "Off (schemas only report)"
    WARN = "warn", "Warn (a write that does not fit is saved, with what it lacks)"
    STRICT = "strict", "Strict (a write that does not fit is refused)"


class Project(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    sensitivity = models.CharField(
        max_length=20, choices=Sensitivity.choices, default=Sensitivity.INTERNAL
    )
    archived = models.BooleanField(default=False)
    schema_mode = models.CharField(
        max_length=10,
        choices=SchemaMode.choices,
        default=SchemaMode.OFF,
        help_text="Whether writes must fit their note type's schema (an entry of kind schema).",
    )
    schemas_shared = models.BooleanField(
        default=False,
        help_text="Other projects may take their note types' schemas from this one.",
    )
    schema_library = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="schema_users",
        help_text="A shared project whose schemas apply here to the note types this project has "
        "no schema of its own for.",
    )
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
