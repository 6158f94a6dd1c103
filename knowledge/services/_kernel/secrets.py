"""Bearer secrets: made here, shown once, stored as their sha256 only."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from knowledge.models import secret_digest


@dataclass(frozen=True)
class NewSecret:
    secret: str  # shown once to whoever asked for it
    shown: str  # the first characters, kept to tell secrets apart in lists and logs
    digest: str  # what is stored


def new_secret(prefix: str, *, shown_chars: int = 6) -> NewSecret:
    """A secret of 256 random bits after `prefix` (which says what it is for)."""
    secret = prefix + secrets.token_urlsafe(32)
    return NewSecret(secret, secret[: len(prefix) + shown_chars], secret_digest(secret))
