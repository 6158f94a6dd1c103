"""Project writes: create (the creator becomes its maintainer) and change settings."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from knowledge.actors import Actor
from knowledge.models import Project
from knowledge.selectors import project_get
from knowledge.services import _kernel as k
from knowledge.services._kernel import MembershipChange


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
    schema_mode: str | None = None,
    schemas_shared: bool | None = None,
    schema_library: str | int | None = None,
    reason: str = "",
    memberships: Sequence[MembershipChange] = (),
) -> Project:
    """Change a project's settings; needs the maintainer role (or a superuser).

    `memberships` changes its members in the same transaction, as project_memberships_set does
    ("a maintainer remains" checked once, at the end): a page that saves both saves both or,
    on any refusal, neither. `schema_mode` (off, warn, strict) says whether writes must fit
    their note type's schema. `schemas_shared` lets other projects take this one's schemas;
    `schema_library` names a shared project whose schemas apply here where this project has
    none of its own for a note type ("" clears it)."""
    k.require_write(actor)
    proj = project_get(actor, project, for_maintain=True)
    library = None
    if schema_library is not None and str(schema_library).strip():
        library = k.schema_library_for(actor, schema_library)
    proj = k.update_project(
        actor, proj, name=name, description=description, sensitivity=sensitivity,
        archived=archived, schema_mode=schema_mode, schemas_shared=schemas_shared,
        schema_library=library,
        clear_schema_library=schema_library is not None and not str(schema_library).strip(),
        reason=reason,
    )  # fmt: skip
    if memberships:
        k.set_memberships(actor, proj, memberships)
    return proj
