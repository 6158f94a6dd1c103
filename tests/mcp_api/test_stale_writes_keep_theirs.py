"""No answer to a stale write removes text its caller did not write (issue 48).

Generated cases: an entry, another writer's change to it, then this writer's write that read the
first version (an append or prepend, with or without a section, a find_replace, a
replace_section, an update of fields, a whole body). Through the tools' own answers: the write
either applies (on the current version) or is refused; every call the refusal prints, sent as
printed (a placeholder's example taken as the value, as an agent that follows blindly would),
and the merged body it offers, sent as the body. After each, every line of the current text is
still there unless this writer's own write meant to remove it from the version it read.
"""

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.models import Entry
from knowledge.services import apply_edit
from mcp_api import tools
from tests.mcp_api.conftest import text
from tests.mcp_api.test_agent_blindly import _printed_calls

pytestmark = pytest.mark.usefixtures("acme")

# Lines no other line contains, so a find of one never matches inside another.
BASE = [f"- b{n:02}" for n in range(12)]
HEADINGS = ["## Alpha", "## Beta"]
_names = itertools.count()


@st.composite
def bodies(draw) -> list[str]:
    items = draw(st.lists(st.sampled_from(BASE), min_size=1, max_size=6, unique=True))
    cut = draw(st.integers(0, len(items)))
    lines = ["# Note", "", HEADINGS[0], "", *items[:cut], "", HEADINGS[1], "", *items[cut:]]
    return lines


@st.composite
def their_change(draw, lines: list[str]) -> list[str]:
    lines = list(lines)
    for n in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["replace", "insert", "delete", "append"]))
        if how == "replace":
            lines[at] = f"{lines[at]} t{n}" if lines[at] else f"- t{n} theirs"
        elif how == "insert":
            lines.insert(at, f"- t{n} theirs")
        elif how == "delete" and len(lines) > 1:
            del lines[at]
        else:
            lines.append(f"- t{n} theirs")
    return lines


@st.composite
def my_write(draw, lines: list[str]) -> tuple[str, dict]:
    kind = draw(st.sampled_from(["append", "prepend", "find_replace", "replace_section",
                                 "update", "body"]))  # fmt: skip
    mine = f"- m{draw(st.integers(0, 9))} mine"
    if kind in ("append", "prepend"):
        section = draw(st.sampled_from([None, "Alpha", "Beta"]))
        args = {"operation": kind, "content": mine} | ({"section": section} if section else {})
        return "edit", args
    if kind == "find_replace":
        find = draw(st.sampled_from([line for line in lines if line.startswith("- b")]))
        return "edit", {
            "operation": kind,
            "find": find,
            "content": draw(st.sampled_from([mine, ""])),
        }
    if kind == "replace_section":
        return "edit", {"operation": kind, "section": draw(st.sampled_from(["Alpha", "Beta"])),
                        "content": mine}  # fmt: skip
    if kind == "update":
        return "update", draw(st.sampled_from([{"status": "resolved"}, {"tags": ["mine"]},
                                               {"title": f"Mine {next(_names)}"}]))  # fmt: skip
    changed = list(lines)
    at = draw(st.integers(0, len(changed) - 1))
    changed[at] = draw(st.sampled_from([mine, ""]))
    return "upsert", {"body": "\n".join(changed)}


def _meant(base: str, tool: str, args: dict) -> str:
    """The body this writer's write makes of the version it read."""
    if tool == "edit":
        return apply_edit(base, **args)
    return args.get("body", base)


def _kept(required: Counter, body: str) -> Counter:
    """The required lines `body` no longer holds."""
    return required - Counter(line for line in body.split("\n") if line.strip())


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_answer_to_a_stale_write_removes_text_its_caller_did_not_write(owner, data):
    me, sam = Actor(user=owner, agent="agent:me"), Actor(user=owner, agent="agent:sam")
    base_lines = data.draw(bodies())
    base = "\n".join(base_lines) + "\n"
    title = f"Note {next(_names)}"
    made = tools.answer("upsert", me, {"project": "acme", "title": title, "body": base})
    ref = made.structured_content["entry"]["short_id"]
    theirs = "\n".join(data.draw(their_change(base_lines))) + "\n"
    other = tools.answer("upsert", sam, {"project": "acme", "title": title, "body": theirs})
    assert not other.is_error, text(other)
    # A change the text already reads as (a blank line the body's form drops) makes no version:
    # the write below would not be stale.
    assume(other.structured_content["outcome"] != "unchanged")
    tool, args = data.draw(my_write(base_lines))
    try:
        meant = _meant(base, tool, args)
    except ValidationFailed:  # it did not fit the version it read either
        meant = base
    # Every line of the current text stays, but for those this writer meant to remove.
    removed = Counter(base.split("\n")) - Counter(meant.split("\n"))
    required = Counter(line for line in theirs.split("\n") if line.strip()) - removed
    args = {"project": "acme", "title": title, **args} if tool == "upsert" else {"id": ref, **args}
    res = tools.answer(tool, me, {**args, "expected_version": 1})
    answer = text(res)
    assert not _kept(required, Entry.objects.get(short_id=ref).body), answer
    if not res.is_error:
        assert "Applied on version 2" in answer, answer
        return
    follow = _printed_calls(answer)
    error = res.structured_content["error"]
    if "merged_body" in error:
        follow.append(("upsert", {"project": "acme", "title": title, "body": error["merged_body"],
                                  "expected_version": error["current_version"]}))  # fmt: skip
    for name, call_args in follow:
        if name != "upsert":
            call_args = {"id": ref} | call_args
        tools.answer(name, me, call_args)
        body = Entry.objects.get(short_id=ref).body
        assert not _kept(required, body), (answer, name, call_args, body)
