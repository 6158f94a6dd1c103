"""Agents signed in through MCP authorization (OAuth 2.1): the clients that asked, each person's
consent (a grant), and the short-lived secrets of the flow.

The access token a grant holds is an ordinary ApiToken (`ApiToken.grant`), so every access
rule, audit label and revocation that applies to a personal token applies to it. Every secret
here is stored as its sha256 only, like an ApiToken's.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import Q

from knowledge.models.access import TokenScope
from knowledge.models.projects import Project


def secret_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class OAuthClient(models.Model):
    """A program that may ask people for access: one that registered itself (RFC 7591), or one
    named by the URL of its metadata document (a client ID metadata document), kept as fetched."""

    class Kind(models.TextChoices):
        REGISTERED = "registered", "registered itself"
        DOCUMENT = "document", "metadata document"

    client_id = models.CharField(max_length=255, unique=True)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    name = models.CharField(max_length=200)
    redirect_uris = models.JSONField(default=list)
    # Empty for a public client (token_endpoint_auth_method "none"): PKCE is its proof.
    secret_hash = models.CharField(max_length=64, blank=True, editable=False)
    auth_method = models.CharField(max_length=30, default="none")
    grant_types = models.JSONField(default=list)
    scope = models.CharField(max_length=200, blank=True)
    client_uri = models.CharField(max_length=500, blank=True)
    # What the client sent (or its document said), as registered: bounded before it is stored.
    metadata = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    # A metadata document is fetched again once this passes.
    refresh_after = models.DateTimeField(null=True, blank=True)
    # A revoked client may not ask anyone again; its grants are revoked with it.
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "OAuth client"

    def __str__(self) -> str:
        return f"{self.name} ({self.client_id[:40]})"


class OAuthGrant(models.Model):
    """One person's consent to one client: what it may reach (read or write, all their projects
    or some) and for which resource. Its access token is an ApiToken (access_tokens); its
    refresh tokens rotate within it, and a refresh token used twice revokes it whole."""

    client = models.ForeignKey(OAuthClient, on_delete=models.CASCADE, related_name="grants")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_grants"
    )
    scope = models.CharField(max_length=10, choices=TokenScope.choices)
    projects = models.ManyToManyField(Project, blank=True, related_name="+")
    # As on ApiToken: projects were chosen, so an emptied list still means "nothing".
    narrowed = models.BooleanField(default=False)
    resource = models.CharField(max_length=300)
    redirect_uri = models.CharField(max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)
    # The connection ends here whatever its refreshes (CAIRN_TOKEN_MAX_DAYS after consent).
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "connected client"
        verbose_name_plural = "connected clients"
        indexes = [models.Index(fields=["user", "client"], name="oauth_grant_user_client")]

    def __str__(self) -> str:
        return f"{self.client.name} for {self.user}"

    NO_PROJECTS_LEFT = "no projects left: it sees nothing"

    def reach(self) -> str:
        slugs = sorted(p.slug for p in self.projects.all())
        if slugs:
            return ", ".join(slugs)
        return self.NO_PROJECTS_LEFT if self.narrowed else "every project of its user"


class OAuthCode(models.Model):
    """An authorization code: what the person consented to, waiting for the client to prove
    (PKCE) it is the one that asked. Used once; a second use revokes what the first made."""

    code_hash = models.CharField(max_length=64, unique=True, editable=False)
    client = models.ForeignKey(OAuthClient, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    scope = models.CharField(max_length=10, choices=TokenScope.choices)
    project_ids = models.JSONField(default=list)
    narrowed = models.BooleanField(default=False)
    resource = models.CharField(max_length=300)
    redirect_uri = models.CharField(max_length=2000)
    # Whether the request named it (then the token request must name the same one).
    redirect_uri_given = models.BooleanField(default=True)
    code_challenge = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    grant = models.ForeignKey(
        OAuthGrant, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    def __str__(self) -> str:
        return f"code for {self.client_id} ({'used' if self.used_at else 'waiting'})"


class OAuthRefreshToken(models.Model):
    """A refresh token of a grant. Each refresh uses one and makes the next; a used one that
    comes back means two holders: the grant is revoked."""

    PREFIX = "cairnrt_"

    grant = models.ForeignKey(OAuthGrant, on_delete=models.CASCADE, related_name="refresh_tokens")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # At most one refresh token of a grant waits to be used.
            models.UniqueConstraint(
                fields=["grant"], condition=Q(used_at__isnull=True), name="oauth_one_live_refresh"
            )
        ]

    def __str__(self) -> str:
        return f"refresh token of grant {self.grant_id}"
