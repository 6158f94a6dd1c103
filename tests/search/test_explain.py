"""Answers that say how they matched (issue 35): by words, by meaning or both, in which
observation or passage; a plain first line when no entry holds the query's words; an explain
mode showing each signal's part, over MCP, REST and the search page."""

from __future__ import annotations

import pytest
from django.test import Client

from knowledge.models import Membership, Role
from knowledge.search import explain_parts, no_words_note, search_entries
from mcp_api import tools
from tests.factories import EntryFactory

pytestmark = pytest.mark.django_db

# No entry below holds any of these words ("in" is a stop word): found by meaning only.
NO_WORDS = "vacation trip abroad in summer"


@pytest.fixture
def corpus(actor, project, index):
    entries = [
        EntryFactory(
            project=project,
            title="Deployment checklist",
            body="Run migrations, then restart the workers and watch the error rate.",
            subtopic="ops",
        ),
        EntryFactory(
            project=project,
            title="Holiday plans",
            body="Caroline is travelling to Sweden in July to see the midnight sun.",
            subtopic="people",
        ),
        EntryFactory(
            project=project,
            title="Storage choices",
            body="We looked at several stores over the spring.\n\n"
            "- [decision] Keep the job queue in Postgres, no extra broker\n"
            "- [fact] Backups run nightly",
            subtopic="ops",
        ),
    ]
    index(*entries)
    return {e.title: e for e in entries}


def test_a_query_no_entry_holds_says_so_and_every_hit_is_by_meaning(actor, corpus):
    found = search_entries(actor, NO_WORDS)
    assert found, "the paraphrase must still be found by meaning"
    assert found.words_matched is False
    assert all(h.matched == ["semantic"] for h in found)
    assert no_words_note(NO_WORDS, found) == (
        f"No entry contains {NO_WORDS!r}; {len(found)} related by meaning."
    )
    holiday = next(h for h in found if h.title == "Holiday plans")
    assert holiday.matched_in == ""  # one passage: the whole entry matched
    assert holiday.signals.words_rank is None and holiday.signals.meaning_rank >= 1
    assert holiday.signals.passage == 1


def test_a_hit_by_meaning_says_which_passage_matched(actor, project, index, settings):
    settings.CAIRN_CHUNK_WORDS, settings.CAIRN_CHUNK_OVERLAP = 30, 0
    kitchen = " ".join(["The kettle needs descaling and the fridge needs cleaning."] * 6)
    entry = EntryFactory(
        project=project,
        title="Notes",
        body=f"## Kitchen\n\n{kitchen}\n\n## Away\n\n"
        "Caroline is travelling to Sweden in July to see the midnight sun.",
    )
    index(entry)
    hit = search_entries(actor, NO_WORDS)[0]
    assert hit.title == "Notes" and hit.signals.passage > 1
    assert hit.matched_in == f"passage {hit.signals.passage} of {entry.chunks.count()}"
    assert "Caroline is travelling" in hit.snippet


def test_a_query_some_entry_holds_has_no_such_note(actor, corpus):
    found = search_entries(actor, "deployment checklist")
    assert found.words_matched is True and no_words_note("deployment checklist", found) == ""
    by_meaning = search_entries(actor, NO_WORDS, mode="semantic")
    assert by_meaning.words_matched is None and no_words_note(NO_WORDS, by_meaning) == ""
    assert dict(explain_parts(by_meaning[0]))["words"] == "off"
    by_words = search_entries(actor, "deployment checklist", mode="text")[0]
    assert dict(explain_parts(by_words))["meaning"] == "off"


def test_a_words_and_meaning_hit_says_both_and_explain_shows_each_signal(actor, corpus):
    hit = search_entries(actor, "deployment checklist")[0]
    assert hit.title == "Deployment checklist" and set(hit.matched) == {"text", "semantic"}
    s = hit.signals
    assert s.words_rank == 1 and s.words_score > 0 and s.meaning_rank >= 1
    assert 0 < s.similarity <= 1 and s.passage == 1
    assert s.title_words == ["Deployment", "checklist"]
    assert s.words_part > 0 and s.meaning_part > 0
    assert hit.score == pytest.approx(s.words_part + s.meaning_part, abs=1e-5)
    why = dict(explain_parts(hit))
    assert why["words"].startswith("#1, score ")
    assert why["meaning"].startswith(f"#{s.meaning_rank}, similarity ")
    assert why["title"].startswith("holds Deployment, checklist")
    assert why["recency"].startswith("not weighed")
    assert why["fused"] == f"{hit.score:.3g}"


def test_the_matching_observation_is_the_snippet(actor, corpus):
    hit = search_entries(actor, "postgres queue", mode="text")[0]
    assert hit.title == "Storage choices"
    assert hit.matched_in == "observation [decision]"
    assert hit.snippet.startswith("[decision] Keep the job **queue** in **Postgres**")
    assert hit.signals.observation.startswith("[decision] Keep the job queue")
    assert dict(explain_parts(hit))["observation"].startswith("[decision] Keep")


def test_a_query_naming_the_category_marks_it(actor, corpus):
    hit = search_entries(actor, "decision broker", mode="text")[0]
    assert hit.title == "Storage choices" and hit.signals.category is True
    assert "its category is a query word" in dict(explain_parts(hit))["observation"]


# --- MCP ---------------------------------------------------------------------------------------


def _mcp(actor, **arguments):
    result = tools.answer("search", actor, arguments)
    assert not result.is_error, result.content[0].text
    return result.content[0].text, result.structured_content


def test_mcp_says_first_that_no_entry_holds_the_words(actor, corpus):
    text, data = _mcp(actor, query=NO_WORDS)
    first = text.splitlines()[0]
    assert first.startswith(f"No entry contains {NO_WORDS!r};"), text
    assert first.endswith("related by meaning:")
    assert data["words_matched"] is False and data["note"].startswith("No entry contains")
    holiday = next(line for line in text.splitlines() if "Holiday plans" in line)
    assert holiday.endswith(" · by meaning")


def test_mcp_hits_say_how_they_matched_and_explain_shows_the_signals(actor, corpus):
    text, data = _mcp(actor, query="deployment checklist")
    lines = text.splitlines()
    # The other two are far under it in meaning: left out, and said so (issue 48).
    assert lines[0].startswith("1 result(s) for 'deployment checklist'"), text
    assert lines[-2].startswith("1 weaker match left out"), text
    assert "Deployment checklist" in lines[1] and lines[1].endswith(" · by words + meaning")
    assert data["words_matched"] is True and data["note"].startswith("1 weaker match left out")
    assert "signals" not in data["results"][0]  # only when asked
    assert "why:" not in text
    text, data = _mcp(actor, query="deployment checklist", explain=True)
    why = text.splitlines()[3]
    assert why.startswith("  why: words: #1, score "), text
    assert "· meaning: #" in why and "· title: holds Deployment, checklist" in why
    assert "· recency: not weighed" in why and "· fused: " in why
    assert data["results"][0]["signals"]["words_rank"] == 1


def test_mcp_shows_the_matching_observation(actor, corpus):
    text, _ = _mcp(actor, query="postgres queue")
    assert "[decision] Keep the job **queue** in **Postgres**" in text


# --- REST --------------------------------------------------------------------------------------


@pytest.fixture
def api(make_token, owner, project):
    Membership.objects.create(project=project, user=owner, role=Role.VIEWER)
    return Client(headers={"Authorization": f"Bearer {make_token(name='rest')}"})


def test_rest_says_no_words_matched_in_top_level_fields(api, corpus):
    body = api.get("/api/v1/search", {"q": NO_WORDS}).json()
    assert body["words_matched"] is False
    assert body["note"].startswith(f"No entry contains {NO_WORDS!r};")
    assert body["results"] and all(h["matched"] == ["semantic"] for h in body["results"])
    body = api.get("/api/v1/search", {"q": "deployment checklist"}).json()
    assert body["words_matched"] is True and body["left_out"] == 1
    assert body["note"] == (
        "1 weaker match left out (only common words of the query, or further in meaning); "
        "weak=true lists them."
    )
    body = api.get("/api/v1/search", {"q": "deployment checklist", "weak": "true"}).json()
    assert len(body["results"]) == 3 and body["left_out"] == 0 and body["note"] == ""


def test_rest_explain_adds_each_hits_signals(api, corpus):
    plain = api.get("/api/v1/search", {"q": "deployment checklist"}).json()["results"][0]
    assert plain["signals"] is None and set(plain["matched"]) == {"text", "semantic"}
    hit = api.get("/api/v1/search", {"q": "deployment checklist", "explain": "true"}).json()[
        "results"
    ][0]
    assert hit["signals"]["words_rank"] == 1 and hit["signals"]["meaning_rank"] >= 1
    assert hit["signals"]["title_words"] == ["Deployment", "checklist"]
    assert hit["signals"]["words_part"] + hit["signals"]["meaning_part"] == pytest.approx(
        hit["score"], abs=1e-5
    )


# --- the search page ---------------------------------------------------------------------------


@pytest.fixture
def signed_in(client, user, project):
    client.force_login(user)
    return client


def test_the_page_says_first_that_no_entry_holds_the_words(signed_in, corpus):
    page = signed_in.get("/search/", {"q": NO_WORDS}).content.decode()
    note = page.index("No entry contains")
    assert note < page.index('class="results"') and note < page.index("Holiday plans")
    assert "by meaning" in page


def test_the_page_says_how_each_hit_matched_and_explains_on_request(signed_in, corpus):
    page = signed_in.get("/search/", {"q": "deployment checklist"}).content.decode()
    assert "words + meaning" in page and "No entry contains" not in page
    assert "similarity" not in page
    page = signed_in.get("/search/", {"q": "deployment checklist", "explain": "on"}).content
    page = page.decode()
    assert 'name="explain" checked' in page
    assert "similarity" in page and "<b>words</b> #1, score" in page and "<b>fused</b>" in page
