"""`mirror restore`: read the git mirror back into an empty database.

The mirror holds everything the knowledge needs: the projects manifest at its head (settings,
memberships, subtopics) and one commit per entry revision, whose file is the entry as it was
and whose trailers say who, when, why, where and which row (history/mirror/render.py). This
module reads them, oldest first, into plain records; knowledge.services.memory_restore writes.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
import yaml
from django.conf import settings

from history.commit_format import ACTIONS, RestoreTrailers, RevisionTrailers
from history.file_format import (
    FrontmatterError,
    RevisionFile,
    alternate_path,
    entry_id_of,
)
from history.maintenance import expected_files, verify
from history.manifest_format import MANIFEST_DIR, MANIFEST_PATH, ManifestRefused, ProjectsManifest
from history.mirror.git import TRAILER_ENTRY, TRAILER_REVISION, Mirror, build_message, trailers_of
from history.mirror.manifest import render_manifest
from history.mirror.queue import committer, open_mirror
from history.mirror_restore.plan import RestorePlan, describe, survey
from knowledge.actors import Actor
from knowledge.models import Entry, Project, Sensitivity
from knowledge.records import EntryRecord, ProjectRecord
from knowledge.services import RestoredRevision, RestoreReport, memory_restore

_TYPES = {action: history_type for history_type, action in ACTIONS.items()}


class RestoreError(Exception):
    """Something the operator must fix first; the message says what."""


# --- the source -------------------------------------------------------------------------------


def _credentials(source: str):
    """The push credentials, for the configured push remote only: a `--from` naming another
    URL must not be handed the password or key (a typo'd or hostile host would collect it)."""
    if source.strip() != (settings.CAIRN_MIRROR_PUSH_URL or "").strip():
        return None
    if not (settings.CAIRN_MIRROR_PUSH_PASSWORD or settings.CAIRN_MIRROR_PUSH_SSH_KEY):
        return None
    key, user = settings.CAIRN_MIRROR_PUSH_SSH_KEY, settings.CAIRN_MIRROR_PUSH_USERNAME
    password = settings.CAIRN_MIRROR_PUSH_PASSWORD
    if key:
        return pygit2.Keypair(user or "git", key + ".pub", key, password)
    return pygit2.UserPass(user, password)


def open_source(source: str, workdir: Path) -> tuple[Mirror, bool]:
    """The repository at `source` (a local bare repository or a URL to clone) and whether it
    is a fresh clone in `workdir`."""
    branch = settings.CAIRN_MIRROR_BRANCH
    path = Path(source).expanduser()
    if path.exists():
        if not (path / "HEAD").exists():
            raise RestoreError(
                f"{source} is not a git repository; pass the mirror (e.g. var/mirror.git) or "
                "its push remote's URL."
            )
        mirror = Mirror(path, branch=branch)
        cloned = False
    else:
        cred = _credentials(source)
        callbacks = pygit2.RemoteCallbacks(credentials=cred) if cred else None
        try:
            pygit2.clone_repository(source, str(workdir), bare=True, callbacks=callbacks)
        except (pygit2.GitError, ValueError) as exc:
            raise RestoreError(
                f"Could not read {source}: {exc}. Pass the path of the mirror or a URL git can "
                "clone (credentials from CAIRN_MIRROR_PUSH_USERNAME/_PASSWORD/_SSH_KEY go only "
                "to CAIRN_MIRROR_PUSH_URL)."
            ) from exc
        mirror = Mirror(workdir, branch=branch)
        cloned = True
    if mirror.head() is None:
        raise RestoreError(f"{source} has no commits on branch {branch}: nothing to restore.")
    return mirror, cloned


def read_projects(mirror: Mirror, head: pygit2.Oid | None = None) -> list[ProjectRecord] | None:
    """The projects manifest at `head` (default: the mirror's head; None for a mirror without
    one)."""
    raw = mirror.read(MANIFEST_PATH, head or mirror.head().id)
    if raw is None:
        return None
    try:
        return list(ProjectsManifest.parse(raw).projects)
    except ManifestRefused as exc:
        if exc.project is None:
            raise RestoreError(f"{MANIFEST_PATH} cannot be read: {exc}") from exc
        raise RestoreError(
            f"{MANIFEST_PATH} holds a project that is not one Cairn writes "
            f"({str(exc.project)[:200]}: {exc}); fix the manifest or restore from a good copy."
        ) from exc
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RestoreError(f"{MANIFEST_PATH} cannot be read: {exc}") from exc


# --- the revisions ----------------------------------------------------------------------------


def _commits(mirror: Mirror, head: pygit2.Oid) -> Iterator[pygit2.Commit]:
    order = pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
    yield from mirror.repo.walk(head, order)


def _track(mirror: Mirror, commit: pygit2.Commit, paths: dict[str, str]) -> None:
    """Follow which entry's file sits where, from this commit's changes."""
    if commit.parents:
        diff = mirror.repo.diff(commit.parents[0].tree, commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    owners = {path: entry for entry, path in paths.items()}
    added = []
    for delta in diff.deltas:
        if delta.status_char() == "D":
            owner = owners.get(delta.old_file.path)
            if owner and paths.get(owner) == delta.old_file.path:
                del paths[owner]
        else:
            added.append(delta.new_file)
    for new in added:
        if new.path.endswith(".md") and not new.path.startswith(MANIFEST_DIR):
            entry = entry_id_of(mirror.repo[new.id].data)
            if entry:
                paths[entry] = new.path


def _revision(
    mirror: Mirror, commit: pygit2.Commit, trailers: dict, paths: dict
) -> RestoredRevision:
    short_id = trailers.get(TRAILER_ENTRY, "")
    said = RevisionTrailers.parse(
        trailers,
        message=commit.message,
        author_email=commit.author.email,
        author_time=commit.author.time,
    )
    action = _TYPES[said.action]
    path = paths.get(short_id, "")
    parts = path.split("/")
    rev = RestoredRevision(
        history_id=int(trailers[TRAILER_REVISION]),
        commit=str(commit.id),
        action=action,
        short_id=short_id,
        when=said.time,
        user=said.user,
        user_email=commit.author.email,
        user_name=commit.author.name,
        reason=said.reason,
        project=said.project or parts[0],
        subtopic=said.subtopic or "/".join(parts[1:-1]),
        entry_pk=said.row,
        token_id=said.token,
        agent=said.agent,
        run=said.run,
    )
    if said.lost:
        rev.lost = "the mirror could not render it when it was saved (parked): no text in git"
    elif action != "-":
        raw = mirror.read(path, commit.id) if path else None
        if raw is None:
            rev.lost = "its commit holds no file for the entry"
        else:
            try:
                file = RevisionFile.parse(raw, body_newline=said.body_newline)
                rev.state = EntryRecord.parse(file.record())
            except (FrontmatterError, KeyError, TypeError, ValueError) as exc:  # RecordRefused too
                rev.lost = f"its file cannot be read ({exc})"
    return rev


def revisions(mirror: Mirror, head: pygit2.Oid | None = None) -> Iterator[RestoredRevision]:
    """Every entry revision in the mirror up to `head` (default: its head), oldest first."""
    paths: dict[str, str] = {}
    for commit in _commits(mirror, head or mirror.head().id):
        _track(mirror, commit, paths)
        trailers = trailers_of(commit.message)
        if TRAILER_REVISION in trailers:
            try:
                rev = _revision(mirror, commit, trailers, paths)
            except (ValueError, TypeError, OverflowError) as exc:  # trailers a pusher wrote
                number = trailers[TRAILER_REVISION]
                rev = RestoredRevision(
                    history_id=int(number) if number.isdigit() else 0, commit=str(commit.id),
                    action="~", short_id=trailers.get(TRAILER_ENTRY, "?"),
                    when=dt.datetime.fromtimestamp(0, dt.UTC),
                    lost=f"commit {str(commit.id)[:12]}'s trailers cannot be read ({exc})",
                )  # fmt: skip
            yield rev


# --- the whole restore ------------------------------------------------------------------------


def _put_in_place(mirror: Mirror, cloned: bool) -> Path:
    """Make the restored repository the installation's mirror (an older one is kept aside)."""
    target = Path(settings.CAIRN_MIRROR_PATH)
    if target.exists() and target.resolve() == mirror.path.resolve():
        return target
    if target.exists():
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        target.rename(target.with_name(f"{target.name}.old-{stamp}"))
    target.parent.mkdir(parents=True, exist_ok=True)
    if cloned:
        shutil.move(str(mirror.path), str(target))
    else:
        shutil.copytree(mirror.path, target, copy_function=_link_or_copy)
    return target


def _link_or_copy(src: str, dst: str) -> None:
    """Git objects never change and git replaces its other files (refs, config) by renaming a
    new one into place, so a hard link is a safe copy, and far quicker for many loose objects."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@contextmanager
def prepared(
    *,
    source: str,
    force: bool = False,
    sensitivity: str | None = None,
    keep_verified: bool = False,
    memberships: bool = True,
) -> Iterator[RestorePlan]:
    """Open the mirror at `source` and say what restoring it would do (restore_plan.describe);
    `apply` it inside the block. Nothing is written before `apply`."""
    if not force and (Project.objects.exists() or Entry.history.exists()):
        raise RestoreError(
            "The database already holds projects or entries. Restore into an empty, migrated "
            "database (or pass --force to replace everything in it)."
        )
    with tempfile.TemporaryDirectory(prefix="cairn-restore-") as work:
        mirror, cloned = open_source(source, Path(work) / "mirror.git")
        head = mirror.head().id  # read once: what the plan shows is what apply restores
        projects = read_projects(mirror, head)
        if projects is None and sensitivity is None:
            raise RestoreError(
                f"{source} has no {MANIFEST_PATH}, so it does not say who may read which "
                "project. Name the sensitivity its projects get: --sensitivity restricted "
                "(members only; add members afterwards), or confidential, internal, public."
            )
        plan = RestorePlan(
            source=source, mirror=mirror, cloned=cloned,
            credentials=cloned and _credentials(source) is not None, projects=projects,
            sensitivity=sensitivity or Sensitivity.RESTRICTED, keep_verified=keep_verified,
            memberships=memberships, head=str(head),
        )  # fmt: skip
        survey(plan, _commits(mirror, head))
        yield plan


def _record_choices(mirror: Mirror, entries: set[str], manifest: bool) -> bool:
    """One commit making the mirror's head say what this restore chose to restore otherwise
    than the mirror did (marks dropped, revisions refused, memberships skipped, projects made
    restricted), so `mirror verify` and the next drain start from the restored state. Returns
    whether it committed."""
    files = mirror.files()
    at = {entry_id_of(data): path for path, data in files.items() if path.endswith(".md")}
    expected = expected_files()
    changes: dict[str, bytes | None] = {}
    for short_id in sorted(entries):
        path = at.get(short_id)
        if short_id not in expected:
            if path:  # the entry did not come back: neither does its file
                changes[path] = None
            continue
        natural, data = expected[short_id]
        if data is None or (path and files[path] == data):
            continue
        if path and path not in (natural, alternate_path(natural, short_id)):
            changes[path] = None
            path = None
        changes[path or natural] = data
    if manifest and files.get(MANIFEST_PATH) != render_manifest():
        changes[MANIFEST_PATH] = render_manifest()
    if not changes:
        return False
    now = dt.datetime.now(dt.UTC)
    reason = "mirror restore: what was restored otherwise than this mirror said"
    trailers = RestoreTrailers(now).render()
    message = build_message(reason, reason, revision=None, entry_id=None, trailers=trailers)
    who = committer()
    mirror.commit(changes, author=who, committer=who, message=message, when=now)
    mirror.publish()
    return True


def plan_lines(plan: RestorePlan) -> list[str]:
    """What applying `plan` would do, as lines for the operator to read before saying yes."""
    return describe(plan)


def _head_now(path: Path, ref: str) -> str:
    """The commit the branch `ref` of the repository at `path` names now, read from disk (a
    Mirror keeps the head it was opened with)."""
    found = pygit2.Repository(str(path)).references.get(ref)
    return str(found.target) if found is not None else ""


def _pin(target: Path, plan: RestorePlan) -> list[str]:
    """Leave the installation's mirror at the head that was restored. A copy of the source is
    ours to point back; the source itself, restored in place, is not: said as a problem."""
    mirror = open_mirror(target)
    now = str(mirror.head().id) if mirror.head() else ""
    if now == plan.head:
        return []
    if target.resolve() != plan.mirror.path.resolve():
        mirror.repo.references.create(mirror.ref, pygit2.Oid(hex=plan.head), force=True)
        return []
    return [
        f"The mirror moved while it was restored (its head is now {now}; the database holds "
        f"{plan.head}). Stop what writes to it, then run mirror restore again."
    ]


def apply(plan: RestorePlan, *, force: bool = False, progress=None):
    """Rebuild the database as `plan` says, from exactly the head it showed, make its mirror
    the installation's, and verify. Returns the report and the differences `mirror verify`
    finds ([] is good). Refuses, with nothing written, when the source's head moved since the
    plan was made (a drain or a push while the operator read it)."""
    now = _head_now(plan.mirror.path, plan.mirror.ref)
    if now != plan.head:
        raise RestoreError(
            f"The mirror at {plan.source} moved since its plan was shown: its head is now "
            f"{now or 'gone'}, the plan showed {plan.head}. Nothing was restored. Run mirror "
            "restore again to read the plan of what it holds now."
        )
    if progress is not None:
        progress.reset(total=plan.revisions)
    head = pygit2.Oid(hex=plan.head)
    report = memory_restore(
        actor=Actor.system(), projects=plan.projects or [],
        revisions=revisions(plan.mirror, head), force=force, progress=progress,
        memberships=plan.memberships, keep_verified=plan.keep_verified,
        sensitivity=plan.sensitivity,
    )  # fmt: skip
    target = _put_in_place(plan.mirror, plan.cloned)
    moved = _pin(target, plan)
    mirror = open_mirror(target)
    manifest = plan.projects is None or not plan.memberships
    report.recorded = _record_choices(mirror, set(report.marked) | set(report.refused), manifest)
    return report, moved + verify(open_mirror(target))


def mirror_restore(
    *, source: str, force: bool = False, progress=None, **choices
) -> tuple[RestoreReport, list[str]]:
    """`prepared` then `apply`, with no one to ask (scripts, the bench): the choices are
    prepared's keywords (sensitivity, keep_verified, memberships)."""
    with prepared(source=source, force=force, **choices) as plan:
        return apply(plan, force=force, progress=progress)
