from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils.text import slugify

from knowledge.actors import Actor
from knowledge.errors import AlreadyExists, ValidationFailed
from knowledge.models import Membership, Project, Role, Sensitivity
from knowledge.selectors import project_get
from knowledge.services._common import clean, record, require_write


@transaction.atomic
def project_create(
    *,
    actor: Actor,
    slug: str,
    name: str = "",
    description: str = "",
    sensitivity: str = Sensitivity.INTERNAL,
    reason: str = "",
) -> Project:
    """Create a project. The slug is normalized (`Customer X` → `customer-x`)."""
    require_write(actor)
    clean_slug = slugify(slug)[:80].strip("-")
    if not clean_slug:
        raise ValidationFailed(
            f"Project slug {slug!r} has no letters or digits; use e.g. 'customer-x'.",
            field="slug",
        )
    if sensitivity not in Sensitivity.values:
        raise ValidationFailed(
            f"Unknown sensitivity {sensitivity!r}; use one of {', '.join(Sensitivity.values)}.",
            field="sensitivity",
        )
    name = (name or slug).strip()
    if (
        Project.objects.filter(slug=clean_slug).exists()
        or Project.objects.filter(name__iexact=name).exists()
    ):
        raise AlreadyExists(
            f"A project {clean_slug!r} (or named {name!r}) already exists. "
            "Write into it, or pick another slug and name.",
            project=clean_slug,
        )
    project = Project(slug=clean_slug, name=name, description=description, sensitivity=sensitivity)
    clean(project)
    record(project, actor, reason or "create project")
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError as exc:
        raise AlreadyExists(f"A project {clean_slug!r} already exists.") from exc
    if actor.db_user is not None:
        # The creator maintains it: otherwise a confidential project would vanish on creation.
        Membership.objects.create(project=project, user=actor.db_user, role=Role.MAINTAINER)
    return project


@transaction.atomic
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
    require_write(actor)
    proj = project_get(actor, project, for_maintain=True)
    proj = Project.objects.select_for_update().get(pk=proj.pk)
    for field, value in (
        ("name", name),
        ("description", description),
        ("sensitivity", sensitivity),
        ("archived", archived),
    ):
        if value is not None:
            setattr(proj, field, value)
    clean(proj)
    record(proj, actor, reason or "update project")
    proj.save()
    return proj
