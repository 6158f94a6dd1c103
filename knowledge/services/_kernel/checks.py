"""Kernel steps on who writes and what they sent: write access, validation, the revision's
who and why, normalized tags, titles and kinds, and the size limits every write keeps."""

from __future__ import annotations

import json

from django.conf import settings
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


def record(instance: models.Model, actor: Actor, reason: str) -> None:
    """Tell django-simple-history who made this revision and why."""
    limits.check_length(reason, field="reason", limit=limits.REASON)
    instance._history_user = actor.db_user
    instance._change_reason = (reason or "").strip()[:100] or None


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


def _depth(value: object) -> int:
    """How deeply objects and lists nest in `value` (iterative: deep input must not recurse)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend(
                (v, level + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def _too_big(field: str, what: str, limit: int, unit: str, setting: str) -> ValidationFailed:
    return ValidationFailed(
        f"{what} is over the limit of {limit:,} {unit}; shorten it or split it into several "
        f"entries (an administrator can raise {setting}).",
        field=field,
        limit=limit,
    )


def check_body_size(body: str, field: str = "body") -> None:
    """Refuse a body over the size limit or with an overlong line, before any work on it."""
    limit = settings.CAIRN_MAX_BODY_BYTES
    # A str's length bounds its UTF-8 size from below (x1) and above (x4): encode only near it.
    if len(body) > limit or (len(body) * 4 > limit and len(body.encode()) > limit):
        raise _too_big(field, f"The {field}", limit, "bytes (UTF-8)", "CAIRN_MAX_BODY_BYTES")
    line_limit = settings.CAIRN_MAX_LINE_CHARS
    if len(body) > line_limit and max(map(len, body.split("\n"))) > line_limit:
        raise _too_big(
            field, f"A line of the {field}", line_limit, "characters", "CAIRN_MAX_LINE_CHARS"
        )


def check_limits(entry: Entry) -> None:
    """Every input is bounded: body size and line length, metadata depth and size, tag count.
    Called by save_entry, so every write path checks the same limits."""
    check_body_size(entry.body or "")
    metadata = entry.metadata if entry.metadata is not None else {}
    if not isinstance(metadata, dict):
        raise ValidationFailed(
            'metadata must be a JSON object, e.g. {"customer": "acme"}.', field="metadata"
        )
    depth_limit = settings.CAIRN_MAX_METADATA_DEPTH
    if _depth(metadata) > depth_limit:
        raise ValidationFailed(
            f"metadata nests deeper than {depth_limit} levels; flatten it "
            "(an administrator can raise CAIRN_MAX_METADATA_DEPTH).",
            field="metadata",
            limit=depth_limit,
        )
    size_limit = settings.CAIRN_MAX_METADATA_BYTES
    try:
        size = len(json.dumps(metadata, ensure_ascii=False).encode())
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(f"metadata is not plain JSON: {exc}", field="metadata") from exc
    if size > size_limit:
        raise _too_big(
            "metadata", "metadata", size_limit, "bytes as JSON", "CAIRN_MAX_METADATA_BYTES"
        )
    tag_limit = settings.CAIRN_MAX_TAGS
    if len(entry.tags or []) > tag_limit:
        raise ValidationFailed(
            f"An entry may have at most {tag_limit} tags (this one has {len(entry.tags)}).",
            field="tags",
            limit=tag_limit,
        )
