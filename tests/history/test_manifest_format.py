"""The mirror's projects manifest is one typed value with one writer and one reader
(history/manifest_format.py). What it renders is the mirror's format: `mirror verify` compares
the file with what the database would write and `mirror restore` reads it back, so the bytes
are held here exactly as the mirror has always written them."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import yaml
from django.contrib.auth.models import Group

from history.manifest_format import ManifestRefused, ProjectsManifest
from history.mirror.manifest import manifest, render_manifest
from knowledge.models import Membership, Project, Subtopic
from knowledge.records import MemberRecord, ProjectRecord, SubtopicRecord
from tests.factories import UserFactory

WHEN = dt.datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=dt.UTC)

# What the mirror wrote for this database before the manifest was a typed value (captured from
# history.mirror.manifest at main 80ff2d7): header, key order, quoting, members' order.
GOLDEN = b"""\
# Cairn's projects, their memberships and subtopics, written by the git mirror.
# `manage.py mirror restore` reads it back; edit projects in Cairn, not here.
format: 1
projects:
- id: 41
  settings:
    slug: vault
    name: 'Vault: money'
    description: 'Money, "quoted"

      and two lines'
    sensitivity: confidential
    archived: false
    schema_mode: 'off'
    schemas_shared: false
    schema_library_id: null
    created_at: '2026-03-04T05:06:07.891011Z'
    updated_at: '2026-03-05T05:06:07.891011Z'
  memberships:
  - user: bob
    role: viewer
  - user: zoe
    role: editor
  - group: ops
    role: viewer
  subtopics: []
- id: 42
  settings:
    slug: open
    name: Open Plans
    description: ''
    sensitivity: internal
    archived: false
    schema_mode: 'off'
    schemas_shared: false
    schema_library_id: null
    created_at: '2026-03-04T05:06:07.891011Z'
    updated_at: '2026-03-05T05:06:07.891011Z'
  memberships: []
  subtopics:
  - id: 7
    path: plans
    name: Plans
    created_at: '2026-03-04T05:06:07.891011Z'
  - id: 8
    path: plans/2026
    name: '2026'
    created_at: '2026-03-04T05:06:07.891011Z'
"""


@pytest.fixture
def two_projects(db):
    zoe, bob = UserFactory(username="zoe"), UserFactory(username="bob")
    ops = Group.objects.create(name="ops")
    vault = Project.objects.create(pk=41, slug="vault", name="Vault: money",
                                   description='Money, "quoted"\nand two lines',
                                   sensitivity="confidential")  # fmt: skip
    opened = Project.objects.create(pk=42, slug="open", name="Open Plans", sensitivity="internal")
    # Made in another order than the file lists them: people first, then groups.
    Membership.objects.create(project=vault, group=ops, role="viewer")
    Membership.objects.create(project=vault, user=zoe, role="editor")
    Membership.objects.create(project=vault, user=bob, role="viewer")
    plans = Subtopic.objects.create(pk=7, project=opened, slug="plans", name="Plans", path="plans")
    Subtopic.objects.create(pk=8, project=opened, parent=plans, slug="2026", name="2026",
                            path="plans/2026")  # fmt: skip
    Subtopic.objects.update(created_at=WHEN)
    Project.objects.update(created_at=WHEN, updated_at=WHEN + dt.timedelta(days=1))


def test_the_manifest_renders_the_bytes_the_mirror_always_wrote(two_projects):
    assert render_manifest() == GOLDEN


def test_what_is_written_reads_back_the_same(two_projects):
    written = manifest()
    read = ProjectsManifest.parse(written.render())
    assert read == written
    vault = read.projects[0]
    assert vault.slug == "vault" and vault.settings["sensitivity"] == "confidential"
    assert vault.memberships[0] == MemberRecord(role="viewer", user="bob")
    assert vault.memberships[2] == MemberRecord(role="viewer", group="ops")
    assert read.projects[1].subtopics[1] == SubtopicRecord(
        id=8, path="plans/2026", name="2026", created_at="2026-03-04T05:06:07.891011Z"
    )


def test_a_value_renders_without_a_database():
    value = ProjectsManifest(
        (
            ProjectRecord(
                1,
                {"slug": "a", "name": "A"},
                (MemberRecord("owner", user="al"),),
                (SubtopicRecord(3, "x", "X", None),),
            ),
        )
    )
    assert value.render().decode().split("format: 1\n", 1)[1] == (
        "projects:\n- id: 1\n  settings:\n    slug: a\n    name: A\n  memberships:\n"
        "  - user: al\n    role: owner\n  subtopics:\n  - id: 3\n    path: x\n    name: X\n"
        "    created_at: null\n"
    )
    assert ProjectsManifest.parse(value.render()) == value


def test_an_older_manifest_without_lists_reads_as_empty():
    read = ProjectsManifest.parse(b"format: 1\nprojects:\n- id: 5\n  settings: {slug: old}\n")
    assert read.projects == (ProjectRecord(5, {"slug": "old"}),)
    assert ProjectsManifest.parse(b"") == ProjectsManifest()


@pytest.mark.parametrize(
    "raw",
    [b"- a list\n", b"projects: {a: 1}\n", b"projects: 3\n"],
    ids=["a list", "a mapping of projects", "a number"],
)
def test_a_file_that_is_not_a_manifest_is_refused(raw):
    with pytest.raises(ManifestRefused, match="is not a Cairn projects manifest") as caught:
        ProjectsManifest.parse(raw)
    assert caught.value.project is None


@pytest.mark.parametrize(
    "project, said",
    [
        ("- just text", "a project is not a mapping"),
        ("- settings: {slug: a}", "a project's id is not a whole number"),
        ("- {id: '1', settings: {slug: a}}", "a project's id is not a whole number"),
        ("- {id: 1}", "a project's settings is not a mapping"),
        ("- {id: 1, settings: {}, memberships: [text]}", "a membership is not a mapping"),
        ("- {id: 1, settings: {}, memberships: {user: a}}", "memberships is not a list"),
        ("- {id: 1, settings: {}, memberships: [{user: [a]}]}", "a membership's user is not"),
        ("- {id: 1, settings: {}, memberships: [{group: a, role: 3}]}", "role is not text"),
        ("- {id: 1, settings: {}, subtopics: [{id: 2}]}", "a subtopic's path is not text"),
        ("- {id: 1, settings: {}, subtopics: [{id: x, path: a}]}", "a subtopic's id is not"),
        ("- {id: 1, settings: {}, subtopics: [{id: 2, path: a, name: [1]}]}", "name is not"),
    ],
)
def test_a_project_of_a_shape_cairn_does_not_write_is_refused_and_named(project, said):
    raw = f"format: 1\nprojects:\n{project}\n".encode()
    with pytest.raises(ManifestRefused, match=said) as caught:
        ProjectsManifest.parse(raw)
    assert caught.value.project == yaml.safe_load(raw)["projects"][0]


class _Mirror:
    def __init__(self, raw: bytes | None):
        self.raw = raw

    def read(self, path, at):
        return self.raw


@pytest.mark.parametrize(
    "raw, said",
    [
        (b"projects: 3\n", ".cairn/projects.yaml cannot be read: .cairn/projects.yaml is not a"),
        (b"projects: [\n", ".cairn/projects.yaml cannot be read: while parsing"),
        (b"\xff\xfe", ".cairn/projects.yaml cannot be read: 'utf-8' codec"),
        (b"projects:\n- {id: 1}\n", "holds a project that is not one Cairn writes ({'id': 1}: a"),
    ],
)
def test_the_restore_says_what_is_wrong_with_a_manifest(raw, said):
    from history.mirror_restore.restoring import RestoreError, read_projects

    with pytest.raises(RestoreError, match=re.escape(said)):
        read_projects(_Mirror(raw), head="HEAD")
    assert read_projects(_Mirror(None), head="HEAD") is None
    assert read_projects(_Mirror(GOLDEN), head="HEAD")[1].slug == "open"
