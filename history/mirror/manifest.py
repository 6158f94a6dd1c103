"""The projects manifest: every project's settings, memberships and subtopics as one YAML file in
the mirror (`.cairn/projects.yaml`), committed whenever it changes, so the mirror alone is enough
to rebuild the knowledge (`mirror restore`).

A project's settings are written generically (every concrete field of the model), so a field
added later travels without a change here; restore sets the fields it knows and ignores others.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

from django.utils import timezone

from history.commit_format import ProjectsTrailers
from history.file_format import iso_time
from history.manifest_format import MANIFEST_DIR, MANIFEST_PATH, ProjectsManifest
from history.mirror.git import Mirror, Person, build_message
from history.mirror.queue import committer
from knowledge.models import Membership, Project, Subtopic
from knowledge.records import MemberRecord, ProjectRecord, SubtopicRecord

# The format's names, for the callers that read the mirror's files (conftest, maintenance).
__all__ = ["MANIFEST_DIR", "MANIFEST_PATH", "manifest", "manifest_current", "parse_manifest",
           "project_settings", "render_manifest", "sync_manifest"]  # fmt: skip


def _plain(value):
    if isinstance(value, dt.datetime):
        return iso_time(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    return value


def project_settings(project: Project) -> dict:
    """Every concrete field of the project but its id, under the field's name."""
    return {
        f.attname: _plain(getattr(project, f.attname))
        for f in Project._meta.concrete_fields
        if f.attname != "id"
    }


def _member_order(member: MemberRecord) -> tuple:
    """People first, then groups; each by what the file says of it."""
    return (not member.user, str(member.plain()))


def manifest() -> ProjectsManifest:
    """The manifest of the database, in a fixed order (same database, same bytes)."""
    members: dict[int, list[MemberRecord]] = {}
    rows = Membership.objects.select_related("user", "group").order_by("pk")
    for m in rows:
        who = {"user": m.user.get_username()} if m.user_id else {"group": m.group.name}
        members.setdefault(m.project_id, []).append(MemberRecord(role=m.role, **who))
    topics: dict[int, list[SubtopicRecord]] = {}
    for s in Subtopic.objects.order_by("project_id", "path"):
        topics.setdefault(s.project_id, []).append(
            SubtopicRecord(id=s.pk, path=s.path, name=s.name, created_at=iso_time(s.created_at))
        )
    projects = tuple(
        ProjectRecord(
            id=p.pk,
            settings=project_settings(p),
            memberships=tuple(sorted(members.get(p.pk, []), key=_member_order)),
            subtopics=tuple(topics.get(p.pk, [])),
        )
        for p in Project.objects.order_by("pk")
    )
    return ProjectsManifest(projects)


def render_manifest() -> bytes:
    """The database's manifest as the mirror holds it."""
    return manifest().render()


def parse_manifest(raw: bytes) -> dict:
    """A manifest's plain data, read through its one reader (ProjectsManifest.parse)."""
    return ProjectsManifest.parse(raw).plain()


def _who_and_why() -> tuple[Person, str, str]:
    """The latest project or subtopic revision: who changed the projects and why. A change of
    memberships alone has no revision of its own and reads "update projects"."""
    from django.contrib.auth import get_user_model

    latest = max(
        (
            row
            for row in (
                Project.history.order_by("-history_date").first(),
                Subtopic.history.order_by("-history_date").first(),
            )
            if row is not None
        ),
        key=lambda r: r.history_date,
        default=None,
    )
    user = get_user_model().objects.filter(pk=getattr(latest, "history_user_id", None)).first()
    reason = (getattr(latest, "history_change_reason", None) or "").strip()
    if user is None:
        return Person("cairn", "system@cairn.invalid"), "", reason
    username = user.get_username()
    person = Person(
        user.get_full_name() or username, user.email or f"{username}@users.cairn.invalid"
    )
    return person, username, reason


def sync_manifest(mirror: Mirror) -> bool:
    """Commit the manifest when it differs from the one at the mirror's tip, and publish.
    The caller holds the mirror lock. Returns whether it committed."""
    data = render_manifest()
    if mirror.read(MANIFEST_PATH) == data:
        return False
    author, username, reason = _who_and_why()
    now = timezone.now()
    trailers = ProjectsTrailers(MANIFEST_PATH, now, username or "", reason or "").render()
    message = build_message(reason, "update projects, memberships and subtopics",
                            revision=None, entry_id=None, trailers=trailers)  # fmt: skip
    mirror.commit({MANIFEST_PATH: data}, author=author, committer=committer(), message=message,
                  when=now)  # fmt: skip
    mirror.publish()
    return True


def manifest_current(mirror: Mirror) -> bool:
    return mirror.read(MANIFEST_PATH) == render_manifest()
