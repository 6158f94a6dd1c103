"""The data commands' base (knowledge/management/base.py): who acts, what the operator is told
when nobody can, and one timing per run."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from knowledge.actors import Actor
from knowledge.models import Membership, Role
from knowledge.services import project_create
from ops import timing
from ops.models import OperationTiming
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_timings():
    timing.discard()
    OperationTiming.objects.all().delete()  # inside the test's transaction: rolled back
    yield
    timing.discard()


@pytest.fixture
def vault(db):
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    return project_create(actor=Actor.for_user(root), slug="vault")


def test_a_command_without_the_acting_option_acts_as_the_first_superuser_and_is_timed(vault):
    bob = UserFactory(username="bob")
    call_command("grant", "bob", "vault", "editor")
    assert Membership.objects.get(project=vault, user=bob).role == Role.EDITOR
    timing.flush()
    [row] = OperationTiming.objects.filter(surface="command")
    assert (row.operation, row.outcome) == ("grant", "ok")


def test_an_unknown_acting_user_is_named_with_where_users_come_from(vault, tmp_path):
    with pytest.raises(CommandError, match=r"No user 'nobody'\. Users appear after their first"):
        call_command("grant", "root", "vault", "viewer", "--by", "nobody")
    with pytest.raises(CommandError, match=r"No user 'nobody'\."):
        call_command("import", str(tmp_path), "--user", "nobody")


def test_a_deactivated_acting_user_is_refused(vault):
    UserFactory(username="gone", is_active=False)
    with pytest.raises(CommandError, match="'gone' is deactivated; pass --by with an active user"):
        call_command("grant", "root", "vault", "viewer", "--by", "gone")


def test_without_a_superuser_the_command_says_how_to_make_one(db, tmp_path):
    UserFactory(username="alice")
    with pytest.raises(
        CommandError, match=r"No active superuser to act as\. Create one with `manage.py "
        r"createadmin` \(or createsuperuser\), or pass --user USER\."
    ):  # fmt: skip
        call_command("import", str(tmp_path), "--dry-run")
