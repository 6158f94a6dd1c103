"""Membership services, the grant command, and the cost of the scoping query."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound, ValidationFailed
from knowledge.models import Membership, Role, Sensitivity
from knowledge.selectors import (
    maintained_projects,
    project_get,
    project_role,
    visible_projects,
    writable_projects,
)
from knowledge.services import (
    MembershipChange,
    ProjectFields,
    membership_grant,
    membership_revoke,
    project_create,
    project_memberships_set,
)
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db):
    return UserFactory(username="root", is_superuser=True, is_staff=True)


@pytest.fixture
def vault(root):
    return project_create(
        actor=Actor.for_user(root),
        slug="vault",
        fields=ProjectFields(sensitivity=Sensitivity.RESTRICTED),
    )


def test_the_creator_of_a_project_maintains_it(user):
    project = project_create(
        actor=Actor.for_user(user),
        slug="mine",
        fields=ProjectFields(sensitivity=Sensitivity.RESTRICTED),
    )
    assert maintained_projects(Actor.for_user(user)).filter(pk=project.pk).exists()
    assert project_role(Actor.for_user(user), project) == Role.MAINTAINER


def test_a_maintainer_grants_changes_and_revokes_roles(root, vault):
    boss, bob = UserFactory(username="boss"), UserFactory(username="bob")
    membership_grant(actor=Actor.for_user(root), project="vault", user=boss, role="maintainer")
    boss_actor = Actor.for_user(boss)
    membership_grant(actor=boss_actor, project="vault", user=bob, role="viewer")
    assert project_role(Actor.for_user(bob), vault) == Role.VIEWER
    membership_grant(actor=boss_actor, project="vault", user=bob, role="editor")
    assert Membership.objects.get(project=vault, user=bob).role == Role.EDITOR
    assert writable_projects(Actor.for_user(bob)).filter(pk=vault.pk).exists()
    assert project_role(Actor.for_user(bob), vault) == Role.EDITOR
    membership_revoke(actor=boss_actor, project="vault", user=bob)
    assert not visible_projects(Actor.for_user(bob)).exists()
    assert project_role(Actor.for_user(bob), vault) is None


def test_an_editor_cannot_manage_membership(root, vault):
    ed, bob = UserFactory(username="ed"), UserFactory(username="bob")
    membership_grant(actor=Actor.for_user(root), project="vault", user=ed, role="editor")
    with pytest.raises(Forbidden, match="maintainer role"):
        membership_grant(actor=Actor.for_user(ed), project="vault", user=bob, role="viewer")
    assert not Membership.objects.filter(user=bob).exists()


def test_the_last_maintainer_cannot_leave(root):
    boss = UserFactory(username="boss")
    project = project_create(actor=Actor.for_user(boss), slug="solo")
    with pytest.raises(ValidationFailed, match="last maintainer"):
        membership_revoke(actor=Actor.for_user(boss), project="solo", user=boss)
    with pytest.raises(ValidationFailed, match="last maintainer"):
        membership_grant(actor=Actor.for_user(boss), project="solo", user=boss, role="viewer")
    assert Membership.objects.get(project=project, user=boss).role == Role.MAINTAINER
    # A superuser may; the project stays reachable through superusers.
    membership_revoke(actor=Actor.for_user(root), project="solo", user=boss)


def test_memberships_set_checks_for_a_maintainer_once_at_the_end(db):
    boss, bob, eve = (UserFactory(username=n) for n in ("boss", "bob", "eve"))
    project = project_create(actor=Actor.for_user(boss), slug="solo")
    actor = Actor.for_user(boss)
    membership_grant(actor=actor, project="solo", user=bob, role="editor")

    def roles():
        return {m.user.username: m.role for m in project.memberships.select_related("user")}

    # The demotion comes first: one row at a time, it would fail half-way.
    project_memberships_set(actor=actor, project="solo", changes=[
        MembershipChange(user=boss, role="editor"), MembershipChange(user=bob, role="maintainer"),
    ])  # fmt: skip
    assert roles() == {"boss": "editor", "bob": "maintainer"}
    everyone_out = [MembershipChange(user=eve, role="viewer"), MembershipChange(user=bob),
                    MembershipChange(user=boss, role="viewer")]  # fmt: skip
    with pytest.raises(ValidationFailed, match="bob is the last maintainer of solo"):
        project_memberships_set(actor=Actor.for_user(bob), project="solo", changes=everyone_out)
    assert roles() == {"boss": "editor", "bob": "maintainer"}
    with pytest.raises(NotFound, match="eve is not a member of solo"):
        project_memberships_set(actor=Actor.for_user(bob), project="solo", changes=[
            MembershipChange(user=boss, role="maintainer"), MembershipChange(user=eve),
        ])  # fmt: skip
    assert roles() == {"boss": "editor", "bob": "maintainer"}


def test_grant_needs_one_principal_and_a_known_role(root, vault):
    actor = Actor.for_user(root)
    with pytest.raises(ValidationFailed, match="exactly one"):
        membership_grant(actor=actor, project="vault", role="viewer")
    with pytest.raises(ValidationFailed, match="viewer, editor, maintainer"):
        membership_grant(actor=actor, project="vault", user=root, role="owner")


def test_grant_command_for_users_and_groups(root, vault, capsys):
    bob = UserFactory(username="bob", email="bob@corp.example")
    support = Group.objects.create(name="support")
    call_command("grant", "bob@corp.example", "vault", "editor")
    call_command("grant", "group:support", "Vault", "viewer")
    assert Membership.objects.get(project=vault, user=bob).role == Role.EDITOR
    assert Membership.objects.get(project=vault, group=support).role == Role.VIEWER
    assert "bob is now editor of vault" in capsys.readouterr().out
    call_command("grant", "--revoke", "bob", "vault")
    assert not Membership.objects.filter(project=vault, user=bob).exists()


def test_grant_command_errors_say_what_to_do(root, vault):
    with pytest.raises(CommandError, match="No user or group 'nobody'"):
        call_command("grant", "nobody", "vault", "viewer")
    UserFactory(username="support")
    Group.objects.create(name="support")
    with pytest.raises(CommandError, match="user:support or group:support"):
        call_command("grant", "support", "vault", "viewer")
    with pytest.raises(CommandError, match="Name a role"):
        call_command("grant", "user:support", "vault")
    with pytest.raises(CommandError, match="No project 'vaul'"):
        call_command("grant", "user:support", "vaul", "viewer", "--by", "support")


def test_grant_command_acting_as_a_non_maintainer_is_refused(root, vault):
    UserFactory(username="bob")
    with pytest.raises(CommandError, match="No project 'vault'"):
        call_command("grant", "bob", "vault", "editor", "--by", "bob")


def test_a_hidden_project_answers_like_a_missing_one(user, vault):
    actor = Actor.for_user(user)
    with pytest.raises(NotFound) as hidden:
        project_get(actor, "vault")
    with pytest.raises(NotFound) as missing:
        project_get(actor, "vaulx")
    assert hidden.value.message.replace("vault", "?") == missing.value.message.replace("vaulx", "?")
    assert hidden.value.data["suggestions"] == []


def test_inactive_and_anonymous_users_see_nothing(root):
    ProjectFactory(slug="open", sensitivity=Sensitivity.PUBLIC)
    ghost = UserFactory(username="ghost", is_active=False)
    assert not visible_projects(Actor.for_user(ghost)).exists()
    assert not visible_projects(Actor.system()).exists()
    assert visible_projects(Actor.for_user(root)).count() == 1


@pytest.mark.parametrize("selector", [visible_projects, writable_projects, maintained_projects])
def test_scoping_is_one_query_whatever_the_memberships(
    selector, user, root, django_assert_num_queries
):
    team = Group.objects.create(name="team")
    user.groups.add(team)
    for i in range(30):
        project = ProjectFactory(slug=f"p{i}", sensitivity=Sensitivity.values[i % 4])
        role = Role.values[i % 3]
        if i % 2:
            Membership.objects.create(project=project, user=user, role=role)
        else:
            Membership.objects.create(project=project, group=team, role=role)
    actor = Actor.for_user(user)
    with django_assert_num_queries(1):
        slugs = list(selector(actor).values_list("slug", flat=True))
    assert slugs  # and each selector gives a different, non-empty answer
    assert (
        len(
            set(
                map(
                    len,
                    [
                        list(s(actor))
                        for s in (visible_projects, writable_projects, maintained_projects)
                    ],
                )
            )
        )
        == 3
    )
