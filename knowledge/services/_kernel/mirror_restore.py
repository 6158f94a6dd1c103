"""Kernel steps of a restore: put back projects, people and revisions exactly as a record says
(original ids, versions, who, when and why), with the derived data made as a write makes it.

Only `knowledge.services.mirror_restore` uses them, inside its one durable transaction, with
django-simple-history switched off: each revision row is written as recorded, never stamped now.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from knowledge import limits
from knowledge.actors import Actor
from knowledge.db import sequences as db_sequences
from knowledge.errors import ValidationFailed
from knowledge.inputs import find_nul
from knowledge.models import (
    ApiToken,
    Entry,
    EntryStatus,
    HistoricalEntry,
    HistoricalProject,
    HistoricalSubtopic,
    Membership,
    Project,
    Role,
    Sensitivity,
    Source,
    Subtopic,
    content_hash,
)
from knowledge.paths import entry_slug
from knowledge.records import EntryRecord, ProjectRecord
from knowledge.services._kernel.checks import check_limits, check_source, clean

RESTORE_REASON = "restored from the git mirror"


@dataclass
class RestoredRevision:
    """One entry revision as the mirror recorded it. `state` holds the entry's fields as its
    file had them (None for a deletion, or for a revision whose text the mirror never got)."""

    history_id: int
    commit: str
    action: str  # "+", "~" or "-"
    short_id: str
    when: dt.datetime
    user: str = ""  # username of who saved it ("" for nobody)
    user_email: str = ""
    user_name: str = ""
    reason: str | None = None
    project: str = ""  # slug
    subtopic: str = ""  # path
    entry_pk: int | None = None
    state: EntryRecord | None = None
    token_id: int | None = None  # the run it belonged to (knowledge.runs): token, agent, run id
    agent: str = ""
    run: str = ""
    lost: str = ""  # why this revision cannot be restored (then nothing is written for it)


def store_is_empty() -> bool:
    """No project, entry or revision yet: what a restore goes into."""
    return not (
        Project.objects.exists() or Entry.objects.exists() or HistoricalEntry.objects.exists()
    )


@dataclass
class Restorer:
    """What a running restore has made so far: people, places and entries by their names."""

    users: dict[str, object] = field(default_factory=dict)
    projects: dict[str, Project] = field(default_factory=dict)
    subtopics: dict[tuple[int, str], Subtopic] = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)  # by short id, deleted ones too
    sources: dict[int, tuple] = field(default_factory=dict)
    stamped: set[int] = field(default_factory=set)  # entries whose created stamp is put back
    created_users: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    sensitivity: str = Sensitivity.RESTRICTED  # of a project the manifest does not describe
    keep_verified: bool = False  # the mirror's verified_by is a username anyone could write
    marked: set[str] = field(default_factory=set)  # entries with a verification mark recorded
    refused: set[str] = field(default_factory=set)  # entries with a revision not restored
    revision_ids: set[int] = field(default_factory=set)
    rows: dict[int, str] = field(default_factory=dict)  # entry row id -> its short id

    # --- people ---------------------------------------------------------------------------

    def user(self, username: str, *, email: str = "", name: str = ""):
        """The user of this name; one who is not a user yet becomes an inactive account with
        no password, so history keeps the name and a later SSO sign-in can take it over."""
        if not username:
            return None
        if username not in self.users:
            model = get_user_model()
            user = model.objects.filter(**{model.USERNAME_FIELD: username}).first()
            if user is None:
                # Active while the restore runs, so links resolve with this writer's rights as
                # they did on write; `deactivate_created` ends it.
                user = model(**{model.USERNAME_FIELD: username}, is_active=True)
                user.set_unusable_password()
                user.save()
                self.created_users.append(username)
            self.users[username] = user
        user = self.users[username]
        if username in self.created_users and (email or name) and not user.email:
            self._describe(user, email, name)
        return user

    @staticmethod
    def _describe(user, email: str, name: str) -> None:
        """Email and name from a commit's author (an agent's label is not a name)."""
        if email.endswith(".invalid"):
            return
        user.email = email[:254]
        if " (" in name and name.startswith("agent:"):
            name = name.split(" (", 1)[1].rstrip(")")
        if name and name != user.get_username() and not name.startswith("agent:"):
            first, _, last = name.partition(" ")
            user.first_name, user.last_name = first[:150], last[:150]
        user.save(update_fields=["email", "first_name", "last_name"])

    def deactivate_created(self) -> None:
        """Accounts the restore made end inactive and, where the installation has guests, in the
        first guest group: an administrator who activates one before its SSO sign-in re-syncs
        its groups gives a guest's reach, not every internal project's."""
        model = get_user_model()
        made = model.objects.filter(**{f"{model.USERNAME_FIELD}__in": self.created_users})
        made.update(is_active=False)
        if settings.CAIRN_GUEST_GROUPS and self.created_users:
            guests, _ = Group.objects.get_or_create(name=settings.CAIRN_GUEST_GROUPS[0])
            guests.user_set.add(*made)

    # --- places -------------------------------------------------------------------------------

    def project(self, slug: str) -> Project:
        """A project the manifest did not name (an older mirror): named by its slug, of the
        sensitivity the operator chose (restricted unless told otherwise)."""
        if slug not in self.projects:
            project = Project.objects.filter(slug=slug).first()
            if project is None:
                project = Project(slug=slug, name=slug, sensitivity=self.sensitivity)
                clean(project)
                project.save()
            self.projects[slug] = project
        return self.projects[slug]

    def subtopic(self, project: Project, path: str) -> Subtopic | None:
        if not path:
            return None
        key = (project.pk, path)
        if key not in self.subtopics:
            parent = self.subtopic(project, path.rpartition("/")[0])
            slug = path.rpartition("/")[2]
            node = Subtopic.objects.create(
                project=project, parent=parent, slug=slug, name=slug, path=path
            )
            self.subtopics[key] = node
        return self.subtopics[key]


def restore_projects(
    restorer: Restorer, projects: list[ProjectRecord], *, memberships: bool
) -> None:
    """Projects with their ids and every setting the model knows (unknown ones are skipped),
    checked as a write checks them, their memberships (when the operator accepted them) and
    their subtopics (parents first)."""
    known = {f.attname for f in Project._meta.concrete_fields}
    for item in projects:
        values = {k: v for k, v in item.settings.items() if k in known}
        stamps = {k: values.pop(k) for k in ("created_at", "updated_at") if k in values}
        project = Project(pk=item.id, **values)
        try:
            clean(project, exclude=["created_at", "updated_at"])
        except ValidationFailed as exc:
            raise ValidationFailed(
                f"The manifest's project {values.get('slug')!r} is refused: {exc.message} "
                "Fix .cairn/projects.yaml in the mirror (or restore from a good copy).",
                project=values.get("slug"),
            ) from exc
        project.save(force_insert=True)
        if stamps:
            Project.objects.filter(pk=project.pk).update(**stamps)
            project.refresh_from_db()
        restorer.projects[project.slug] = project
        for m in item.memberships if memberships else ():
            role = m.role if m.role in Role.values else Role.VIEWER
            if m.user:
                Membership.objects.create(project=project, user=restorer.user(m.user), role=role)
            elif m.group:
                group, _ = Group.objects.get_or_create(name=m.group)
                Membership.objects.create(project=project, group=group, role=role)
        for s in sorted(item.subtopics, key=lambda s: s.path.count("/")):
            parent = restorer.subtopics.get((project.pk, s.path.rpartition("/")[0]))
            node = Subtopic(
                pk=s.id, project=project, parent=parent, slug=s.path.rpartition("/")[2],
                name=s.name or s.path, path=s.path,
            )  # fmt: skip
            node.save(force_insert=True)
            if s.created_at:
                Subtopic.objects.filter(pk=node.pk).update(created_at=s.created_at)
            restorer.subtopics[(project.pk, node.path)] = node


def record_places() -> None:
    """One revision per project and subtopic saying it was restored (their earlier revisions
    are not in the mirror: the manifest holds their latest state)."""
    for model, history in ((Project, HistoricalProject), (Subtopic, HistoricalSubtopic)):
        names = [f.attname for f in model._meta.concrete_fields]
        history.objects.bulk_create(
            history(
                **{n: getattr(obj, n) for n in names},
                history_date=obj.created_at,
                history_type="+",
                history_change_reason=RESTORE_REASON,
            )
            for obj in model.objects.order_by("pk")
        )


def entry_values(
    restorer: Restorer, rev: RestoredRevision, state: EntryRecord, entry: Entry | None
) -> dict:
    """The entry's fields at this revision, from its file's (checked) state and the commit."""
    project = restorer.project(rev.project)
    user = restorer.user(rev.user, email=rev.user_email, name=rev.user_name)
    verifier = restorer.user(state.verified_by) if restorer.keep_verified else None
    status = state.status if state.status in EntryStatus.values else EntryStatus.ACTIVE
    return {
        "short_id": rev.short_id,
        "project": project,
        "subtopic": restorer.subtopic(project, rev.subtopic),
        "title": state.title,
        "slug": entry_slug(state.title),
        "body": state.body,
        "kind": state.kind,
        "tags": list(state.tags),
        "status": status,
        "searchable": state.searchable,
        "metadata": state.metadata,
        "content_hash": content_hash(state.kind, state.body),
        "version": state.version,
        "created_by": entry.created_by if entry is not None else user,
        "updated_by": user,
        "generated_by": state.generated_by,
        "verified_by": verifier,
        "verified_at": state.verified_at if verifier is not None else None,
        "supersedes": _entry(restorer, state.supersedes),
        "superseded_by": _entry(restorer, state.superseded_by),
        "created_at": state.created,
        "updated_at": state.updated,
    }


def _entry(restorer: Restorer, short_id: str | None) -> Entry | None:
    return restorer.entries.get(short_id) if short_id else None


def link_sources(restorer: Restorer, entry: Entry, sources: list[dict]) -> None:
    """The entry's sources as its file lists them (links are not versioned: the last wins)."""
    key = tuple(tuple(sorted(s.items())) for s in sources)
    if restorer.sources.get(entry.pk) == key:
        return
    restorer.sources[entry.pk] = key
    linked = []
    for s in sources:
        source, _ = Source.objects.get_or_create(
            project=entry.project, kind=s.get("kind", ""), external_id=s.get("external_id", ""),
            defaults={"url": s.get("url", ""), "title": s.get("title", "")},
        )  # fmt: skip
        linked.append(source)
    entry.sources.set(linked)


def history_row(entry: Entry, rev: RestoredRevision, user) -> object:
    """The revision row as recorded: the entry's fields, then who, when, why and the commit.
    Embedding stamps are derived data (the worker fills them again), so they start empty."""
    kept = {f.attname for f in HistoricalEntry._meta.concrete_fields}
    values = {
        f.attname: getattr(entry, f.attname)
        for f in Entry._meta.concrete_fields
        if f.attname in kept
    }
    values.update(embedded_hash="", embedding_model="")
    return HistoricalEntry(
        **values,
        git_commit=rev.commit,
        history_id=rev.history_id,
        history_date=rev.when,
        history_change_reason=rev.reason,
        history_type=rev.action,
        history_user=user,
        history_token_id=rev.token_id,
        history_agent=rev.agent,
        history_run=rev.run,
    )


def writer(user) -> Actor:
    return Actor.for_user(user) if user is not None else Actor.system()


def reset_sequences() -> None:
    """Ids were given explicitly: move each table's sequence past the largest one."""
    models = [Project, Subtopic, Entry, HistoricalEntry, HistoricalProject, HistoricalSubtopic,
              Source, Membership, get_user_model(), Group]  # fmt: skip
    db_sequences.reset_sequences(models)


_SHORT_ID = re.compile(r"^[0-9a-z]{1,12}$")


def check_revision(restorer: Restorer, rev: RestoredRevision) -> None:
    """What a commit's trailers say about a revision fits the tables: a new revision id, an
    entry id and row that no other entry has, a place and an author of possible lengths."""
    if rev.history_id <= 0 or rev.history_id in restorer.revision_ids:
        raise ValidationFailed(
            f"revision id {rev.history_id} is not a new positive number", field="Cairn-Revision"
        )
    if not _SHORT_ID.match(rev.short_id):
        raise ValidationFailed(f"entry id {rev.short_id[:40]!r} is not one", field="Cairn-Entry")
    owner = restorer.rows.setdefault(rev.entry_pk, rev.short_id) if rev.entry_pk else None
    if owner is not None and owner != rev.short_id:
        raise ValidationFailed(f"row {rev.entry_pk} belongs to entry {owner}", field="Cairn-Row")
    limits.check_length(rev.project, field="Cairn-Project", limit=limits.SLUG)
    limits.check_length(rev.subtopic, field="Cairn-Subtopic", limit=limits.PATH)
    if rev.subtopic and not all(0 < len(part) <= 80 for part in rev.subtopic.split("/")):
        raise ValidationFailed("a subtopic level is empty or too long", field="Cairn-Subtopic")
    limits.check_length(rev.user, field="Cairn-User", limit=150)
    if rev.token_id is not None and rev.token_id > 2**63 - 1:
        raise ValidationFailed("the token id is out of range", field="Cairn-Token")
    if find_nul([rev.project, rev.subtopic, rev.user, rev.reason or "", rev.agent, rev.run]):
        raise ValidationFailed("a trailer holds a NUL character", field="trailers")
    restorer.revision_ids.add(rev.history_id)


def check_state(state: EntryRecord) -> EntryRecord:
    """A revision's fields pass the checks a write makes (lengths, body, metadata, tags,
    sources and their URL schemes, no NUL): the mirror is a file anyone who can push to its
    remote may have written. Returns the state with its sources as a write stores them; raises
    ValidationFailed naming the field."""
    fields = {name: getattr(state, name) for name in EntryRecord.ORDER}
    if (where := find_nul(fields)) is not None:
        raise ValidationFailed(f"{where} contains a NUL character (\\x00).", field=where)
    for name, limit in (("title", limits.TITLE), ("kind", limits.KIND), ("generated_by", 120),
                        ("supersedes", limits.REF), ("superseded_by", limits.REF)):  # fmt: skip
        limits.check_length(fields[name], field=name, limit=limit)
    check_limits(Entry(body=state.body, metadata=state.metadata, tags=list(state.tags)))
    for tag in state.tags:
        limits.check_length(tag, field="tags", limit=limits.TAG)
    if len(state.sources) > settings.CAIRN_MAX_SOURCES:
        raise ValidationFailed(f"more than {settings.CAIRN_MAX_SOURCES} sources", field="sources")
    return replace(state, sources=tuple(check_source(s) for s in state.sources))


# --- tokens narrowed to projects ----------------------------------------------------------


def narrowed_tokens() -> dict[int, list[str]]:
    """Each live narrowed token's project slugs, read before a restore replaces the projects."""
    out: dict[int, list[str]] = {}
    live = ApiToken.objects.filter(narrowed=True, revoked_at__isnull=True)
    for token_id, slug in live.values_list("pk", "projects__slug"):
        out.setdefault(token_id, [])
        if slug:
            out[token_id].append(slug)
    return out


def renarrow_tokens(before: dict[int, list[str]], now) -> tuple[list[str], list[str]]:
    """Point each narrowed token at the restored projects of the same slugs; one none of whose
    projects came back is revoked (it would otherwise see nothing, silently). Returns the
    tokens re-pointed and revoked, each as "name (prefix…) of user: slugs"."""
    repointed, revoked = [], []
    tokens = ApiToken.objects.select_related("user").in_bulk(list(before))
    for token_id, slugs in sorted(before.items()):
        token = tokens[token_id]
        found = list(Project.objects.filter(slug__in=slugs).order_by("slug"))
        label = f"{token.name} ({token.prefix}…) of {token.user.get_username()}"
        if found:
            token.projects.set(found)
            repointed.append(f"{label}: {', '.join(p.slug for p in found)}")
        else:
            token.projects.clear()
            ApiToken.objects.filter(pk=token_id).update(revoked_at=now)
            revoked.append(f"{label}: had {', '.join(slugs) or 'no projects left'}")
    return repointed, revoked
