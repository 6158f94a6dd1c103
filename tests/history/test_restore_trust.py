"""A mirror restore does not believe the mirror further than it must (issue 32): the operator
sees the plan and says yes, narrowed tokens stay narrowed, a mirror without a manifest is not
restored as readable by everyone, verification marks and revisions are checked, restored
accounts start as guests, and the push credentials go to the push URL only."""

from __future__ import annotations

import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pygit2
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from pygit2.enums import FileMode

from history import mirror
from history.mirror.manifest import MANIFEST_PATH
from history.mirror.queue import open_mirror
from knowledge.actors import Actor
from knowledge.errors import Forbidden
from knowledge.models import Entry, Membership, Project
from knowledge.selectors import visible_projects
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_upsert,
    entry_verify,
    membership_grant,
    project_create,
)
from knowledge.services.tokens import token_authenticate, token_create
from tests.factories import UserFactory
from tests.history.test_restore import lose_the_database

pytestmark = pytest.mark.django_db


class Tty(io.StringIO):
    """What the operator types, at a terminal."""

    def isatty(self) -> bool:
        return True


def _restore(*args: str, stdin=None):
    options = {"stdin": stdin} if stdin is not None else {}
    call_command("mirror", "restore", "--from", str(open_mirror().path), *args, **options)


def _slugs(actor) -> list[str]:
    return sorted(visible_projects(actor).values_list("slug", flat=True))


@pytest.fixture
def two_projects():
    """alice edits narrow-a and narrow-b; bob is a viewer of narrow-b; all drained."""
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    a = Actor.for_user(alice)
    for slug in ("narrow-a", "narrow-b"):
        project_create(
            actor=a, slug=slug, fields=ProjectFields(name=slug, sensitivity="restricted")
        )
        entry_upsert(actor=a, project=slug, fields=EntryFields(title=f"In {slug}", body="x"))
    membership_grant(actor=a, project="narrow-b", user=bob, role="viewer")
    assert mirror.drain().parked == 0
    return alice


# --- tokens ---------------------------------------------------------------------------------


def test_a_restore_keeps_a_narrowed_token_narrowed(two_projects, capsys):
    alice = two_projects
    narrow = token_create(actor=Actor.system(), user=alice, name="a", projects=["narrow-a"])
    # Cached now, as a running web process keeps it: re-pointed, it is read afresh.
    assert _slugs(token_authenticate(narrow.secret)) == ["narrow-a"]
    project_create(
        actor=Actor.for_user(alice), slug="narrow-c", fields=ProjectFields(name="C")
    )  # not in the mirror
    orphan = token_create(actor=Actor.system(), user=alice, name="c", projects=["narrow-c"])

    _restore("--force", "--yes")
    out = capsys.readouterr().out

    actor = token_authenticate(narrow.secret)
    assert _slugs(actor) == ["narrow-a"]  # the drill listed narrow-b here
    with pytest.raises(Forbidden):
        project_create(actor=actor, slug="made-by-token", fields=ProjectFields(name="x"))
    assert token_authenticate(orphan.secret) is None
    assert "Token re-pointed to the restored projects: a (" in out and "narrow-a" in out
    assert "Token revoked (none of its projects came back): c (" in out


def test_a_narrowed_token_whose_projects_are_gone_sees_nothing(two_projects, settings):
    settings.CAIRN_TOKEN_CACHE_SECONDS = 0
    alice = two_projects
    narrow = token_create(actor=Actor.system(), user=alice, name="a", projects=["narrow-a"])
    Project.objects.filter(slug="narrow-a").delete()  # as the admin's delete does
    actor = token_authenticate(narrow.secret)
    assert actor is not None and _slugs(actor) == []
    with pytest.raises(Forbidden):
        project_create(actor=actor, slug="made-by-token", fields=ProjectFields(name="x"))
    wide = token_create(actor=Actor.system(), user=alice, name="all")
    assert _slugs(token_authenticate(wide.secret)) == ["narrow-b"]  # unnarrowed: all of hers


# --- the plan and the question --------------------------------------------------------------


def test_without_a_terminal_or_yes_nothing_is_restored(two_projects, capsys):
    lose_the_database()
    with pytest.raises(CommandError, match="pass --yes"):
        _restore()
    out = capsys.readouterr().out
    assert "narrow-b: restricted (as the manifest says)" in out
    assert "narrow-b: user bob becomes viewer (a new inactive account)" in out
    assert not Project.objects.exists()


def test_the_plan_names_existing_accounts_and_waits_for_yes(two_projects, capsys):
    lose_the_database()
    UserFactory(username="bob")  # someone here happens to have the mirror's username
    with pytest.raises(CommandError, match="not confirmed"):
        _restore(stdin=Tty("n\n"))
    assert not Project.objects.exists()
    _restore(stdin=Tty("y\n"))
    out = capsys.readouterr().out
    assert "narrow-b: user bob becomes viewer (an EXISTING account here" in out
    assert Membership.objects.filter(user__username="bob", project__slug="narrow-b").exists()


def test_no_memberships_leaves_them_out(two_projects):
    lose_the_database()
    _restore("--yes", "--no-memberships")
    assert Project.objects.count() == 2 and not Membership.objects.exists()


# --- a mirror without a manifest --------------------------------------------------------------


def _commit(change: dict[str, bytes | None], message: str) -> None:
    """A commit on the mirror's branch changing files as `change` says (None deletes)."""
    repo = open_mirror()
    head = repo.head()
    index = pygit2.Index()
    index.read_tree(head.tree)
    for path, data in change.items():
        if data is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, repo.repo.create_blob(data), FileMode.BLOB))
    tree = index.write_tree(repo.repo)
    who = pygit2.Signature("mallory", "mallory@example.org")
    repo.repo.create_commit(repo.ref, who, who, message, tree, [head.id])


def test_a_mirror_without_a_manifest_needs_a_sensitivity(two_projects, capsys):
    _commit({MANIFEST_PATH: None}, "drop the manifest\n")
    lose_the_database()
    with pytest.raises(CommandError, match="--sensitivity restricted"):
        _restore("--yes")
    assert not Project.objects.exists()
    _restore("--yes", "--sensitivity", "restricted")
    assert set(Project.objects.values_list("sensitivity", flat=True)) == {"restricted"}
    assert not Membership.objects.exists()
    someone = UserFactory(username="someone")
    assert _slugs(Actor.for_user(someone)) == []  # was: every project, as internal
    assert "narrow-a: restricted (not in a manifest: --sensitivity)" in capsys.readouterr().out


# --- what the revisions say -------------------------------------------------------------------


def test_verification_marks_are_dropped_unless_kept(two_projects, capsys):
    entry = Entry.objects.get(title="In narrow-a")
    entry_verify(actor=Actor.for_user(two_projects), ref=entry.pk)
    mirror.drain()
    lose_the_database()
    _restore("--yes")
    assert Entry.objects.get(pk=entry.pk).verified_by is None
    out = capsys.readouterr().out
    assert "Dropped the verification marks of 1 entr(y/ies)" in out
    assert "The mirror matches the database." in out
    _restore("--yes", "--force", "--keep-verified")
    assert Entry.objects.get(pk=entry.pk).verified_by.username == "alice"


def _forge(entry: Entry, old: bytes, new: bytes, revision: int) -> None:
    """A revision of `entry` with `old` replaced by `new` in its file, as a pusher could."""
    repo = open_mirror()
    path = repo.path_of(entry.short_id)
    raw = repo.read(path)
    assert old in raw
    like = next(c for c in repo.walk() if c.entry == entry.short_id).message
    message = "\n".join(
        f"Cairn-Revision: {revision}" if line.startswith("Cairn-Revision:") else line
        for line in like.splitlines()
    ).replace("Cairn-Action: create", "Cairn-Action: update")
    _commit({path: raw.replace(old, new)}, message + "\n")


def test_a_forged_revision_is_refused_and_the_rest_restored(two_projects, capsys):
    a = Entry.objects.get(title="In narrow-a")
    b = Entry.objects.get(title="In narrow-b")
    top = Entry.history.order_by("-history_id").first().history_id
    _forge(a, b"title: In narrow-a", b"title: In narrow-a\nsources: [{kind: url, "
           b"external_id: x, url: 'javascript:alert(1)'}]", top + 1)  # fmt: skip
    _forge(b, b"title: In narrow-b", b"title: &t In narrow-b\nkind: *t", top + 2)
    _forge(b, b"title: &t In narrow-b\nkind: *t", b"title: Again", top + 1)  # id used twice
    lose_the_database()
    _restore("--yes")
    out = capsys.readouterr().out
    assert f"revision {top + 1} of entry {a.short_id}: refused as a write would be" in out
    assert "sources.url must be an absolute URL" in out
    assert f"revision {top + 2} of entry {b.short_id}: its file cannot be read" in out
    assert "anchors and aliases" in out
    assert (
        f"revision {top + 1} of entry {b.short_id}: refused as a write would be: revision id" in out
    )
    assert out.count("Not restored:") == 3
    assert Entry.objects.count() == 2 and not Entry.objects.get(pk=a.pk).sources.exists()
    # The mirror's head now says what was restored, so the next drain starts from there.
    assert "Committed to the mirror what this restore did" in out
    assert "The mirror matches the database." in out
    assert b"javascript:" not in open_mirror().read(open_mirror().path_of(a.short_id))


# --- people -----------------------------------------------------------------------------------


def test_restored_accounts_start_as_guests(two_projects, settings, capsys):
    settings.CAIRN_GUEST_GROUPS = ["guests"]
    inside = ProjectFields(name="In", sensitivity="internal")
    project_create(actor=Actor.for_user(two_projects), slug="inside", fields=inside)
    mirror.drain()
    lose_the_database()
    _restore("--yes")
    assert "in the guest group 'guests'" in capsys.readouterr().out
    bob = get_user_model().objects.get(username="bob")
    assert not bob.is_active and list(bob.groups.values_list("name", flat=True)) == ["guests"]
    bob.is_active = True  # an administrator activates him before his SSO sign-in
    bob.save()
    assert _slugs(Actor.for_user(bob)) == ["narrow-b"]  # his membership, not "inside"


# --- credentials ------------------------------------------------------------------------------


@pytest.fixture
def asks_for_a_password():
    """An HTTP git server that asks for Basic auth and records every Authorization it gets."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.headers.get("Authorization"):
                seen.append(self.headers["Authorization"])
                self.send_response(404)
            else:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_the_push_credentials_go_only_to_the_push_url(db, settings, asks_for_a_password):
    base, seen = asks_for_a_password
    settings.CAIRN_MIRROR_PUSH_URL = f"{base}/ours.git"
    settings.CAIRN_MIRROR_PUSH_USERNAME, settings.CAIRN_MIRROR_PUSH_PASSWORD = "cairn", "s3cret"
    with pytest.raises(CommandError, match="Could not read"):
        call_command("mirror", "restore", "--from", f"{base}/theirs.git", "--yes")
    assert seen == []
    with pytest.raises(CommandError, match="Could not read"):
        call_command("mirror", "restore", "--yes")  # the push URL itself: offered there
    assert seen and seen[0].startswith("Basic ")
