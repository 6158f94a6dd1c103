"""Kernel steps for projects: who may create them, unambiguous names, creation."""

from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils.text import slugify

from knowledge.actors import Actor
from knowledge.errors import AlreadyExists, Forbidden, ValidationFailed
from knowledge.models import (
    Membership,
    Project,
    Role,
    Sensitivity,
)
from knowledge.note_types.reads import SHAREABLE
from knowledge.selectors import (
    maintained_projects,
    project_get,
    project_ref_filter,
    project_refusal,
    resolve_project,
    visible_projects,
)
from knowledge.services._kernel.checks import (
    clean,
    record,
    require_write,
)
from knowledge.services.fields import ProjectFields


def require_create_project(actor: Actor) -> None:
    """Who may create projects: anyone signed in, or staff only (CAIRN_PROJECT_CREATORS);
    a token narrowed to some projects never."""
    require_write(actor)
    if actor.project_ids is not None:
        raise Forbidden(
            "This token is limited to some projects, so it cannot create projects. "
            "Use a token that is not narrowed to projects, or ask an administrator.",
        )
    if settings.CAIRN_PROJECT_CREATORS == "staff" and not (
        getattr(actor.user, "is_staff", False) or getattr(actor.user, "is_superuser", False)
    ):
        raise Forbidden(
            "Only staff may create projects here. Ask an administrator to create it, or "
            "write into a project you belong to.",
        )


def project_taken(slug: str, name: str) -> AlreadyExists:
    """One answer for "taken", whether or not the caller can see the project that has it:
    every surface passes these words on, so none can tell a hidden project from a visible one."""
    return AlreadyExists(
        f"The project slug {slug!r} or name {name!r} is not available (slugs and names share "
        "one namespace with every project, also those you cannot see); choose another.",
        project=slug,
    )


def check_project_names(slug: str, name: str, *, exclude: int | None = None) -> None:
    """A project's slug and name may not be all digits (they would read as an id) nor equal
    any other project's slug or name, case-insensitively: a reference names one project."""
    for field, value in (("slug", slug), ("name", name)):
        if value.strip().isdigit():
            raise ValidationFailed(
                f"A project {field} may not be only digits ({value!r} would read as a project "
                "id); add a letter, e.g. 'team-7'.",
                field=field,
            )
    others = Project.objects.exclude(pk=exclude) if exclude else Project.objects.all()
    if others.filter(
        Q(slug__iexact=slug) | Q(name__iexact=slug) | Q(slug__iexact=name) | Q(name__iexact=name)
    ).exists():
        raise project_taken(slug, name)


def lock_project(actor: Actor, ref: str | int) -> Project:
    """The project `ref` names, locked for this transaction, if the actor maintains it: one
    query that resolves, scopes and locks (as lock_entry does for entries); the refusals are
    project_get's."""
    require_write(actor)
    projects = (
        visible_projects(actor)
        .select_for_update(of=("self",))
        .annotate(may_maintain=Exists(maintained_projects(actor).filter(pk=OuterRef("pk"))))
    )
    project = resolve_project(projects, ref)
    if project is None or not project.may_maintain:
        text = str(ref).strip()
        raise project_refusal(
            actor, text, project, for_maintain=True, lookup=project_ref_filter(text)
        )
    return project


def create_project(actor: Actor, *, slug: str, fields: ProjectFields, reason: str = "") -> Project:
    """Create a project (slug normalized: `Customer X` → `customer-x`); its creator maintains it.
    Name (default: the slug), description and sensitivity (default internal) come from `fields`;
    the other settings are update_project's."""
    require_create_project(actor)
    clean_slug = slugify(slug)[:80].strip("-")
    if not clean_slug:
        raise ValidationFailed(
            f"Project slug {slug!r} has no letters or digits; use e.g. 'customer-x'.",
            field="slug",
        )
    sensitivity = fields.sensitivity or Sensitivity.INTERNAL
    if sensitivity not in Sensitivity.values:
        raise ValidationFailed(
            f"Unknown sensitivity {sensitivity!r}; use one of {', '.join(Sensitivity.values)}.",
            field="sensitivity",
        )
    name = (fields.name or slug).strip()
    check_project_names(clean_slug, name)
    project = Project(
        slug=clean_slug, name=name, description=fields.description or "", sensitivity=sensitivity
    )
    clean(project)
    record(project, actor, reason or "create project")
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError as exc:
        raise project_taken(clean_slug, name) from exc
    if actor.db_user is not None:
        # The creator maintains it: otherwise a confidential project would vanish on creation.
        Membership.objects.create(project=project, user=actor.db_user, role=Role.MAINTAINER)
    return project


# The settings a new project takes after it exists (create_project sets the rest).
LATER_SETTINGS = ("archived", "schema_mode", "schemas_shared", "schema_library")


def update_project(
    actor: Actor, proj: Project, fields: ProjectFields, *, reason: str = ""
) -> Project:
    """Change the settings `fields` gives of a project locked with lock_project (or just created
    in this transaction)."""
    given = fields.given()
    for field in ("name", "description", "sensitivity", "archived"):
        if field in given:
            value = given[field]
            setattr(proj, field, value.strip() if field == "name" else value)
    if "schema_mode" in given:
        proj.schema_mode = str(given["schema_mode"]).strip().lower() or proj.schema_mode
    if "schemas_shared" in given:
        proj.schemas_shared = given["schemas_shared"]
    if proj.schemas_shared and proj.sensitivity not in SHAREABLE:
        raise ValidationFailed(
            "Only a public or internal project can share its schemas: whoever reads an entry "
            "checked against a schema may read that schema. Lower the sensitivity first, or "
            "keep the schemas in a project of their own.",
            field="schemas_shared",
        )
    if "schema_library" in given:
        library = None
        if str(given["schema_library"]).strip():
            library = schema_library_for(actor, given["schema_library"])
            if library.pk == proj.pk:
                raise ValidationFailed(
                    "A project cannot take its schemas from itself: its own schema entries "
                    "already apply. Name a shared project, or leave the library empty.",
                    field="schema_library",
                )
        proj.schema_library = library
    if "name" in given:
        check_project_names(proj.slug, proj.name, exclude=proj.pk)
    clean(proj)
    record(proj, actor, reason or "update project")
    try:
        with transaction.atomic():
            proj.save()
    except IntegrityError as exc:  # a concurrent rename took the name first
        raise project_taken(proj.slug, proj.name) from exc
    return proj


def schema_library_for(actor: Actor, ref: str | int) -> Project:
    """The shared project `ref` names, for a project to take its schemas from: one the actor can
    read (or a reader of the entries could learn about a project hidden from them) and that is
    marked as sharing its schemas."""
    library = project_get(actor, ref)
    if not library.schemas_shared:
        raise ValidationFailed(
            f"Project {library.slug!r} does not share its schemas. A maintainer of it can "
            "mark it as shared (schemas_shared), or name a project that is.",
            field="schema_library",
        )
    return library
