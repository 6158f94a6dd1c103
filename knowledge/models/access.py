"""Who may do what: project memberships (users or groups) and personal API tokens."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import Q

from knowledge.models.projects import Project


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
    # Set once at creation when projects were chosen. Deleting a project (or a restore that
    # replaces them all) empties `projects`, and an empty list means "all of the user's
    # projects": this flag keeps such a token at what is left, down to nothing.
    narrowed = models.BooleanField(default=False, editable=False)
    agent_label = models.CharField(
        max_length=120, blank=True, help_text="Recorded as generated_by, e.g. agent:claude-code"
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # A token a client got through MCP authorization (knowledge/models/oauth.py): its consent,
    # and the one resource (this server's /mcp) it is good for. A personal token has neither.
    grant = models.ForeignKey(
        "knowledge.OAuthGrant",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="access_tokens",
        editable=False,
    )
    resource = models.CharField(max_length=300, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        # As people say it: Django would title it "Api token" in the admin's pages.
        verbose_name = "API token"
        verbose_name_plural = "API tokens"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    NO_PROJECTS_LEFT = "no projects left: it sees nothing; revoke it or create another"

    def reach(self) -> str:
        """What the token may see, in words: a narrowed token whose projects were all deleted
        has an empty list, which must not read as "all projects"."""
        slugs = sorted(p.slug for p in self.projects.all())
        if slugs:
            return ", ".join(slugs)
        return self.NO_PROJECTS_LEFT if self.narrowed else "every project of its user"

    @staticmethod
    def hash_secret(secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()
