"""The leak matrix's world: one target project per sensitivity, every role, and what each may do.

The data depends only on the sensitivity: tests/access/conftest.py builds each sensitivity's world
once (in a transaction rolled back at the end) and hands every case `world.as_role(role)`.

Roles are people (and credentials) in relation to the target project `vaultproj`:

    none          signed in, no membership anywhere
    viewer        viewer of the target
    editor        editor of the target
    maintainer    maintainer of the target
    group_editor  editor through a group ("team-a")
    other         maintainer of another (restricted) project only
    guest         in a guest group (CAIRN_GUEST_GROUPS), no membership
    superuser     superuser, no membership
    read_token    the maintainer's read-only token
    narrowed      the maintainer's token narrowed to the public project "commons"
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from http.cookies import SimpleCookie

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.test import Client

from knowledge.actors import Actor
from knowledge.models import (
    Entry,
    Membership,
    Project,
    Role,
    Sensitivity,
    TokenScope,
)
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_update,
    entry_upsert,
    project_create,
)
from knowledge.services.tokens import token_create
from tests.factories import UserFactory

SLUG = "vaultproj"
TITLE = "Zebracorn plan"
SECRET_WORD = "zebracorn"  # in the title and the body: what search would leak
SOURCE = {"kind": "email", "external_id": "msg-vault-42"}
GUEST_GROUP = "contractors"

PERSON_ROLES = (
    "none",
    "viewer",
    "editor",
    "maintainer",
    "group_editor",
    "other",
    "guest",
    "superuser",
)
TOKEN_ROLES = ("read_token", "narrowed")
ROLES = PERSON_ROLES + TOKEN_ROLES
SENSITIVITIES = tuple(Sensitivity.values)

MEMBER_ROLES = {"viewer", "editor", "maintainer", "group_editor", "read_token"}
WRITERS = {"editor", "maintainer", "group_editor", "superuser"}
MAINTAINERS = {"maintainer", "superuser"}


def can_read(role: str, sensitivity: str) -> bool:
    if role == "narrowed":
        return False
    if role in MEMBER_ROLES or role == "superuser":
        return True
    if sensitivity == Sensitivity.PUBLIC:
        return True
    return sensitivity == Sensitivity.INTERNAL and role != "guest"


def allowed(need: str, role: str, sensitivity: str) -> bool:
    """The whole access model in one table: what the matrix expects."""
    if need == "read":
        return can_read(role, sensitivity)
    if need == "write":
        return role in WRITERS
    if need == "maintain":
        return role in MAINTAINERS
    raise ValueError(need)


def existence_known(role: str, sensitivity: str) -> bool:
    """Whether a refusal may admit that the project exists."""
    if can_read(role, sensitivity):
        return True
    return sensitivity == Sensitivity.CONFIDENTIAL and role != "narrowed"


@dataclass
class World:
    role: str
    sensitivity: str
    users: dict = field(default_factory=dict)
    target: Project | None = None
    elsewhere: Project | None = None
    commons: Project | None = None
    entry: Entry | None = None
    commons_entry: Entry | None = None
    spare_user: object | None = None
    secrets: dict = field(default_factory=dict)  # role -> API token secret equivalent to actor()
    sessions: dict = field(default_factory=dict)  # person role -> admin session key
    clients: dict = field(default_factory=dict)  # (kind, role) -> Client, shared by the cases
    prepared: object = None  # what the case's column prepared (Surface.prepare)

    def as_role(self, role: str) -> World:
        """The world as `role` sees it in one case: its own copies of the model instances, and
        the role's clients back to their signed-in state (no cookies left by an earlier case)."""
        world = copy.deepcopy(replace(self, clients={}))
        world.role, world.clients = role, self.clients
        for (_, who), client in self.clients.items():
            if who == role:
                client.cookies = SimpleCookie()
                if role in self.sessions:
                    client.cookies[settings.SESSION_COOKIE_NAME] = self.sessions[role]
        return world

    @property
    def user(self):
        return self.users["maintainer" if self.role in TOKEN_ROLES else self.role]

    def actor(self) -> Actor:
        if self.role == "read_token":
            return Actor(user=self.user, agent="agent:reader", scopes=frozenset({"read"}))
        if self.role == "narrowed":
            return Actor(
                user=self.user, agent="agent:narrow", project_ids=frozenset({self.commons.pk})
            )
        return Actor.for_user(self.user)

    def api_token(self) -> str:
        """A personal API token secret equivalent to actor(): for the REST and MCP columns."""
        return self.secrets[self.role]

    @property
    def admin_client(self) -> Client:
        """The role's person, signed in to the admin."""
        return self.clients["admin", self.role]

    @property
    def rest_client(self) -> Client:
        """A client sending the role's API token."""
        return self.clients["rest", self.role]

    def allowed(self, need: str) -> bool:
        return allowed(need, self.role, self.sensitivity)

    @property
    def existence_known(self) -> bool:
        return existence_known(self.role, self.sensitivity)

    def fresh_entry(self) -> Entry:
        return Entry.objects.get(pk=self.entry.pk)


def build_world(sensitivity: str) -> World:
    """Everything a case needs, for every role (see World.as_role)."""
    world = World(role="", sensitivity=sensitivity)
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    owner = Actor.for_user(root, agent="human:root")
    # Every person is staff with the model permissions: only project access may differ.
    staff = Group.objects.create(name="cairn-staff")
    staff.permissions.set(Permission.objects.filter(content_type__app_label="knowledge"))
    for name in PERSON_ROLES:
        user = UserFactory(username=f"u-{name}", is_staff=True, is_superuser=name == "superuser")
        user.groups.add(staff)
        world.users[name] = user
    world.spare_user = UserFactory(username="spare")

    world.target = project_create(
        actor=owner, slug=SLUG, fields=ProjectFields(name="Vault Project", sensitivity=sensitivity)
    )
    world.elsewhere = project_create(
        actor=owner,
        slug="elsewhere",
        fields=ProjectFields(name="Elsewhere", sensitivity=Sensitivity.RESTRICTED),
    )
    world.commons = project_create(
        actor=owner,
        slug="commons",
        fields=ProjectFields(name="Commons", sensitivity=Sensitivity.PUBLIC),
    )
    team = Group.objects.create(name="team-a")
    world.users["group_editor"].groups.add(team)
    guests = Group.objects.create(name=GUEST_GROUP)
    world.users["guest"].groups.add(guests)
    for name, role in (("viewer", Role.VIEWER), ("editor", Role.EDITOR)):
        Membership.objects.create(project=world.target, user=world.users[name], role=role)
    Membership.objects.create(
        project=world.target, user=world.users["maintainer"], role=Role.MAINTAINER
    )
    Membership.objects.create(project=world.target, group=team, role=Role.EDITOR)
    Membership.objects.create(
        project=world.elsewhere, user=world.users["other"], role=Role.MAINTAINER
    )

    entry = entry_upsert(
        actor=owner,
        project=SLUG,
        subtopic="ops/2026",
        fields=EntryFields(title=TITLE, body=f"The {SECRET_WORD} budget is 42."),
        sources=[SOURCE],
    ).entry
    world.entry = entry_update(
        actor=owner, ref=entry.pk, fields=EntryFields(body=f"The {SECRET_WORD} budget is 43.")
    ).entry
    world.commons_entry = entry_upsert(
        actor=owner,
        project="commons",
        fields=EntryFields(title="Commons note", body="Nothing secret here."),
    ).entry
    _sign_in(world)
    return world


def _sign_in(world: World) -> None:
    """One token per role (as the role's actor() would act) and one admin session per person."""
    for role in ROLES:
        user = world.users["maintainer" if role in TOKEN_ROLES else role]
        world.secrets[role] = token_create(
            actor=Actor.for_user(user),
            user=user,
            name=f"matrix {role}",
            scope=TokenScope.READ if role == "read_token" else TokenScope.WRITE,
            projects=[world.commons.slug] if role == "narrowed" else None,
        ).secret
        world.clients["rest", role] = Client(
            headers={"Authorization": f"Bearer {world.secrets[role]}"}
        )
    for role in PERSON_ROLES:
        client = Client(raise_request_exception=False)
        client.force_login(world.users[role])
        world.sessions[role] = client.cookies[settings.SESSION_COOKIE_NAME].value
        world.clients["admin", role] = client
