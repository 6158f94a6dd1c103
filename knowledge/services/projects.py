"""Project writes: create (the creator becomes its maintainer) and change settings."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from knowledge.actors import Actor
from knowledge.models import Project
from knowledge.services import _kernel as k
from knowledge.services._kernel import MembershipChange
from knowledge.services.fields import ProjectFields


@transaction.atomic(durable=True)
def project_create(
    *, actor: Actor, slug: str, fields: ProjectFields | None = None, reason: str = ""
) -> Project:
    """Create a project. The slug is normalized (`Customer X` → `customer-x`); the name defaults
    to the slug, the sensitivity to internal; the creator becomes its maintainer."""
    fields = fields or ProjectFields()
    project = k.create_project(actor, slug=slug, fields=fields, reason=reason)
    later = {n: v for n, v in fields.given().items() if n in k.LATER_SETTINGS}
    if later:
        project = k.update_project(actor, project, ProjectFields(**later), reason=reason)
    return project


@transaction.atomic(durable=True)
def project_update(
    *,
    actor: Actor,
    project: str | int,
    fields: ProjectFields,
    reason: str = "",
    memberships: Sequence[MembershipChange] = (),
) -> Project:
    """Change a project's settings; needs the maintainer role (or a superuser).

    `memberships` changes its members in the same transaction, as project_memberships_set does
    ("a maintainer remains" checked once, at the end): a page that saves both saves both or,
    on any refusal, neither. `fields.schema_mode` (off, warn, strict) says whether writes must
    fit their note type's schema; `schemas_shared` lets other projects take this one's schemas;
    `schema_library` names a shared project whose schemas apply here where this project has
    none of its own for a note type ("" clears it)."""
    proj = k.update_project(actor, k.lock_project(actor, project), fields, reason=reason)
    if memberships:
        k.set_memberships(actor, proj, memberships)
    return proj
