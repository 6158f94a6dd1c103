"""The restore drill: write across three projects of different sensitivity, drain the mirror,
lose the database, `mirror restore`, and find everything as it was, field by field."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test.utils import override_settings

from history import mirror
from history.mirror.manifest import MANIFEST_PATH, parse_manifest
from history.mirror.queue import open_mirror
from knowledge.actors import Actor
from knowledge.models import (
    Entry,
    HistoricalEntry,
    HistoricalProject,
    HistoricalSubtopic,
    LexemeStat,
    Membership,
    Observation,
    Project,
    Relation,
    Source,
    Subtopic,
)
from knowledge.reads.context import build_context
from knowledge.search import search_entries
from knowledge.selectors import visible_entries, visible_projects
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_correct,
    entry_delete,
    entry_edit,
    entry_move,
    entry_set_status,
    entry_update,
    entry_upsert,
    entry_verify,
    membership_grant,
    membership_revoke,
    project_create,
    project_update,
)
from knowledge.services.tokens import token_authenticate, token_create
from tests.factories import StaffFactory, UserFactory

pytestmark = pytest.mark.django_db
DERIVED = {"search_vector", "embedded_hash", "embedding_model", "embed_pending_since"}  # rebuilt
USER_FIELDS = {"created_by_id", "updated_by_id", "verified_by_id", "history_user_id"}


def _username(pk):
    return get_user_model().objects.filter(pk=pk).values_list("username", flat=True).first()


def _row(obj, names) -> dict:
    out = {}
    for name in names:
        value = getattr(obj, name)
        out[name] = _username(value) if name in USER_FIELDS else value
    return out


def snapshot() -> dict:
    entry_fields = [f.attname for f in Entry._meta.concrete_fields if f.attname not in DERIVED]
    rev_fields = [
        f.attname for f in HistoricalEntry._meta.concrete_fields if f.attname not in DERIVED
    ]
    return {
        "entries": [_row(e, entry_fields) for e in Entry.objects.order_by("pk")],
        "sources": sorted(
            (e.short_id, s.kind, s.external_id, s.url, s.title)
            for e in Entry.objects.all()
            for s in e.sources.all()
        ),
        "revisions": [_row(r, rev_fields) for r in HistoricalEntry.objects.order_by("history_id")],
        "projects": [
            {f.attname: getattr(p, f.attname) for f in Project._meta.concrete_fields}
            for p in Project.objects.order_by("pk")
        ],
        "subtopics": list(Subtopic.objects.order_by("pk").values("pk", "project", "path", "name")),
        "memberships": sorted(
            (m.project.slug, m.user.username if m.user else f"group:{m.group.name}", m.role)
            for m in Membership.objects.all()
        ),
        "observations": sorted(
            (o.entry.short_id, o.category, o.content, o.valid_from_version, o.valid_to_version)
            for o in Observation.objects.all()
        ),
        "relations": sorted(
            (r.source.short_id, r.relation_type, r.target_text, r.target_id, r.valid_to_version)
            for r in Relation.objects.all()
        ),
    }


def access(users: list[str]) -> dict:
    """The leak-matrix slice: what each person may see, as projects and entries."""
    out = {}
    for name in users:
        actor = Actor.for_user(get_user_model().objects.get(username=name))
        out[name] = (
            sorted(visible_projects(actor).values_list("slug", flat=True)),
            sorted(visible_entries(actor).values_list("short_id", flat=True)),
        )
    return out


def lose_the_database() -> None:
    with override_settings(SIMPLE_HISTORY_ENABLED=False):
        Entry.objects.all().delete()
        for model in (HistoricalEntry, HistoricalProject, HistoricalSubtopic, Source,
                      Membership, Subtopic, Project, LexemeStat):  # fmt: skip
            model.objects.all().delete()
        get_user_model().objects.all().delete()
        Group.objects.all().delete()
    assert Entry.objects.count() == HistoricalEntry.objects.count() == 0


@pytest.fixture
def written():
    """Three projects (public, confidential, restricted) and every kind of write."""
    admin = StaffFactory(username="root")
    alice = UserFactory(username="alice", first_name="Alice", last_name="Liddell")
    bob, carol = UserFactory(username="bob"), UserFactory(username="carol")
    team = Group.objects.create(name="team")
    carol.groups.add(team)
    a_alice, a_bob = Actor.for_user(alice), Actor(user=bob, agent="agent:claude")
    project_create(
        actor=a_alice, slug="open", fields=ProjectFields(name="Open", sensitivity="public")
    )
    vault = ProjectFields(name="Vault", sensitivity="confidential", description="money")
    project_create(actor=a_alice, slug="vault", fields=vault)
    project_create(
        actor=a_alice, slug="secret", fields=ProjectFields(name="Secret", sensitivity="restricted")
    )
    membership_grant(actor=a_alice, project="vault", user=bob, role="editor")
    membership_grant(actor=a_alice, project="secret", group=team, role="viewer")
    membership_grant(actor=a_alice, project="secret", user=bob, role="editor")

    plan = entry_upsert(
        actor=a_alice, project="open", subtopic="Plans > 2026",
        fields=EntryFields(title="Roadmap", body="- [goal] ship restore #ops\n\nSee [[Budget]]",
                           kind="decision", tags=["plan", "q1"], metadata={"z": 1, "a": [1, 2]}),
        sources=[{"kind": "url", "external_id": "r1", "url": "https://example.org/r1"}],
        reason="first plan",
    ).entry  # fmt: skip
    entry_update(actor=a_alice, ref=plan.pk, fields=EntryFields(body=plan.body + "\n\nmore\n"))
    entry_edit(actor=a_alice, ref=plan.pk, operation="append", content="- [risk] slow disks")
    budget = entry_upsert(actor=a_bob, project="vault", subtopic="finance",
                          fields=EntryFields(title="Budget", body="100 EUR"),
                          reason="budget draft").entry  # fmt: skip
    entry_correct(actor=a_bob, ref=budget.pk, body="120 EUR", reason="wrong sum")
    # An agent's runs (issue 43): one the client marked, one grouped by time; the token, its
    # label and the runs come back although the token itself is not restored.
    made = token_create(actor=Actor.system(), user=bob, name="laptop", agent_label="agent:codex")
    agent = token_authenticate(made.secret)
    entry_update(actor=agent.in_run("session-1"), ref=budget.pk, fields=EntryFields(tags=["q1"]))
    entry_update(actor=agent, ref=budget.pk, fields=EntryFields(tags=["q1", "agent"]))
    note = entry_upsert(actor=a_bob, project="secret", fields=EntryFields(
        title="Keys", body="in the safe", searchable=False)).entry  # fmt: skip
    entry_move(actor=a_bob, ref=note.pk, subtopic="ops/keys", reason="tidy")
    entry_set_status(actor=a_bob, ref=note.pk, status="open")
    entry_verify(actor=a_alice, ref=plan.pk)
    gone = entry_upsert(actor=a_alice, project="open", fields=EntryFields(title="Scratch",
                        body="tmp")).entry  # fmt: skip
    entry_delete(actor=a_alice, ref=gone.pk, reason="not needed")
    entry_update(actor=a_alice, ref=plan.pk, fields=EntryFields(title="Roadmap 2026"),
                 reason="rename")  # fmt: skip
    project_update(
        actor=a_alice,
        project="open",
        reason="clearer name",
        fields=ProjectFields(name="Open Plans"),
    )
    membership_revoke(actor=a_alice, project="vault", user=bob)
    membership_grant(actor=a_alice, project="vault", user=carol, role="viewer")

    result = mirror.drain()
    assert result.parked == 0 and mirror.pending().count() == 0
    return {"admin": admin, "users": ["alice", "bob", "carol"]}


def test_the_manifest_holds_projects_memberships_and_subtopics(written):
    data = parse_manifest(open_mirror().read(MANIFEST_PATH))
    vault = next(p for p in data["projects"] if p["settings"]["slug"] == "vault")
    assert vault["settings"]["sensitivity"] == "confidential"
    assert vault["settings"]["description"] == "money"
    assert {"user": "carol", "role": "viewer"} in vault["memberships"]
    assert {"user": "bob", "role": "editor"} not in vault["memberships"]
    opened = next(p for p in data["projects"] if p["settings"]["slug"] == "open")
    assert opened["settings"]["name"] == "Open Plans"
    assert [s["path"] for s in opened["subtopics"]] == ["plans", "plans/2026"]
    assert opened["subtopics"][0]["name"] == "Plans"


def test_a_lost_database_is_rebuilt_from_the_mirror_field_by_field(written, capsys):
    before, seen_before = snapshot(), access(written["users"])
    runs = {(r["history_agent"], r["history_run"][:1] or "-") for r in before["revisions"]}
    assert {("agent:codex", "s"), ("agent:codex", "~")} <= runs
    assert call_command("mirror", "verify") is None
    lose_the_database()

    call_command("mirror", "restore", "--from", str(open_mirror().path), "--yes", "--keep-verified")
    out = capsys.readouterr().out
    assert "The mirror matches the database." in out

    after = snapshot()
    for key in before:
        assert after[key] == before[key], key
    # People come back as inactive accounts without a password; signing in activates them.
    users = get_user_model().objects.filter(username__in=written["users"])
    assert all(not u.is_active and not u.has_usable_password() for u in users)
    assert get_user_model().objects.get(username="alice").get_full_name() == "Alice Liddell"
    users.update(is_active=True)
    get_user_model().objects.get(username="carol").groups.add(Group.objects.get(name="team"))
    assert access(written["users"]) == seen_before

    alice = Actor.for_user(get_user_model().objects.get(username="alice"))
    hits = search_entries(alice, "restore", mode="text")
    assert [h.title for h in hits] == ["Roadmap 2026"]
    context = build_context(alice, "memory://open/plans/2026/roadmap-2026")
    assert context  # the graph around it answers
    assert mirror.drain().committed == 0  # every revision already has its commit


def test_a_restore_refuses_a_database_that_is_not_empty(written):
    with pytest.raises(CommandError, match="already holds projects"):
        call_command("mirror", "restore", "--from", str(open_mirror().path), "--yes")
    assert Entry.objects.count() == 4


def test_force_replaces_what_the_database_holds(written):
    before = snapshot()
    entry_upsert(actor=Actor.for_user(written["admin"]), project="open",
                 fields=EntryFields(title="Not in the mirror", body="x"))  # fmt: skip
    call_command(
        "mirror",
        "restore",
        "--from",
        str(open_mirror().path),
        "--force",
        "--yes",
        "--keep-verified",
    )
    assert snapshot() == before


def test_a_restore_from_nowhere_says_what_to_pass(db):
    with pytest.raises(CommandError, match="Say which mirror"):
        call_command("mirror", "restore")
    with pytest.raises(CommandError, match="Could not read"):
        call_command("mirror", "restore", "--from", "/nonexistent/mirror.git")
