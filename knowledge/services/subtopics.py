"""Subtopic writes: paths are created level by level, on demand."""

from __future__ import annotations

from django.db import transaction

from knowledge.actors import Actor
from knowledge.models import Subtopic
from knowledge.selectors import project_get
from knowledge.services import _kernel as k


@transaction.atomic(durable=True)
def subtopic_ensure(*, actor: Actor, project: str | int, path: str) -> Subtopic | None:
    """Return the subtopic at `path` in `project`, creating any missing level."""
    k.require_write(actor)
    return k.ensure_path(
        actor=actor, project=project_get(actor, project, for_write=True), path=path
    )
