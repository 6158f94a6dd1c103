"""Project writes: create (the creator becomes its maintainer) and change settings."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from knowledge.actors import Actor
from knowledge.models import Project
from knowledge.selectors import project_get
from knowledge.services import _kernel as k


@transaction.atomic(durable=True)
def project_create(*, actor: Actor, **fields) -> Project:
    """Create a project: slug, and optionally name (default: the slug), description,
    sensitivity (default internal) and reason. The slug is normalized (`Customer X` →
    `customer-x`); the creator becomes its maintainer."""
    return k.create_project(actor, **fields)


@transaction.atomic(durable=True)
def project_update(
    *,
    actor: Actor,
    project: str | int,
    name: str | None = None,
    description: str | None = None,
    sensitivity: str | None = None,
    archived: bool | None = None,
    reason: str = "",
) -> Project:
    """Change a project's settings; needs the maintainer role (or a superuser)."""
    k.require_write(actor)
    proj = project_get(actor, project, for_maintain=True)
    proj = Project.objects.select_for_update().get(pk=proj.pk)
    for field, value in (
        ("name", name),
        ("description", description),
        ("sensitivity", sensitivity),
        ("archived", archived),
    ):
        if value is not None:
            setattr(proj, field, value.strip() if field == "name" else value)
    if name is not None:
        k.check_project_names(proj.slug, proj.name, exclude=proj.pk)
    k.clean(proj)
    k.record(proj, actor, reason or "update project")
    try:
        with transaction.atomic():
            proj.save()
    except IntegrityError as exc:  # a concurrent rename took the name first
        raise k.project_taken(proj.slug, proj.name) from exc
    return proj
