"""Kernel steps on who writes and what they sent: write access, validation, the revision's
who and why, normalized tags, titles and kinds, and the size limits every write keeps."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from knowledge import limits
from knowledge.actors import Actor
from knowledge.errors import Forbidden, ValidationFailed
from knowledge.inputs import source_url
from knowledge.models import (
    Entry,
    EntryStatus,
)

# --- who may write, and what they sent -------------------------------------------------------


def require_write(actor: Actor) -> None:
    if not getattr(actor.user, "is_authenticated", False):
        raise Forbidden("Sign in or use an API token to write to Cairn.")
    if not actor.can_write:
        raise Forbidden("This token is read-only. Use a token with the write scope to save.")


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


def change_reason(reason: str | None) -> str | None:
    """A revision's reason as its row keeps it (None: none given); a longer one is refused."""
    limits.check_length(reason, field="reason", limit=limits.REASON)
    return (reason or "").strip()[:100] or None


def record(instance: models.Model, actor: Actor, reason: str) -> None:
    """Tell django-simple-history who made this revision and why (projects, subtopics, an
    entry's delete). An entry's save writes its own revision row: save_entry passes who and why
    to knowledge.db.revisions.save_revision."""
    instance._history_user = actor.db_user
    instance._change_reason = change_reason(reason)


def normalize_title(title: str | None) -> str:
    limits.check_length(title, field="title", limit=limits.TITLE)
    title = " ".join((title or "").split())
    if not title:
        raise ValidationFailed("An entry needs a title.", field="title")
    return title


def normalize_tags(tags: list[str] | str | None) -> list[str] | None:
    if tags is None:
        return None
    if isinstance(tags, str):
        tags = tags.split(",")
    seen: dict[str, None] = {}
    for tag in tags:
        clean_tag = "-".join(str(tag).strip().lower().lstrip("#").split())[:60]
        if clean_tag:
            seen.setdefault(clean_tag, None)
    return list(seen)


def normalize_kind(kind: str | None) -> str | None:
    return (kind or "").strip().lower() or None


def check_status(status: str | None) -> None:
    if status is not None and status not in EntryStatus.values:
        raise ValidationFailed(
            f"Unknown status {status!r}; use one of {', '.join(EntryStatus.values)}.",
            field="status",
        )


def check_source(raw: object) -> dict[str, str]:
    """One source as sent (kind, external_id, url, title) → its clean, bounded fields (the
    Source model's column sizes: longer values are refused with the field's name, not a
    database error)."""
    if not isinstance(raw, dict):
        raise ValidationFailed(
            'Each source is an object, e.g. {"kind": "url", "external_id": "x1", '
            '"url": "https://example.org/x1"}.',
            field="sources",
        )
    fields = {name: str(raw.get(name) or "").strip() for name in limits.SOURCE_FIELDS}
    fields["kind"] = fields["kind"].lower()
    if not fields["kind"] or not fields["external_id"]:
        raise ValidationFailed(
            "Each source needs a kind and an external_id, e.g. "
            '{"kind": "email", "external_id": "<message-id>"}.',
            field="sources",
        )
    for name, limit in limits.SOURCE_FIELDS.items():
        limits.check_length(fields[name], field=f"sources.{name}", limit=limit)
        if "\x00" in fields[name]:
            raise ValidationFailed(
                f"sources.{name} contains a NUL character (\\x00); remove it and retry.",
                field=f"sources.{name}",
            )
    fields["url"] = source_url(fields["url"])
    return fields


check_body_size = limits.check_body_size


def check_limits(entry: Entry) -> None:
    """Every input is bounded: body size and line length, metadata depth and size, tag count.
    Called by save_entry, so every write path checks the same limits (EntryFields checked what
    a writer sent before any work; this checks what the write made of it)."""
    limits.check_entry_sizes(body=entry.body or "", metadata=entry.metadata, tags=entry.tags)
