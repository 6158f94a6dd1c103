"""The graph: the page and the data it draws (bounded, scoped, cut when too big), and an entry's
facts, relations and backlinks on its page."""

from __future__ import annotations

import pytest

from knowledge.services import EntryFields, entry_update, entry_upsert
from tests.web.pages.responses import html, queries

pytestmark = pytest.mark.django_db


def test_graph_page_is_there_for_people(alice, project):
    page = html(alice.get("/graph/"))
    assert "<h1>Graph</h1>" in page and '<option value="acme">' in page
    assert 'id="graph"' in page and "/graph/data.json?project=&amp;around=" in page


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
    few = queries(alice, url)
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
    assert queries(alice, url) == few <= 14
