"""The Markdown graph parser: examples of each form, and properties over arbitrary text."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.graph.parsing import (
    LINKS_TO,
    MAX_CATEGORY,
    TASK_MARKS,
    parse,
    relation_type,
    split_link,
    targets,
)
from knowledge.paths import normalize_path


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


# The patterns the linear parser replaced, on inputs short enough for them: the same answers.
_OLD_INLINE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_OLD_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_OLD_OBSERVATION = re.compile(r"^\[\s*([^\[\]]+?)\s*\](?!\()\s*(.*)$")
_OLD_CONTEXT = re.compile(r"\(([^()]*)\)\s*$")
_OLD_LINK = re.compile(r"\[\[([^\[\]\n]*?)\]\]")
_OLD_SEPARATORS = re.compile(r"\s*(?:/|>|\\|::)\s*")
_FENCE_START = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def _old_reading(line: str) -> tuple[list[str], tuple | None]:
    """A line's link targets, and its (category, text, context) before tags, the old way."""
    line = _OLD_INLINE.sub(lambda m: " " * len(m.group(0)), line)
    found = [t for t, _, _ in map(split_link, _OLD_LINK.findall(line)) if t]
    bullet = _OLD_BULLET.match(line)
    item = bullet.group(1).strip() if bullet else ""
    m = _OLD_OBSERVATION.match(item)
    if m is None or item.startswith("[["):
        return found, None
    rest, context = m.group(2).strip(), ""
    if (c := _OLD_CONTEXT.search(rest)) and c.start() > 0:
        context = " ".join(c.group(1).split())
        rest = rest[: c.start()].rstrip()
    return found, (" ".join(m.group(1).split()).lower()[:MAX_CATEGORY], rest, context)


def _outcome(fn, arg):
    try:
        return fn(arg)
    except Exception as exc:  # the message quotes the raw input, which differs here
        return type(exc)


_ATOMS = st.sampled_from(
    [*"`` x[]()#-*+|/&a\t>:\\", "[[", "]]", "- ", "- [", "\u00a0", "é", "(c)", "#t", "::"]
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_ATOMS, max_size=40).map("".join))
def test_the_linear_parser_agrees_with_the_old_patterns(line):
    found, old = _old_reading(line)
    if _FENCE_START.match(line):
        return  # a fence line: blanked before any pattern ran, then and now
    assert targets(line) == found
    observations = parse(line).observations
    if old is None or old[0] in TASK_MARKS:
        assert observations == []
    else:
        assert len(observations) == (1 if old[0] and old[1] else 0)
    if observations:
        (obs,) = observations
        assert (obs.category, obs.context) == (old[0], old[2])
        assert obs.tags or obs.content == " ".join(old[1].split())
    old_parts = "/".join(" ".join(p.split()) for p in _OLD_SEPARATORS.split(line))
    assert _outcome(normalize_path, line) == _outcome(normalize_path, old_parts)
