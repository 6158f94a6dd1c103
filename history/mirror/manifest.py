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

import yaml
from django.utils import timezone

from history.commit_format import ProjectsTrailers
from history.file_format import iso_time
from history.mirror.git import Mirror, Person, build_message
from history.mirror.queue import committer
from knowledge.models import Membership, Project, Subtopic
from knowledge.safe_yaml import load_yaml

MANIFEST_PATH = ".cairn/projects.yaml"
MANIFEST_DIR = ".cairn/"
FORMAT = 1
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_HEADER = (
    "# Cairn's projects, their memberships and subtopics, written by the git mirror.\n"
    "# `manage.py mirror restore` reads it back; edit projects in Cairn, not here.\n"
)


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


def manifest() -> dict:
    """The manifest as plain data, in a fixed order (same database, same bytes)."""
    members: dict[int, list[dict]] = {}
    rows = Membership.objects.select_related("user", "group").order_by("pk")
    for m in rows:
        who = {"user": m.user.get_username()} if m.user_id else {"group": m.group.name}
        members.setdefault(m.project_id, []).append({**who, "role": m.role})
    topics: dict[int, list[dict]] = {}
    for s in Subtopic.objects.order_by("project_id", "path"):
        topics.setdefault(s.project_id, []).append(
            {"id": s.pk, "path": s.path, "name": s.name, "created_at": iso_time(s.created_at)}
        )
    projects = []
    for p in Project.objects.order_by("pk"):
        projects.append(
            {
                "id": p.pk,
                "settings": project_settings(p),
                "memberships": sorted(
                    members.get(p.pk, []), key=lambda m: (m.get("user") is None, str(m))
                ),
                "subtopics": topics.get(p.pk, []),
            }
        )
    return {"format": FORMAT, "projects": projects}


def render_manifest(data: dict | None = None) -> bytes:
    body = yaml.dump(
        data if data is not None else manifest(),
        Dumper=_DUMPER,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10**6,
    )
    return (_HEADER + body).encode()


def parse_manifest(raw: bytes) -> dict:
    data = load_yaml(raw.decode("utf-8")) or {}
    if not isinstance(data, dict) or not isinstance(data.get("projects", []), list):
        raise ValueError(f"{MANIFEST_PATH} is not a Cairn projects manifest")
    return data


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
