"""Helpers shared by the services (private: no transaction of their own)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from knowledge.actors import Actor
from knowledge.errors import Forbidden, ValidationFailed


def require_write(actor: Actor) -> None:
    if not getattr(actor.user, "is_authenticated", False):
        raise Forbidden("Sign in or send an API token to write to Cairn.")
    if not actor.can_write:
        raise Forbidden(
            "This token is read-only. Create a token with the write scope to save entries."
        )


def clean(instance: models.Model, *, exclude: list[str] | None = None) -> None:
    """Field validation with messages that name the field; uniqueness is checked by callers."""
    for field in instance._meta.concrete_fields:
        value = getattr(instance, field.attname, None)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and "\x00" in v for v in values):
            # PostgreSQL cannot store NUL in text; say so instead of failing with a DataError.
            raise ValidationFailed(
                f"{field.name} contains a NUL character (\\x00); remove it and retry.",
                fields={field.name: ["contains a NUL character"]},
            )
    try:
        instance.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        fields = {k: [str(m) for m in v] for k, v in exc.message_dict.items()}
        detail = "; ".join(f"{k}: {' '.join(v)}" for k, v in fields.items())
        raise ValidationFailed(f"Invalid input — {detail}", fields=fields) from exc


def record(instance: models.Model, actor: Actor, reason: str) -> None:
    """Tell django-simple-history who made this revision and why."""
    instance._history_user = actor.db_user
    instance._change_reason = (reason or "").strip()[:100] or None
