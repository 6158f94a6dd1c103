"""The git side of the mirror: a bare repository written with pygit2, no work tree, no ORM.

Everything here takes plain values (RevisionFile, Person, bytes), so it can be tested and
benchmarked without a database. The ORM side lives in history/mirror/; file names and
rendering in history/file_format.py.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from history.file_format import RevisionFile, alternate_path, changed_lines, entry_id_of

TRAILER_REVISION = "Cairn-Revision"
TRAILER_ENTRY = "Cairn-Entry"


# --- The repository -----------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    name: str
    email: str

    def signature(self, when: dt.datetime) -> pygit2.Signature:
        offset = int((when.utcoffset() or dt.timedelta()).total_seconds() // 60)
        # libgit2 rejects angle brackets and newlines in names and emails.
        name = re.sub(r"[<>\n\r]", "", self.name).strip() or "unknown"
        email = re.sub(r"[<>\n\r\s]", "", self.email) or "unknown@cairn.invalid"
        return pygit2.Signature(name, email, int(when.timestamp()), offset)


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    revision: int | None
    entry: str | None
    message: str
    when: dt.datetime


def _trailers(message: str) -> dict[str, str]:
    found = {}
    for line in message.strip().splitlines()[::-1]:
        key, sep, value = line.partition(": ")
        if not sep or " " in key:
            break
        found[key] = value.strip()
    return found


def trailers_of(message: str) -> dict[str, str]:
    return _trailers(message)


def commit_info(commit: pygit2.Commit) -> CommitInfo:
    trailers = _trailers(commit.message)
    rev = trailers.get(TRAILER_REVISION)
    return CommitInfo(
        sha=str(commit.id),
        revision=int(rev) if rev and rev.isdigit() else None,
        entry=trailers.get(TRAILER_ENTRY),
        message=commit.message,
        when=dt.datetime.fromtimestamp(commit.commit_time, dt.UTC),
    )


# Which entry sits at which path, per repository and tip: reading every file to learn it again
# on each drain would cost more than the commits themselves.
_INDEX_CACHE: dict[str, tuple[pygit2.Oid, dict[str, str], dict[str, str]]] = {}


class Mirror:
    """A bare repository with one branch. Commits chain in memory; publish() moves the branch.

    Not thread-safe and not safe across processes: callers hold the mirror lock.
    """

    def __init__(self, path: Path | str, *, branch: str = "main") -> None:
        self.path = Path(path)
        self.ref = f"refs/heads/{branch}"
        if (self.path / "HEAD").exists():
            self.repo = pygit2.Repository(str(self.path))
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.repo = pygit2.init_repository(str(self.path), bare=True, initial_head=branch)
        ref = self.repo.references.get(self.ref)
        self.tip: pygit2.Oid | None = ref.target if ref is not None else None
        self._published = self.tip
        self._paths: dict[str, str] | None = None  # entry id -> path at tip
        self._owners: dict[str, str] | None = None  # path -> entry id at tip
        cached = _INDEX_CACHE.get(str(self.path))
        if cached is not None and cached[0] == self.tip:
            self._paths, self._owners = dict(cached[1]), dict(cached[2])

    # Reading ---------------------------------------------------------------------------

    def head(self) -> pygit2.Commit | None:
        return self.repo[self._published] if self._published else None

    def tree(self, oid: pygit2.Oid | None = None) -> pygit2.Tree | None:
        oid = oid or self.tip
        return self.repo[oid].tree if oid else None

    def files(self, oid: pygit2.Oid | None = None) -> dict[str, bytes]:
        """Every file at a commit (default: the tip) as {path: bytes}."""
        tree = self.tree(oid)
        out: dict[str, bytes] = {}
        if tree is None:
            return out

        def walk(node: pygit2.Tree, prefix: str) -> None:
            for item in node:
                path = f"{prefix}{item.name}"
                if item.type_str == "tree":
                    walk(self.repo[item.id], path + "/")
                else:
                    out[path] = self.repo[item.id].data

        walk(tree, "")
        return out

    def read(self, path: str, oid: pygit2.Oid | None = None) -> bytes | None:
        tree = self.tree(oid)
        if tree is None:
            return None
        try:
            obj = tree[path]
        except KeyError:
            return None
        return self.repo[obj.id].data if obj.type_str == "blob" else None

    def walk(self):
        """Commits from the published head back to the root, newest first, as CommitInfo."""
        if self._published is None:
            return
        for commit in self.repo.walk(self._published, pygit2.enums.SortMode.TOPOLOGICAL):
            yield commit_info(commit)

    def _index(self) -> None:
        if self._paths is not None:
            return
        self._paths, self._owners = {}, {}
        for path, data in self.files().items():
            entry_id = entry_id_of(data) if path.endswith(".md") else None
            if entry_id:
                self._paths[entry_id] = path
                self._owners[path] = entry_id

    def path_of(self, entry_id: str) -> str | None:
        self._index()
        return self._paths.get(entry_id)

    def target_path(self, state: RevisionFile) -> str:
        """The entry's natural path, unless another entry already holds it (then `-<id>`)."""
        self._index()
        base = state.path
        alt = alternate_path(base, state.id)
        if self._paths.get(state.id) == alt:
            return alt  # keep a disambiguated name: renaming it later would be noise
        return base if self._owners.get(base) in (None, state.id) else alt

    # Writing ---------------------------------------------------------------------------

    def _update_tree(
        self, tree: pygit2.Tree | None, parts: list[str], blob: pygit2.Oid | None
    ) -> pygit2.Oid | None:
        builder = self.repo.TreeBuilder(tree) if tree is not None else self.repo.TreeBuilder()
        name = parts[0]
        existing = builder.get(name)
        if len(parts) == 1:
            new = blob
            mode = FileMode.BLOB
        else:
            sub = (
                self.repo[existing.id]
                if existing is not None and existing.type_str == "tree"
                else None
            )
            new = self._update_tree(sub, parts[1:], blob)
            mode = FileMode.TREE
        if existing is not None:
            builder.remove(name)
        if new is not None:
            builder.insert(name, new, mode)
        if len(builder) == 0:
            return None
        return builder.write()

    def apply(
        self, state: RevisionFile | None, *, entry_id: str
    ) -> tuple[dict[str, bytes | None], int]:
        """The file changes that bring the tip to `state` (None: the entry is deleted).

        Returns ({path: new bytes or None}, lines changed).
        """
        old_path = self.path_of(entry_id)
        old = self.read(old_path) if old_path else None
        changes: dict[str, bytes | None] = {}
        new = None
        if state is None:
            if old_path:
                changes[old_path] = None
        else:
            new_path = self.target_path(state)
            new = state.render()
            changes[new_path] = new
            if old_path and old_path != new_path:
                changes[old_path] = None
        return changes, changed_lines(old, new)

    def commit(
        self,
        changes: dict[str, bytes | None],
        *,
        author: Person,
        committer: Person,
        message: str,
        when: dt.datetime,
    ) -> str:
        """Write one commit on top of the tip (not yet published); an empty change is allowed."""
        self._index()
        root = self.tree()
        root_oid = root.id if root is not None else None
        for path, data in sorted(changes.items(), key=lambda kv: kv[1] is not None):
            blob = self.repo.create_blob(data) if data is not None else None
            current = self.repo[root_oid] if root_oid is not None else None
            root_oid = self._update_tree(current, path.split("/"), blob)
            entry_id = entry_id_of(data) if data is not None else self._owners.get(path)
            if data is None:
                self._owners.pop(path, None)
                if entry_id and self._paths.get(entry_id) == path:
                    del self._paths[entry_id]
            elif entry_id:
                self._paths[entry_id] = path
                self._owners[path] = entry_id
        if root_oid is None:
            root_oid = self.repo.TreeBuilder().write()
        parents = [self.tip] if self.tip is not None else []
        oid = self.repo.create_commit(
            None,
            author.signature(when),
            committer.signature(when),
            message,
            root_oid,
            parents,
        )
        self.tip = oid
        return str(oid)

    def publish(self) -> None:
        """Point the branch at the tip. Before this, new commits are unreachable garbage."""
        if self.tip is not None and self.tip != self._published:
            self.repo.references.create(self.ref, self.tip, force=True)
            self._published = self.tip
            if self._paths is not None:
                _INDEX_CACHE[str(self.path)] = (self.tip, dict(self._paths), dict(self._owners))

    def discard(self) -> None:
        """Forget unpublished commits (after a failure)."""
        self.tip = self._published
        self._paths = self._owners = None

    def push(self, url: str, *, username: str = "", password: str = "", ssh_key: str = "") -> None:
        """Force-push the branch to `url` (the mirror is the authority; the remote a copy)."""
        callbacks = None
        if password or ssh_key:
            if ssh_key:
                cred = pygit2.Keypair(username or "git", ssh_key + ".pub", ssh_key, password)
            else:
                cred = pygit2.UserPass(username, password)
            callbacks = pygit2.RemoteCallbacks(credentials=cred)
        remote = self.repo.remotes.create_anonymous(url)
        remote.push([f"+{self.ref}:{self.ref}"], callbacks=callbacks)


# C0 and C1 controls and DEL: a subject holding ESC sequences rewrites the terminal of whoever
# runs `git log`; a CR or vertical tab forges what looks like another line.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(text: str) -> str:
    """Text for a subject or summary line: controls become spaces, runs of space one."""
    return " ".join(_CONTROLS.sub(" ", text or "").split())


def _trailer_value(value: object) -> str:
    """One line, controls written as \\uXXXX: the escape JSON values (Cairn-Reason) read back
    as the same character, so restore keeps the text exactly."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))


def build_message(
    subject: str,
    summary: str,
    *,
    revision: int | None,
    entry_id: str | None,
    trailers: dict[str, str] | None = None,
) -> str:
    """Subject, summary, then the trailers (one line each: values never hold a newline) that
    `mirror restore` reads back: what the subject line cannot carry exactly lives there."""
    summary = _one_line(summary)
    subject = _one_line(subject or summary)[:200] or summary
    lines = [subject, ""]
    if summary != subject:
        lines += [summary, ""]
    for key, value in (trailers or {}).items():
        lines.append(f"{key}: {_trailer_value(value)}")
    if revision is not None:  # the projects manifest's commits name no revision
        lines += [f"{TRAILER_REVISION}: {revision}", f"{TRAILER_ENTRY}: {entry_id}"]
    return "\n".join(lines) + "\n"
