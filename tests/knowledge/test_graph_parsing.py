"""The Markdown graph parser: examples of each form, and properties over arbitrary text."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.graph.parsing import LINKS_TO, parse, relation_type, targets


def test_observation_with_tags_and_context():
    (obs,) = parse("- [Decision]  Use Postgres  #DB #infra (after the load test)").observations
    assert (obs.category, obs.content, obs.tags, obs.context) == (
        "decision",
        "Use Postgres",
        ("db", "infra"),
        "after the load test",
    )


def test_star_and_plus_bullets_and_mixed_case_categories():
    graph = parse("* [IDEA] cache it\n+   [Idea]   batch it\n")
    assert [(o.category, o.content) for o in graph.observations] == [
        ("idea", "cache it"),
        ("idea", "batch it"),
    ]


def test_plain_bullets_task_items_and_links_are_no_observations():
    body = "- plain bullet\n- [ ] todo\n- [x] done\n- [a link](https://x.y)\n- [[Target]]\n"
    assert parse(body).observations == []


def test_typed_relation_bare_link_and_inline_links():
    graph = parse(
        "- Depends on [[Storage Layer]]\n- [[Bare]]\nSee [[Other#Intro]] and [[Shown|the text]].\n"
    )
    assert [(r.type, r.target) for r in graph.relations] == [
        ("depends_on", "Storage Layer"),
        (LINKS_TO, "Bare"),
        (LINKS_TO, "Other"),
        (LINKS_TO, "Shown"),
    ]
    assert graph.relations[2].heading == "Intro"
    assert graph.relations[3].shown == "the text"


def test_cross_project_link_keeps_its_path():
    (rel,) = parse("- implements [[infra/api/Auth Service]]").relations
    assert (rel.type, rel.target) == ("implements", "infra/api/Auth Service")


def test_nothing_in_code_counts():
    body = "```\n- [fact] hidden\n- uses [[In Fence]]\n```\n`[[Inline]]` and ~~~\n[[Real]]\n"
    graph = parse(body)
    assert graph.observations == []
    assert [r.target for r in graph.relations] == ["Real"]


def test_an_observation_may_carry_a_link():
    graph = parse("- [fact] Runs on [[Server A]] #ops")
    assert graph.observations[0].content == "Runs on [[Server A]]"
    assert [(r.type, r.target) for r in graph.relations] == [(LINKS_TO, "Server A")]


def test_relation_types_are_slugs():
    assert relation_type("  Part   OF ") == "part_of"
    assert relation_type("") == LINKS_TO


def test_a_target_is_listed_once_per_type():
    graph = parse("[[A]] [[a]] [[A|x]]\n- uses [[A]]\n")
    assert [(r.type, r.target) for r in graph.relations] == [("uses", "A")]


_name = st.text(
    alphabet=st.characters(blacklist_characters="[]|#\n\r`", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip())


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_parse_never_raises(text):
    graph = parse(text)
    assert all(o.category and o.category == o.category.lower() for o in graph.observations)
    assert all(r.target for r in graph.relations)


@settings(max_examples=300, deadline=None)
@given(
    prose=st.lists(st.text(alphabet=st.characters(blacklist_characters="[]`~"), max_size=40)),
    names=st.lists(_name, min_size=1, max_size=8),
    typed=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_parse_never_loses_a_link(prose, names, typed):
    lines = []
    for i, name in enumerate(names):
        lines.append(prose[i] if i < len(prose) else "")
        lines.append(f"- relates to [[{name}]]" if typed[i] else f"see [[{name}]] here")
    found = {r.target.lower() for r in parse("\n".join(lines)).relations}
    wanted = {" ".join(n.split()).lower() for n in names}
    assert wanted <= found
    assert {t.lower() for t in targets("\n".join(lines))} >= wanted


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500))
def test_links_inside_fences_never_count(text):
    fenced = "```\n" + re.sub(r"^(```|~~~)", "", text, flags=re.M) + "\n[[Fenced]]\n```\n"
    assert not any(r.target == "Fenced" for r in parse(fenced).relations)
