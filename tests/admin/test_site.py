"""Admin smoke tests: pages answer, and a save in the admin is a revision made by the services."""

import re

import pytest
from django.urls import reverse

from knowledge.models import Entry, Membership, Project, Role, Subtopic
from ops.version import VERSION
from tests.admin.forms import project_form
from tests.factories import EntryFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def entry(project):
    return EntryFactory(project=project, subtopic="ops/runbooks", title="Restore", body="# Steps")


@pytest.mark.parametrize("model", ["project", "subtopic", "entry", "source"])
def test_changelists_answer(admin_client, entry, model):
    response = admin_client.get(reverse(f"admin:knowledge_{model}_changelist"))
    assert response.status_code == 200


def test_every_admin_page_names_the_version_in_its_footer(admin_client, entry):
    for url in (reverse("admin:index"), reverse("admin:knowledge_entry_change", args=[entry.pk])):
        response = admin_client.get(url)
        assert f'<footer class="cairn-footer">Cairn {VERSION} ' in response.content.decode(), url


def test_entry_change_and_history_pages_answer(admin_client, entry):
    change = admin_client.get(reverse("admin:knowledge_entry_change", args=[entry.pk]))
    assert change.status_code == 200
    assert b"easymde.min.js" in change.content  # the vendored editor, no CDN
    # No asset from another host (a bare "cdn" check trips over short ids like "x4cdn7ab").
    assert re.findall(rb'(?:src|href)="(?:https?:)?//', change.content) == []
    history = admin_client.get(reverse("admin:knowledge_entry_history", args=[entry.pk]))
    assert history.status_code == 200
    assert b"Restore" in history.content


def test_subtopic_changelist_shows_the_tree(admin_client, entry):
    response = admin_client.get(reverse("admin:knowledge_subtopic_changelist"))
    assert b"ops/runbooks" in response.content
    assert b'class="cairn-depth-1"' in response.content  # indented by cairn-admin.css


def _entry_form(entry, **changes):
    data = {
        "project": entry.project_id,
        "subtopic_path": entry.subtopic.path if entry.subtopic_id else "",
        "title": entry.title,
        "body": entry.body,
        "kind": entry.kind,
        "tags_text": ", ".join(entry.tags),
        "status": entry.status,
        "searchable": "on" if entry.searchable else "",
        "metadata": "{}",
        "version": entry.version,
        "reason": "",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v != ""}


def test_saving_in_the_admin_makes_a_revision_through_the_services(admin_client, entry, staff):
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    response = admin_client.post(
        url, _entry_form(entry, body="# Steps\n\n1. stop workers", reason="add step one")
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    entry.refresh_from_db()
    assert entry.version == 2
    assert entry.generated_by == "human:admin"
    latest = entry.history.order_by("-history_id").first()
    assert latest.history_user == staff
    assert latest.history_change_reason == "add step one"


def test_moving_in_the_admin_creates_the_path(admin_client, entry):
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    response = admin_client.post(url, _entry_form(entry, subtopic_path="Ops > Archive"))
    assert response.status_code == 302
    entry.refresh_from_db()
    assert entry.subtopic.path == "ops/archive"
    assert Subtopic.objects.filter(path="ops/archive").exists()


def test_a_stale_admin_form_is_refused_and_keeps_the_text(admin_client, entry):
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    admin_client.post(url, _entry_form(entry, body="first edit"))
    response = admin_client.post(url, _entry_form(entry, body="my careful edit"))
    assert response.status_code == 200
    assert b"Someone changed this entry" in response.content
    assert b"my careful edit" in response.content
    entry.refresh_from_db()
    assert entry.body == "first edit"


def test_adding_an_entry_in_the_admin(admin_client, project):
    response = admin_client.post(
        reverse("admin:knowledge_entry_add"),
        {"project": project.pk, "subtopic_path": "a/b", "title": "New", "body": "text",
         "kind": "note", "status": "active", "searchable": "on", "metadata": "{}",
         "tags_text": "X, y"},
    )  # fmt: skip
    assert response.status_code == 302
    entry = Entry.objects.get(title="New")
    assert entry.tags == ["x", "y"]
    assert entry.subtopic.path == "a/b"
    assert entry.history.first().history_type == "+"


def test_adding_a_title_that_exists_is_refused_on_the_form(admin_client, entry):
    response = admin_client.post(
        reverse("admin:knowledge_entry_add"),
        {"project": entry.project_id, "subtopic_path": "ops/runbooks", "title": "restore",
         "body": "my other steps", "kind": "note", "status": "active", "searchable": "on",
         "metadata": "{}"},
    )  # fmt: skip
    assert response.status_code == 200  # the form again, not a redirect
    errors = response.context["adminform"].form.errors["title"]
    assert "already exists in acme/ops/runbooks" in errors[0]
    assert f"?q={entry.short_id}" in errors[0]  # a link to open it
    assert b"my other steps" in response.content  # what the person typed is kept
    entry.refresh_from_db()
    assert (entry.body, entry.version) == ("# Steps", 1)
    assert Entry.objects.filter(project=entry.project).count() == 1


def test_deleting_in_the_admin_keeps_history(admin_client, entry):
    url = reverse("admin:knowledge_entry_delete", args=[entry.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Entry.objects.filter(pk=entry.pk).exists()
    last = Entry.history.filter(id=entry.pk).order_by("-history_id").first()
    assert last.history_type == "-"
    assert "deleted in the admin" in last.history_change_reason


def test_creating_a_project_in_the_admin(admin_client):
    response = admin_client.post(
        reverse("admin:knowledge_project_add"),
        {"slug": "new-proj", "name": "New Proj", "sensitivity": "internal", "description": ""},
    )
    assert response.status_code == 302
    assert Project.objects.get(slug="new-proj").history.count() == 1


def test_markdown_preview_is_sanitized(admin_client):
    response = admin_client.post(
        reverse("admin:knowledge_entry_preview"),
        {"text": "**bold** <script>alert(1)</script><img src=x onerror=alert(1)>"},
    )
    html = response.content.decode()
    assert "<strong>bold</strong>" in html
    assert "<script" not in html
    assert "onerror" not in html


def test_preview_needs_staff(client):
    response = client.post(reverse("admin:knowledge_entry_preview"), {"text": "x"})
    assert response.status_code == 302  # to the login page


def test_reverting_in_the_admin_is_a_new_revision(admin_client, entry):
    change = reverse("admin:knowledge_entry_change", args=[entry.pk])
    admin_client.post(change, _entry_form(entry, body="second text"))
    first = entry.history.order_by("history_id").first()
    revert_url = reverse("admin:knowledge_entry_simple_history", args=[entry.pk, first.history_id])
    page = admin_client.get(revert_url)
    assert page.status_code == 200
    entry.refresh_from_db()
    form = _entry_form(entry, body=first.body, reason="revert to v1")
    response = admin_client.post(revert_url, form)
    assert response.status_code == 302, response.content.decode()[:1500]
    entry.refresh_from_db()
    assert entry.body == "# Steps"
    assert entry.version == 3
    assert entry.history.count() == 3


def test_members_are_granted_and_revoked_through_the_inline(admin_client, project, user):
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    page = admin_client.get(url)
    assert b"members (users or groups)" in page.content.lower()
    memberships = list(project.memberships.order_by("pk"))
    data = {
        "name": project.name, "description": "", "sensitivity": project.sensitivity,
        "memberships-TOTAL_FORMS": str(len(memberships) + 1),
        "memberships-INITIAL_FORMS": str(len(memberships)),
    }  # fmt: skip
    for i, m in enumerate(memberships):
        data |= {f"memberships-{i}-id": m.pk, f"memberships-{i}-project": project.pk,
                 f"memberships-{i}-user": m.user_id or "", f"memberships-{i}-group": "",
                 f"memberships-{i}-role": m.role}  # fmt: skip
        if m.user_id == user.pk:
            data[f"memberships-{i}-DELETE"] = "on"
    new_user = UserFactory(username="bob")
    n = len(memberships)
    data |= {f"memberships-{n}-project": project.pk, f"memberships-{n}-user": new_user.pk,
             f"memberships-{n}-role": "viewer"}  # fmt: skip
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    roles = {m.user.username: m.role for m in project.memberships.filter(user__isnull=False)}
    assert roles.get("bob") == "viewer"
    assert "alice" not in roles


def _maintainer_client(client, project):
    """Signed in as a staff maintainer of `project` who is not a superuser (a superuser may
    leave a project without maintainers)."""
    from django.contrib.auth.models import Permission

    boss = UserFactory(username="boss", is_staff=True)
    boss.user_permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
    project.memberships.filter(user__username="factory").delete()  # boss is the only maintainer
    Membership.objects.create(project=project, user=boss, role=Role.MAINTAINER)
    client.force_login(boss)
    return client


def _roles(project):
    return {m.user.username: m.role for m in project.memberships.select_related("user")}


def test_the_last_maintainer_hands_over_in_one_save(client, user):
    project = ProjectFactory(slug="solo", name="Solo")
    maintainer = _maintainer_client(client, project)  # boss's row comes before alice's
    Membership.objects.create(project=project, user=user, role=Role.EDITOR)
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    response = maintainer.post(
        url, project_form(project, {"boss": "editor", "alice": "maintainer"})
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    assert _roles(project) == {"boss": "editor", "alice": "maintainer"}


def test_removing_every_maintainer_is_refused_and_changes_nothing(client, project):
    maintainer = _maintainer_client(client, project)  # alice's row (editor) comes first
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    response = maintainer.post(
        url, project_form(project, {"alice": "viewer", "boss": "viewer"}), follow=True
    )
    assert b"oss is the last maintainer of acme. Make someone else maintainer first." in (
        response.content  # "Boss …": the admin's messages start with a capital
    )
    assert _roles(project) == {"alice": "editor", "boss": "maintainer"}


def test_a_page_save_that_renames_and_removes_the_last_maintainer_saves_neither(client, project):
    maintainer = _maintainer_client(client, project)
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    data = project_form(project, {"boss": "viewer"}) | {"name": "Acme Renamed"}
    response = maintainer.post(url, data, follow=True)
    assert b"oss is the last maintainer of acme." in response.content
    project.refresh_from_db()
    assert project.name == "Acme"
    assert _roles(project) == {"alice": "editor", "boss": "maintainer"}


def test_a_page_save_renames_and_changes_members_at_once(client, project):
    maintainer = _maintainer_client(client, project)
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    data = project_form(project, {"alice": "maintainer"}) | {"name": "Acme Renamed"}
    response = maintainer.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    project.refresh_from_db()
    assert project.name == "Acme Renamed"
    assert _roles(project) == {"alice": "maintainer", "boss": "maintainer"}
    assert project.history.first().history_change_reason == "edited in the admin"


def test_a_viewer_cannot_change_project_settings(client, project, user):
    user.is_staff = True
    user.save()
    from django.contrib.auth.models import Permission

    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
    client.force_login(user)  # alice is an editor of acme, not a maintainer
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    response = client.post(url, {"name": "Renamed", "sensitivity": "public"})
    assert response.status_code == 403
    project.refresh_from_db()
    assert project.name == "Acme"


def test_admin_pages_add_only_unsafe_eval_and_the_rest_of_the_site_stays_strict(
    admin_client, client, entry
):
    """The theme's Alpine.js evaluates its attributes: the admin's pages, sign-in included, add
    'unsafe-eval' to script-src and nothing else; no inline script or style, no other host."""
    pages = ["/admin/", reverse("admin:knowledge_entry_change", args=[entry.pk])]
    for url in pages:
        response = admin_client.get(url)
        policy = response["Content-Security-Policy"]
        assert "script-src 'self' 'unsafe-eval';" in policy, (url, policy)
        assert "style-src 'self';" in policy and "unsafe-inline" not in policy, (url, policy)
        assert response["X-Frame-Options"] == "DENY", url
        html = response.content.decode()
        assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == [] or all(
            'type="application/json"' in tag
            for tag in re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html)
        ), url  # data blocks only (json_script), never code
        assert "<style" not in html and ' style="' not in html, url
        assert re.findall(r'(?:src|href)="(?:https?:)?//', html) == [], url
    client.logout()
    login = client.get(reverse("admin:login"))
    assert "'unsafe-eval'" in login["Content-Security-Policy"]
    site = client.get("/accounts/login/")
    assert "unsafe" not in site["Content-Security-Policy"]


# Names as people say them: Django titles a model from its class name ("Api token").
MISSPELT = re.compile(r"\b(Api|Mcp|Oidc|Url|Sso|Csp|Json|Svg)\b")


def test_admin_pages_spell_names_as_people_say_them(admin_client, entry, make_token):
    from django.contrib import admin

    make_token()
    pages = [reverse("admin:index")]
    for model in admin.site._registry:
        meta = model._meta
        name = f"admin:{meta.app_label}_{meta.model_name}"
        pages.append(reverse(f"{name}_changelist"))
        first = model._default_manager.first()
        if first is not None:
            pages.append(reverse(f"{name}_change", args=[first.pk]))
    from knowledge.models import ApiToken

    token_page = reverse("admin:knowledge_apitoken_change", args=[ApiToken.objects.get().pk])
    assert token_page in pages and reverse("admin:knowledge_entry_change", args=[entry.pk]) in pages
    for page in pages:
        html = admin_client.get(page).content.decode()
        text = re.sub(r"<(script|style)\b.*?</\1>|<[^>]+>", " ", html, flags=re.S)
        assert MISSPELT.findall(text) == [], page
    tokens = admin_client.get(reverse("admin:knowledge_apitoken_changelist")).content.decode()
    assert "API tokens" in tokens
