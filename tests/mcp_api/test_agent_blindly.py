"""Issue 48, scripted over the official MCP client: answers an agent can follow blindly.

A held-out session found answers that misled: a stale append was refused and told to replace
the other writer's line with nothing; a link to an entry the agent could read in another project
stayed "waiting", and so did the server's own memory:// address; a search said "6 result(s)"
when no entry held the words asked for. Each case is done here as an agent would do it, taking
the answer at its word.
"""

import ast
import re

import pytest

from knowledge.actors import Actor
from knowledge.models import Entry, Membership, Role
from knowledge.services import EntryFields, entry_upsert
from knowledge.services.embeddings import entries_embed, lexeme_stats_refresh
from tests.factories import EntryFactory, ProjectFactory, UserFactory
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")

ONBOARDING = """\
# Onboarding

Steps for new people.

## Accounts

- Laptop from IT
- Email account
- VPN access"""  # no newline at the end: the append the session saw


@pytest.fixture
def sam(make_token):
    return make_token(name="sam", agent_label="agent:sam")


def _printed_calls(answer: str) -> list[tuple[str, dict]]:
    """Every `tool("id", key=value, …)` call an answer prints, read the way an agent sends it:
    a placeholder's example (`<what it should say, e.g. "x">`) taken as the value."""
    calls = []
    for found in re.finditer(r'\b(edit|update|upsert)\("[^"]+".*?\)(?=[.;]( |$))', answer, re.M):
        printed = re.sub(r"<[^<>]*?e\.g\. (.*?)>(?=[,)])", r"\1", found.group(0))
        try:
            node = ast.parse(printed, mode="eval").body
        except SyntaxError:  # a call with a placeholder (<…>) is no call to send as it is
            continue
        args = {"id": ast.literal_eval(node.args[0])}
        calls.append(
            (node.func.id, args | {k.arg: ast.literal_eval(k.value) for k in node.keywords})
        )
    return calls


def test_a_stale_append_under_a_heading_applies_on_the_current_version(call, sam):
    made = call("upsert", project="acme", title="Onboarding", body=ONBOARDING)
    ref = made.structured_content["entry"]["short_id"]
    theirs = call("edit", sam, id=ref, operation="find_replace", find="- VPN access",
                  content="- VPN access (WireGuard)")  # fmt: skip
    assert not theirs.is_error, text(theirs)

    res = call("edit", id=ref, operation="append", section="Accounts",
               content="- Badge for the office", expected_version=1)  # fmt: skip
    answer = text(res)
    assert not res.is_error, answer
    assert "Applied on version 2" in answer and "you read version 1" in answer
    assert "agent:sam" in answer  # who changed it since
    assert "+1 -0 lines" in answer
    assert res.structured_content["applied_on"]["version"] == 2
    body = Entry.objects.get(short_id=ref).body
    assert "- VPN access (WireGuard)\n- Badge for the office" in body  # one list, theirs kept


def test_a_stale_plain_append_and_prepend_apply(call, sam):
    ref = call("upsert", project="acme", title="Onboarding", body=ONBOARDING)
    ref = ref.structured_content["entry"]["short_id"]
    call("edit", sam, id=ref, operation="find_replace", find="# Onboarding", content="# Onboard")
    call("edit", sam, id=ref, operation="find_replace", find="- VPN access", content="- VPN")
    res = call("edit", id=ref, operation="append", content="- Desk", expected_version=1)
    assert not res.is_error, text(res)
    res = call("edit", id=ref, operation="prepend", content="Owner: IT", expected_version=1)
    assert not res.is_error, text(res)
    assert "Applied on version 4" in text(res)
    body = Entry.objects.get(short_id=ref).body
    assert body.startswith("Owner: IT\n\n# Onboard\n") and body.endswith("- VPN\n- Desk\n")


def test_a_stale_update_of_other_fields_applies_and_keeps_theirs(call, sam):
    ref = call("upsert", project="acme", title="Onboarding", body=ONBOARDING)
    ref = ref.structured_content["entry"]["short_id"]
    call("update", sam, id=ref, tags=["people"])
    res = call("update", id=ref, status="resolved", expected_version=1)
    assert not res.is_error, text(res)
    assert "Applied on version 2" in text(res)
    entry = Entry.objects.get(short_id=ref)
    assert (entry.tags, entry.status) == (["people"], "resolved")


@pytest.mark.parametrize("mine", ["- VPN access (OpenVPN)", ""])
def test_a_real_overlap_shows_both_sides_and_offers_only_calls_that_keep_theirs(call, sam, mine):
    ref = call("upsert", project="acme", title="Onboarding", body=ONBOARDING)
    ref = ref.structured_content["entry"]["short_id"]
    call("edit", sam, id=ref, operation="find_replace", find="- VPN access",
         content="- VPN access (WireGuard)")  # fmt: skip
    res = call("edit", id=ref, operation="find_replace", find="- VPN access", content=mine,
               expected_version=1)  # fmt: skip
    answer = text(res)
    assert res.is_error and "theirs '- VPN access (WireGuard)'" in answer, answer
    assert f"yours {mine!r}" in answer
    printed = _printed_calls(answer)
    assert len(printed) == (1 if mine else 0), answer  # keep both; nothing to add for a removal
    for tool, args in printed:
        done = call(tool, **args)
        assert not done.is_error, text(done)
        assert "- VPN access (WireGuard)" in Entry.objects.get(short_id=ref).body, (tool, args)
        assert mine in Entry.objects.get(short_id=ref).body


def _platform(owner, title: str | None = None):
    """Another project the agent reads (but may not write), and an entry its lead wrote there."""
    project = ProjectFactory(slug="platform", name="Platform")
    Membership.objects.create(project=project, user=owner, role=Role.VIEWER)
    lead = UserFactory(username="lead")
    Membership.objects.create(project=project, user=lead, role=Role.MAINTAINER)
    return lambda title, **place: (
        entry_upsert(
            actor=Actor.for_user(lead),
            project="platform",
            fields=EntryFields(title=title, body="Runs the platform team.", kind="person"),
            **place,
        ).entry
    )


@pytest.fixture
def platform(owner):
    return _platform(owner)("Priya Natarajan", subtopic="people")


def test_links_resolve_by_title_and_address_across_the_projects_the_writer_reads(
    call, platform, owner
):
    found = call("search", query="Priya Natarajan").structured_content["results"]
    assert found[0]["short_id"] == platform.short_id  # the agent can see her
    body = (
        "- works_with [[Priya Natarajan]]\n"
        f"- reports_to [[{found[0]['address']}]]\n"  # the address the server prints
        "- mentions [[Nobody Here]]\n"
    )
    res = call("upsert", project="acme", title="Launch plan", body=body)
    answer, relations = text(res), res.structured_content["report"]["relations"]
    assert found[0]["address"].startswith("memory://platform/people/")
    assert [r["resolved"] for r in relations] == [True, True, False], answer
    assert {r["entry"]["short_id"] for r in relations[:2]} == {platform.short_id}
    waiting = answer.split("[[Nobody Here]]")[1]  # the waiting link names the forms that resolve
    assert "[[Title]]" in waiting and "[[memory://project/path/slug]]" in waiting

    # A title in two other projects: it waits, and the answer lists both to pick from.
    second = ProjectFactory(slug="sales", name="Sales")
    Membership.objects.create(project=second, user=owner, role=Role.VIEWER)
    other = EntryFactory(project=second, title="Priya Natarajan", body="Account lead.")
    res = call("upsert", project="acme", title="Pick one", body="- with [[Priya Natarajan]]")
    rel = res.structured_content["report"]["relations"][0]
    assert rel["resolved"] is False
    assert {c["short_id"] for c in rel["candidates"]} == {platform.short_id, other.short_id}
    assert f"{other.short_id} [[memory://sales/priya-natarajan]]" in text(res), text(res)

    # The same title in the writer's own project comes first.
    own = call("upsert", project="acme", title="Priya Natarajan", body="Our contact.")
    again = call("edit", id="acme/launch-plan", operation="append",
                 content="- see [[Priya Natarajan]]")  # fmt: skip
    mine = again.structured_content["report"]["relations"][-1]
    assert mine["entry"]["short_id"] == own.structured_content["entry"]["short_id"]


def test_a_link_waiting_for_a_title_in_another_project_resolves_when_it_is_written(call, owner):
    write = _platform(owner)
    res = call("upsert", project="acme", title="Launch plan", body="- owner [[Priya Natarajan]]")
    assert res.structured_content["report"]["relations"][0]["resolved"] is False
    priya = write("Priya Natarajan")
    rel = call("get", id="acme/launch-plan").structured_content["relations"]["outgoing"][0]
    assert rel["entry"]["short_id"] == priya.short_id


def test_no_match_is_said_whenever_no_hit_holds_every_word_or_the_phrase(call):
    for title, body in (
        ("Code review checklist", "Every change gets a review before it ships."),
        ("Pricing tiers", "Three tiers; pricing is set by sales."),
        ("Quarterly goals", "Goals for each quarter: retention first."),
    ):
        assert not call("upsert", project="acme", title=title, body=body).is_error

    res = call("search", query="quarterly pricing review")
    answer, data = text(res), res.structured_content
    assert answer.startswith("No entry contains 'quarterly pricing review'; 3 hold some"), answer
    assert data["words_matched"] is False and data["results"]  # the partial hits come after
    res = call("search", query='"pricing review"')  # its words as words, said to be no match
    assert text(res).startswith("No entry contains '\"pricing review\"'; 2 hold some"), text(res)
    assert res.structured_content["words_matched"] is False
    res = call("search", query='"pricing is set"')  # a quoted phrase matches as a phrase
    assert [h["title"] for h in res.structured_content["results"]] == ["Pricing tiers"]
    assert res.structured_content["words_matched"] is True

    call("upsert", project="acme", title="Q3 review", body="The quarterly pricing review is May 4.")
    res = call("search", query="quarterly pricing review")
    assert res.structured_content["words_matched"] is True, text(res)
    # The three that hold one word each now fall below the floor, and the answer says so.
    assert text(res).startswith("1 result(s)"), text(res)
    assert "3 weaker matches left out" in text(res)
    assert res.structured_content["results"][0]["title"] == "Q3 review"


def test_the_texts_say_what_was_asked(call, sam, read_token, owner):
    write = _platform(owner)
    write("Priya Natarajan")
    call("upsert", sam, project="acme", title="Standup", body="Tuesdays at 10.")
    recent = text(call("recent"))
    assert "Standup · acme" in recent and "by agent:sam" in recent  # who wrote it

    checked = text(call("check_sources", sources=[{"kind": "email", "external_id": "m-1"}]))
    assert "logged in none of the projects you can see" in checked, checked

    fields = "```yaml\nrole: string, job title\nemployer?: Organization\n```"
    schema = call("upsert", project="acme", title="person", kind="schema", body=fields)
    assert "Parsed as the 'person' schema: 2 field(s), role, employer? (relation)" in text(schema)
    broken = call("upsert", project="acme", title="team", kind="schema", body="no fields here")
    assert broken.is_error and "```yaml block" in text(broken)  # refused, saying what to write

    me = text(call("whoami"))
    assert "You may write in: acme (maintainer)." in me, me  # platform is read only
    assert "You may write nowhere: this token only reads." in text(call("whoami", read_token))


# The held-out session's 13 entries, as far as its case needs them: the runbook that answers,
# two entries that share only the common word "data" with the question, and the rest.
RECOVERY_CORPUS = (
    ("Restore runbook", "After a database loss, restore the nightly backup. Recovery takes "
     "about 20 minutes; check the row counts afterwards."),
    ("Data retention", "Customer data is kept 90 days, then deleted."),
    ("Data warehouse", "Product data is exported nightly to the warehouse."),
    ("Data dictionary", "What each column of the data export means."),
    ("Standup", "Tuesdays at 10, fifteen minutes."),
    ("Pricing tiers", "Three tiers; pricing is set by sales."),
    ("Onboarding", "Laptop, email and VPN for new people."),
    ("On-call rota", "Two people each week; pages go to the phone."),
    ("Release checklist", "Tag, build, deploy to staging, then production."),
    ("Office", "Badge at the front desk; visitors sign in."),
    ("Vendor list", "Who we buy hosting and email from."),
    ("Travel policy", "Book trains over flights under four hours."),
    ("Team offsite", "Spring offsite in Lisbon, two days."),
)  # fmt: skip


def test_word_only_noise_falls_below_the_floor_and_the_answer_says_how_many(call):
    for title, body in RECOVERY_CORPUS:
        assert not call("upsert", project="acme", title=title, body=body).is_error
    # What the worker does within seconds of the writes: vectors, then the word counts.
    entries_embed(entry_ids=list(Entry.objects.values_list("pk", flat=True)))
    lexeme_stats_refresh()

    print(
        text(
            call("search", query="recovery time after data loss", explain=True, weak=True, limit=13)
        )
    )
    res = call("search", query="recovery time after data loss")
    answer, data = text(res), res.structured_content
    titles = [h["title"] for h in data["results"]]
    assert titles[0] == "Restore runbook", answer
    assert not {"Data retention", "Data warehouse"} & set(titles), answer  # only "data"
    assert titles == ["Restore runbook"], answer  # the rest are unrelated notes
    assert answer.splitlines()[-2] == (
        "6 weaker matches left out (only common words of the query, or further in meaning); "
        "weak=true lists them."
    )
    assert "6 weaker matches left out" in data["note"]
    res = call("search", query="recovery time after data loss", weak=True)
    titles = [h["title"] for h in res.structured_content["results"]]
    assert titles[0] == "Restore runbook" and "Data retention" in titles, text(res)
    assert len(titles) == 10 and "left out" not in text(res)  # the limit, as before


def test_sizes_show_in_browse_recent_and_search_and_browse_sorts_by_them(call):
    runbook = "# Restore\n\n" + "\n".join(f"- step {i}: restore shard {i}" for i in range(40))
    call("upsert", project="acme", title="Restore runbook", body=runbook)
    call("upsert", project="acme", title="Agenda", body="Tuesdays at 10.")
    size = f"{len(runbook):,} chars, 42 lines"  # heading, blank line, 40 steps

    browse = call("browse", project="acme")  # by title
    assert f"Restore runbook · {size}" in text(browse), text(browse)
    assert "Agenda · 15 chars, 1 line" in text(browse)
    titles = [e["title"] for e in browse.structured_content["entries"]]
    assert titles == ["Agenda", "Restore runbook"]
    by_size = call("browse", project="acme", sort="size")  # largest first
    titles = [e["title"] for e in by_size.structured_content["entries"]]
    assert titles == ["Restore runbook", "Agenda"], text(by_size)
    assert by_size.structured_content["entries"][0]["lines"] == 42
    assert size in text(call("recent"))
    hit = call("search", query="restore shard").structured_content["results"][0]
    assert (hit["chars"], hit["lines"]) == (len(runbook), 42)
    assert size in text(call("search", query="restore shard"))


def test_build_context_on_a_glob_shows_the_links_among_the_matched_entries(call):
    call("upsert", project="acme", subtopic="launch", title="Launch plan",
         body="- owned_by [[Priya]]\n- depends_on [[Release checklist]]")  # fmt: skip
    call("upsert", project="acme", subtopic="launch", title="Priya", body="Runs the launch.")
    call("upsert", project="acme", subtopic="launch", title="Release checklist", body="Tag.")

    res = call("build_context", id="memory://acme/launch/*")
    answer, links = text(res), res.structured_content["links"]
    assert "No related entries." not in answer, answer
    assert "Links among them (2):" in answer
    plan = next(
        e["short_id"] for e in res.structured_content["primary"] if e["title"] == "Launch plan"
    )
    assert f"- {plan} 'Launch plan' owned_by → " in answer and "'Priya'" in answer
    assert [(link["source_title"], link["type"], link["target_title"]) for link in links] == [
        ("Launch plan", "owned_by", "Priya"),
        ("Launch plan", "depends_on", "Release checklist"),
    ]
    assert "No other related entries." in answer  # nothing outside the glob links in


def test_a_writes_text_shows_the_sources_it_stored(call):
    mail = {"kind": "email", "external_id": "m-1", "url": "https://mail.example/m-1",
            "title": "Renewal terms"}  # fmt: skip
    res = call("upsert", project="acme", title="Renewal call", body="Call on May 4.",
               sources=[mail, {"kind": "ticket", "external_id": "T-9"}])  # fmt: skip
    assert (
        "Sources recorded: email:m-1 'Renewal terms' <https://mail.example/m-1>; ticket:T-9."
        in text(res)
    ), text(res)
    report = res.structured_content["report"]
    assert report["sources"][0]["url"] == "https://mail.example/m-1"
    assert report["sources_total"] == 2
    # A later write adds to them: the answer says what it added and how many the entry holds.
    res = call("upsert", project="acme", title="Renewal call", body="Call on May 5.",
               sources=[{"kind": "chat", "external_id": "c-2"}])  # fmt: skip
    assert "Sources recorded: chat:c-2. The entry holds 3 sources; get() lists them." in text(
        res
    ), text(res)
    assert len(call("get", id="acme/renewal-call").structured_content["entry"]["sources"]) == 3


def test_similarity_hints_need_close_bodies_and_never_propose_a_delete(call):
    meeting = "- [decision] Ship the pricing page on Friday\n- [action] Ana drafts the FAQ"
    call("upsert", project="acme", title="2026-05-04 pricing sync notes", body=meeting)
    # Shares the date and two title words, says something else: no hint.
    summary = call("upsert", project="acme", title="2026-05-04 session summary notes",
                   body="Refactored the importer; tests pass; next: the retry queue.")  # fmt: skip
    assert summary.structured_content["report"]["similar"] == [], text(summary)
    assert "Similar" not in text(summary)

    again = call("upsert", project="acme", title="Pricing sync notes 2026-05-04",
                 body=meeting.replace("Friday", "Friday 4 pm"))  # fmt: skip
    answer = text(again)
    similar = again.structured_content["report"]["similar"]
    assert [s["title"] for s in similar] == ["2026-05-04 pricing sync notes"], answer
    assert "bodies share" in similar[0]["why"]
    assert "delete(" not in answer and "Similar entries exist" in answer
    printed = _printed_calls(answer)
    assert printed, answer  # a call to send as it is: link the two
    before = {e.pk: e.body for e in Entry.objects.all()}
    for tool, args in printed:
        assert not call(tool, **args).is_error
    for pk, body in before.items():  # no text lost anywhere
        assert body in Entry.objects.get(pk=pk).body
    new = Entry.objects.get(short_id=again.structured_content["entry"]["short_id"])
    assert new.body.endswith("- same_as [[2026-05-04 pricing sync notes]]\n"), new.body
