"""Import writes: many parsed entries in one transaction, each in a savepoint of its own.

The parsing (frontmatter dialects, folders → subtopics) lives with the caller (history's
importing); this module only writes, through the kernel like every other entry write.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from knowledge.actors import Actor
from knowledge.db.locks import xact_lock
from knowledge.errors import AlreadyExists, KnowledgeError, NotFound
from knowledge.models import Entry
from knowledge.selectors import project_get
from knowledge.services import _kernel as k
from knowledge.services.fields import EntryFields, ProjectFields


@dataclass(frozen=True, kw_only=True)
class ImportItem:
    """One entry to import, where it goes and why, as entry_upsert takes them."""

    name: str  # where it came from, for the report (a file's path)
    project: str
    subtopic: str | None = None
    fields: EntryFields
    sources: list[dict] | None = None
    reason: str = ""
    provenance: dict | None = None  # what a Cairn export recorded: id, version, dates, links


@dataclass(frozen=True)
class ImportOutcome:
    name: str
    outcome: str  # created | updated | unchanged | skipped
    reason: str = ""
    entry: str = ""
    dropped_mark: bool = False  # the file named a verifier; not taken (keep_verified was off)


# Two imports creating the same project: the second waits for the first's commit, then finds
# it, instead of failing on the slug's unique index (pg_advisory_xact_lock's two-key form).
_PROJECT_LOCK_SPACE = 0x43494D50  # "CIMP"


@transaction.atomic(durable=True)
def entries_import(
    *,
    actor: Actor,
    items: Iterable[ImportItem],
    dry_run: bool = False,
    progress=None,
    strict_schemas: bool = False,
    keep_verified: bool = False,
) -> list[ImportOutcome]:
    """Upsert every item, creating missing projects; a bad item is reported and skipped, never
    fatal. For newly created entries, restore what a Cairn export recorded (short id, version,
    dates, generated_by, verification), and the supersedes links once every item is in, so
    links between imported entries resolve whatever the order. `dry_run` rolls it all back.
    `progress` (tqdm-like) gets update(1) per item. An entry that does not fit its note type's
    schema is imported and its misfits reported (`strict_schemas`: skipped in a project whose
    schema mode is strict, like any other write there). A verification mark (verified_by, a
    username anyone can write into a file) is taken only with `keep_verified`, and then only
    for an existing account of that name."""
    outcomes, links, projects = [], [], {}
    for item in items:
        try:
            with transaction.atomic():
                outcome, link = _import_one(actor, item, projects, strict_schemas, keep_verified)
        except KnowledgeError as exc:
            outcome, link = ImportOutcome(item.name, "skipped", exc.message), None
        except Exception as exc:  # one bad file never stops the run (its savepoint is gone)
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            outcome, link = ImportOutcome(item.name, "skipped", reason), None
        outcomes.append(outcome)
        if link:
            links.append(link)
        if progress is not None:
            progress.update(1)
    for entry_id, supersedes, superseded_by in links:
        _link_supersession(entry_id, supersedes, superseded_by)
    if dry_run:
        transaction.set_rollback(True)
    return outcomes


def _project(actor: Actor, name: str) -> str:
    """The project's slug, created when missing: the lookup and the creation under one lock."""
    xact_lock(_PROJECT_LOCK_SPACE, slugify(name) or name)
    try:
        return project_get(actor, name, for_write=True).slug
    except NotFound:
        pass
    try:
        with transaction.atomic():
            return k.create_project(actor, slug=name, fields=ProjectFields(), reason="import").slug
    except AlreadyExists as taken:  # created meanwhile by a writer other than an import
        try:
            return project_get(actor, name, for_write=True).slug
        except NotFound:
            raise taken from None  # one you may not see: say "taken", as a create would


def _import_one(
    actor: Actor, item: ImportItem, projects: dict[str, str], strict: bool, keep_verified: bool
):
    if item.project not in projects:
        projects[item.project] = _project(actor, item.project)
    result = k.upsert_entry(
        actor,
        project=projects[item.project],
        subtopic=item.subtopic,
        fields=item.fields,
        sources=item.sources,
        reason=item.reason,
        schema_lenient=not strict,
    )
    entry, link, dropped = result.entry, None, False
    report = result.schema
    misfit = f"does not fit its schema: {report.summary()}" if report and not report.fits else ""
    if result.outcome == "created" and item.provenance:
        dropped = _restore_provenance(entry, item.provenance, keep_verified)
        supersedes = item.provenance.get("supersedes")
        superseded_by = item.provenance.get("superseded_by")
        if supersedes or superseded_by:
            link = (entry.pk, supersedes, superseded_by)
    outcome = ImportOutcome(
        item.name, result.outcome, misfit, entry=entry.short_id, dropped_mark=dropped
    )
    return outcome, link


def _parse_time(value) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, str) and value:
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


def _restore_provenance(entry: Entry, provenance: dict, keep_verified: bool) -> bool:
    """Put back what the export recorded; returns whether a verification mark was dropped."""
    changes: dict[str, object] = {}
    short_id = str(provenance.get("id") or "").strip().lower()
    if short_id:
        # Check and write in one statement under a savepoint: an id taken meanwhile (another
        # import of the same file) fails the unique index, and the entry keeps its new id.
        try:
            with transaction.atomic():
                _on_entry_and_first_revision(entry.pk, {"short_id": short_id})
        except IntegrityError:
            pass
    if isinstance(provenance.get("version"), int) and provenance["version"] > 0:
        changes["version"] = provenance["version"]
    for key, field in (("created", "created_at"), ("updated", "updated_at")):
        if when := _parse_time(provenance.get(key)):
            changes[field] = when
    if provenance.get("generated_by"):
        changes["generated_by"] = str(provenance["generated_by"])[:120]
    dropped = bool(provenance.get("verified_by")) and not keep_verified
    when = _parse_time(provenance.get("verified_at"))
    if when and provenance.get("verified_by") and keep_verified:
        user = get_user_model().objects.filter(username=provenance["verified_by"]).first()
        if user is not None:
            changes["verified_at"], changes["verified_by"] = when, user
    if changes:
        _on_entry_and_first_revision(entry.pk, changes)
    entry.refresh_from_db()
    return dropped


def _link_supersession(entry_id: int, supersedes: str | None, superseded_by: str | None) -> None:
    """Restore supersedes/superseded_by (by short id); unknown short ids are ignored."""
    changes = {}
    for field, ref in (("supersedes", supersedes), ("superseded_by", superseded_by)):
        if ref:
            target = Entry.objects.filter(short_id=str(ref).lower()).first()
            if target is not None and target.pk != entry_id:
                changes[f"{field}_id"] = target.pk
    if changes:
        _on_entry_and_first_revision(entry_id, changes)


def _on_entry_and_first_revision(entry_id: int, changes: dict) -> None:
    """What the export recorded goes on the entry and on the revision the import created, so
    an export of the import reads the same (restored data, not a new revision)."""
    Entry.objects.filter(pk=entry_id).update(**changes)
    latest = Entry.history.filter(id=entry_id).order_by("-history_id").values("history_id")[:1]
    Entry.history.filter(history_id__in=latest).update(**changes)
