"""The pages for people, through Django's test client: every page, access, actions, manners."""

from __future__ import annotations

import pytest
from django.test import Client

from history import mirror
from knowledge.actors import Actor
from knowledge.models import Entry, Membership, Role, Sensitivity
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_correct,
    entry_update,
    entry_upsert,
    project_create,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BODY = """# Plan

Some **bold** text and a [link](https://example.org/x).

| a | b |
|---|---|
| 1 | 2 |

```python
def answer():
    return 42
```

- [ ] open task
- [x] done task

<script>alert("x")</script><img src="javascript:alert(1)" onerror="alert(2)">
"""


@pytest.fixture
def alice(client, user, project):
    client.force_login(user)
    return client


@pytest.fixture
def plan(actor, project):
    entry = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="ops/2026",
        fields=EntryFields(title="Launch plan", body=BODY, kind="decision", tags=["launch", "q3"]),
        sources=[{"kind": "url", "external_id": "s1", "url": "https://example.org/s1"}],
    ).entry
    return entry_update(
        actor=actor, ref=entry.pk, fields=EntryFields(body=BODY + "\nOne more line.\n")
    ).entry


@pytest.fixture
def hidden(db):
    root = UserFactory(username="root", is_superuser=True)
    owner = Actor.for_user(root)
    project_create(
        actor=owner,
        slug="vault",
        fields=ProjectFields(name="Vault", sensitivity=Sensitivity.RESTRICTED),
    )
    return entry_upsert(
        actor=owner, project="vault", fields=EntryFields(title="Hidden zebracorn", body="secret")
    ).entry


def html(response) -> str:
    return response.content.decode()


def test_anonymous_visitors_go_to_the_sign_in_page(client):
    for url in ("/", "/search/?q=x", "/p/acme/", "/e/abc/", "/graph/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")


def test_sign_in_lands_on_the_home_page(client, user, project):
    user.set_password("pw-long-enough-42")
    user.save()
    response = client.post("/accounts/login/", {"login": "alice", "password": "pw-long-enough-42"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert "Your memory" in html(client.get("/"))


def test_home_lists_visible_projects_recent_changes_and_open_items(alice, actor, plan, hidden):
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Call the vendor", body="x", status="open"),
    )
    page = html(alice.get("/"))
    assert "<title>Home · Cairn</title>" in page
    assert 'href="/p/acme/"' in page and "sens-internal" in page
    assert "2 entries" in page
    assert "Launch plan" in page and "Call the vendor" in page
    assert "vault" not in page.lower() and "zebracorn" not in page


def test_project_page_shows_the_tree_counts_and_the_entries_here(alice, actor, plan):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Top note", body="x"))
    page = html(alice.get("/p/acme/"))
    assert 'data-path="ops"' in page and 'data-path="ops/2026"' in page
    assert "Top note" in page and "Launch plan" not in page  # only entries directly here
    sub = html(alice.get("/p/acme/t/ops/2026/"))
    assert "Launch plan" in sub and "Top note" not in sub
    assert 'href="/p/acme/t/ops/"' in sub  # breadcrumbs
    assert "#launch" in sub and "decision" in sub


def test_unknown_pages_answer_404_in_the_site_style(alice, plan):
    for url in ("/p/acme/t/nope/", "/p/nope/", "/e/zzzzzzzz/", "/no/such/page/"):
        response = alice.get(url)
        assert response.status_code == 404, url
        assert "Not found" in html(response) and "Cairn" in html(response)


def test_entry_page_renders_sanitized_markdown_and_its_facts(alice, plan):
    response = alice.get(f"/e/{plan.short_id}/")
    page = html(response)
    assert response.status_code == 200
    assert "<strong>bold</strong>" in page and "<table>" in page
    assert 'class="highlight"' in page and '<span class="k">def</span>' in page
    assert 'type="checkbox" disabled=""' in page and 'checked=""' in page
    assert "<script>alert" not in page and "onerror" not in page and "javascript:" not in page
    assert f"memory://acme/ops/2026/{plan.slug}" in page
    assert "https://example.org/s1" in page and "decision" in page and "#launch" in page
    assert "Version</dt><dd>2" in page
    assert page.count('name="from"') == 2  # history with both revisions
    assert "/admin/knowledge/entry/" not in page  # alice is not staff


def test_entry_page_has_an_etag_and_answers_304_when_unchanged(alice, actor, plan):
    first = alice.get(f"/e/{plan.short_id}/")
    assert "private" in first["Cache-Control"] and "no-cache" in first["Cache-Control"]
    again = alice.get(f"/e/{plan.short_id}/", headers={"if-none-match": first["ETag"]})
    assert again.status_code == 304
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="changed"))
    after = alice.get(f"/e/{plan.short_id}/", headers={"if-none-match": first["ETag"]})
    assert after.status_code == 200 and "changed" in html(after)


def test_history_shows_the_commit_once_the_mirror_ran(alice, plan):
    mirror.drain()
    commit = plan.history.order_by("-history_id").first().git_commit
    assert commit and commit[:10] in html(alice.get(f"/e/{plan.short_id}/"))


def test_diff_between_two_versions_escapes_the_text(alice, actor, plan):
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="<b>bold</b> new\n"))
    page = html(alice.get(f"/e/{plan.short_id}/diff/?from=1&to=3"))
    assert '<span class="add">+&lt;b&gt;bold&lt;/b&gt; new</span>' in page
    assert '<span class="del">-' in page and "<b>bold</b>" not in page
    same = html(alice.get(f"/e/{plan.short_id}/diff/?from=2&to=2"))
    assert "read the same" in same
    assert alice.get(f"/e/{plan.short_id}/diff/?from=9").status_code == 404
    assert alice.get(f"/e/{plan.short_id}/diff/?from=x").status_code == 404


def test_a_person_verifies_from_the_page(alice, user, plan):
    response = alice.post(f"/e/{plan.short_id}/verify/", {"version": plan.version}, follow=True)
    entry = Entry.objects.get(pk=plan.pk)
    assert entry.verified_by == user and entry.version == plan.version
    assert "Verified version 2" in html(response) and "✓ verified" in html(response)


def test_a_stale_page_does_not_verify(alice, actor, plan):
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="newer"))
    response = alice.post(f"/e/{plan.short_id}/verify/", {"version": 2}, follow=True)
    assert "changed since version 2" in html(response)
    assert Entry.objects.get(pk=plan.pk).verified_at is None


def test_set_status_from_the_page(alice, plan):
    alice.post(f"/e/{plan.short_id}/status/", {"status": "open", "version": 2})
    assert Entry.objects.get(pk=plan.pk).status == "open"
    bad = alice.post(f"/e/{plan.short_id}/status/", {"status": "nonsense"}, follow=True)
    assert "nonsense" in html(bad) and Entry.objects.get(pk=plan.pk).status == "open"


def test_a_viewer_reads_but_cannot_verify_or_change(plan, project):
    viewer = UserFactory(username="vic")
    Membership.objects.create(project=project, user=viewer, role=Role.VIEWER)
    client = Client()
    client.force_login(viewer)
    page = html(client.get(f"/e/{plan.short_id}/"))
    assert "Launch plan" in page and "/verify/" not in page  # no action forms
    refused = client.post(f"/e/{plan.short_id}/verify/", {"version": 2})
    assert refused.status_code == 403 and "editor role" in html(refused)
    client.post(f"/e/{plan.short_id}/status/", {"status": "open", "version": 2})
    entry = Entry.objects.get(pk=plan.pk)
    assert entry.verified_at is None and entry.status == "active"


def test_actions_need_post(alice, plan):
    assert alice.get(f"/e/{plan.short_id}/verify/").status_code == 405


def test_hidden_entries_answer_like_missing_ones(alice, hidden):
    missing = alice.get("/e/zzzzzzzz/")
    hidden_page = alice.get(f"/e/{hidden.short_id}/")
    assert hidden_page.status_code == missing.status_code == 404
    assert "zebracorn" not in html(hidden_page).lower()
    assert alice.get("/p/vault/").status_code == 404


def test_superseded_links_both_ways(alice, actor, plan):
    new, old = entry_correct(actor=actor, ref=plan.pk, body="right", reason="was wrong")
    old_page = html(alice.get(f"/e/{old.short_id}/"))
    assert f'href="/e/{new.short_id}/"' in old_page and "Superseded by" in old_page
    assert f'href="/e/{old.short_id}/"' in html(alice.get(f"/e/{new.short_id}/"))


def test_search_page_finds_filters_and_highlights(alice, actor, plan, hidden):
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Budget", body="The launch budget is 5k."),
    )
    page = html(alice.get("/search/?q=launch"))
    assert "<title>launch · Search · Cairn</title>" in page
    assert "2 results" in page and "<mark>" in page
    assert f'href="/e/{plan.short_id}/"' in page
    narrowed = html(alice.get("/search/?q=launch&kind=decision"))
    assert "1 result " in narrowed and "Budget" not in narrowed
    none = html(alice.get("/search/?q=zebracorn"))
    assert "0 results" in none and "Hidden" not in none


def test_search_as_you_type_returns_only_the_results(alice, plan):
    response = alice.get("/search/?q=launch", headers={"HX-Request": "true"})
    page = html(response)
    assert "<html" not in page and "result" in page and "Launch plan" in page
    assert "HX-Request" in response["Vary"]


def test_search_says_what_is_wrong_with_a_filter(alice, plan):
    page = html(alice.get("/search/?q=launch&after=notadate"))
    assert 'role="alert"' in page and "after" in page
    unknown = html(alice.get("/search/?q=launch&project=nosuch"))
    assert "No project &#x27;nosuch&#x27;" in unknown and "0 results" not in unknown


def test_search_input_is_bounded(alice, plan):
    response = alice.get("/search/", {"q": "launch " * 400})
    assert response.status_code == 200


def test_graph_page_is_there_for_people(alice, project):
    page = html(alice.get("/graph/"))
    assert "<h1>Graph</h1>" in page and '<option value="acme">' in page
    assert 'id="graph"' in page and "/graph/data.json?project=&amp;around=" in page


def test_pages_load_no_asset_from_another_host(alice, plan):
    page = html(alice.get(f"/e/{plan.short_id}/"))
    for attr in ('src="http', 'src="//', 'href="//'):
        assert attr not in page
    assert "/static/web/vendor/htmx-2.0.11.min.js" in page


def test_static_assets_are_served(alice):
    from django.contrib.staticfiles import finders

    for name in ("web/cairn.css", "web/cairn.js", "web/vendor/htmx-2.0.11.min.js",
                 "web/vendor/cytoscape-3.34.4.min.js"):  # fmt: skip
        assert finders.find(name), name


# --- no N+1: a page costs the same number of queries for 3 entries as for 15 ---------------


def _fill(actor, start: int, stop: int) -> None:
    for i in range(start, stop):
        entry_upsert(
            actor=actor,
            project="acme",
            subtopic=f"area-{i % 3}/deep",
            fields=EntryFields(
                title=f"Note {i}",
                body=f"launch step {i}",
                tags=["t"],
                status="open" if i % 2 else "active",
            ),
            sources=[{"kind": "url", "external_id": f"u{i}", "url": f"https://example.org/{i}"}],
        )
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title=f"Top {i}", body="launch")
        )


def _queries(client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.parametrize(
    ("url", "most"),
    [
        ("/", 8),
        ("/p/acme/", 8),
        ("/p/acme/t/area-1/deep/", 8),
        ("/search/?q=launch&history=on", 14),
    ],
)
def test_list_pages_cost_a_constant_number_of_queries(alice, actor, url, most):
    _fill(actor, 0, 3)
    small = _queries(alice, url)
    _fill(actor, 3, 15)
    large = _queries(alice, url)
    assert large == small <= most, f"{url}: {small} queries for few entries, {large} for more"


def test_entry_page_costs_a_constant_number_of_queries(alice, actor, plan):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as before:
        alice.get(f"/e/{plan.short_id}/")
    for i in range(6):
        entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body=f"v{i}"))
    with CaptureQueriesContext(connection) as after:
        alice.get(f"/e/{plan.short_id}/")
    assert len(after) == len(before) <= 12


def test_graph_data_passes_bounded_arguments_to_the_selector(alice, plan, monkeypatch):
    from web import views

    calls = []
    real = views.graph_data

    def graph_data(actor, **kwargs):
        calls.append((actor.user.get_username(), *kwargs.values()))
        return real(actor, **kwargs)

    monkeypatch.setattr(views, "graph_data", graph_data)
    alice.get("/graph/data.json", {"project": "acme", "around": plan.short_id, "depth": "99"})
    alice.get("/graph/data.json", {"depth": "x"})
    assert calls == [("alice", "acme", plan.short_id, 3, 2000), ("alice", None, None, 1, 2000)]
    assert 'id="graph"' in html(alice.get("/graph/?project=acme"))
    assert "Graph around this entry" in html(alice.get(f"/e/{plan.short_id}/"))


# --- the graph: data for the page, relations on the entry page --------------------------------


@pytest.fixture
def linked(actor, project):
    """Storage ← Payments (depends_on) → a waiting link; Runbook links to Payments."""
    storage = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Storage Layer", body="Disks.")
    ).entry
    payments = entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(
            title="Payment service",
            body="Billing.\n\n- [decision] Use Postgres for the ledger #db (after the load test)\n"
            "- [risk] Vendor lock-in\n- [decision] Keep cards out of scope\n"
            "- depends_on [[Storage Layer]]\n- [[Not Written Yet]]\n",
        ),
    ).entry
    runbook = entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Runbook", body="See [[Payment service]]."),
    ).entry
    return {"storage": storage, "payments": payments, "runbook": runbook}


def test_graph_data_is_the_real_graph(alice, linked):
    data = alice.get("/graph/data.json", {"project": "acme"}).json()
    titles = {n["id"]: n["title"] for n in data["nodes"]}
    assert set(titles.values()) == {"Storage Layer", "Payment service", "Runbook"}
    edges = {(titles[e["source"]], titles[e["target"]], e["type"]) for e in data["edges"]}
    assert edges == {
        ("Payment service", "Storage Layer", "depends_on"),
        ("Runbook", "Payment service", "links_to"),
    }
    assert data["cut"] is False and data["limit"] == 2000
    degree = {n["title"]: n["degree"] for n in data["nodes"]}
    assert degree == {"Storage Layer": 1, "Payment service": 2, "Runbook": 1}
    around = alice.get("/graph/data.json", {"around": linked["storage"].short_id}).json()
    assert {n["title"] for n in around["nodes"]} == {"Storage Layer", "Payment service"}


def test_graph_data_says_what_is_wrong(alice, linked, hidden):
    answer = alice.get("/graph/data.json", {"project": "nope"})
    assert answer.status_code == 404 and "nope" in answer.json()["error"]
    answer = alice.get("/graph/data.json", {"around": hidden.short_id})
    assert answer.status_code == 404 and "zebracorn" not in answer.content.decode()


def test_graph_page_says_when_the_graph_is_cut(alice, linked, monkeypatch):
    from web import views

    monkeypatch.setattr(views, "GRAPH_LIMIT", 2)
    data = alice.get("/graph/data.json").json()
    assert data["cut"] is True and data["limit"] == 2 and len(data["nodes"]) == 2
    assert 'id="graph-cut"' in html(alice.get("/graph/"))


def test_entry_page_shows_observations_relations_and_backlinks(alice, linked):
    page = html(alice.get(f"/e/{linked['payments'].short_id}/"))
    observations = page[page.index('id="observations"') : page.index('id="relations"')]
    assert observations.index("decision") < observations.index("risk")
    assert "Use Postgres for the ledger" in observations and "#db" in observations
    assert "(after the load test)" in observations and "Keep cards out of scope" in observations
    relations = page[page.index('id="relations"') : page.index('id="backlinks"')]
    storage = linked["storage"].short_id
    assert f'href="/e/{storage}/">Storage Layer</a>' in relations and "depends_on" in relations
    assert '<span class="waiting"' in relations and "Not Written Yet" in relations
    backlinks = page[page.index('id="backlinks"') :]
    assert f'href="/e/{linked["runbook"].short_id}/">Runbook</a>' in backlinks


def test_entry_page_shows_only_current_facts(alice, actor, linked):
    entry_update(
        actor=actor, ref=linked["payments"].pk, fields=EntryFields(body="- [risk] Outages\n")
    )
    page = html(alice.get(f"/e/{linked['payments'].short_id}/"))
    assert "Outages" in page and "Use Postgres" not in page and 'id="relations"' not in page
    assert 'id="backlinks"' in page  # Runbook still links here
    page = html(alice.get(f"/e/{linked['storage'].short_id}/"))
    assert 'id="backlinks"' not in page


def test_a_new_backlink_changes_the_etag(alice, actor, linked):
    url = f"/e/{linked['storage'].short_id}/"
    etag = alice.get(url)["ETag"]
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Disk notes", body="[[Storage Layer]]"),
    )
    answer = alice.get(url, HTTP_IF_NONE_MATCH=etag)
    assert answer.status_code == 200 and "Disk notes" in html(answer)


def test_entry_page_relations_cost_a_constant_number_of_queries(alice, actor, linked):
    url = f"/e/{linked['payments'].short_id}/"
    few = _queries(alice, url)
    body = "".join(f"- [note] fact {i}\n- relates_to [[Link {i}]]\n" for i in range(12))
    for i in range(12):
        entry_upsert(
            actor=actor,
            project="acme",
            fields=EntryFields(title=f"Link {i}", body="[[Payment service]]"),
        )
    entry_update(actor=actor, ref=linked["payments"].pk, fields=EntryFields(body=body))
    page = html(alice.get(url))
    assert page.count('class="rel-type"') >= 24  # 12 links out, 13 back
    assert _queries(alice, url) == few <= 14


def test_the_entry_body_is_rendered_once_per_version(alice, actor, plan, monkeypatch):
    from django.core.cache import caches

    from knowledge import rendering

    for cache in caches.all():  # earlier tests may have rendered an entry with this id
        cache.clear()
    calls = []
    real = rendering.render_page_markdown
    monkeypatch.setattr(rendering, "render_page_markdown", lambda t: calls.append(t) or real(t))
    for _ in range(2):
        assert '<span class="k">def</span>' in html(alice.get(f"/e/{plan.short_id}/"))
    assert len(calls) == 1
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body="# Changed\n"))
    assert 'id="md-changed"' in html(alice.get(f"/e/{plan.short_id}/"))
    assert len(calls) == 2


def test_a_body_cannot_pose_as_the_page(alice, actor, plan):
    body = (
        '## History\n\n<span class="verified">✓ verified</span> '
        '<button type="button" class="copy" data-copy="#memory-url">Copy</button>\n\n'
        "![pixel](https://tracker.example/p.png)\n"
    )
    entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body=body))
    page = html(alice.get(f"/e/{plan.short_id}/"))
    assert page.count('id="history"') == 1 and 'id="md-history"' in page
    assert page.count('class="verified"') == 0 and page.count('class="copy"') == 1
    assert '<img src="https://tracker.example' not in page
    assert 'href="https://tracker.example/p.png"' in page


def test_entry_page_looks_the_entry_up_once(alice, plan):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert alice.get(f"/e/{plan.short_id}/").status_code == 200
    sql = [q["sql"] for q in captured]
    lookups = [q for q in sql if q.startswith('SELECT "knowledge_entry"."id"') and "LIMIT 1" in q]
    assert len(lookups) == 1, "\n".join(lookups)
    # 10: the entry once (it was twice), and its note type's schema once
    assert len(sql) == 10, "\n".join(sql)


@pytest.mark.parametrize(
    ("action", "data"), [("verify", {}), ("status", {"status": "open"})], ids=["verify", "status"]
)
def test_an_entry_action_looks_the_entry_up_once(alice, plan, action, data):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = alice.post(f"/e/{plan.short_id}/{action}/", {"version": plan.version, **data})
    assert response.status_code == 302 and response.url == f"/e/{plan.short_id}/"
    sql = [q["sql"] for q in captured]
    lookups = [q for q in sql if q.startswith('SELECT "knowledge_entry"."id"') and "LIMIT 1" in q]
    assert len(lookups) == 1 and "FOR UPDATE" in lookups[0], "\n".join(lookups)
