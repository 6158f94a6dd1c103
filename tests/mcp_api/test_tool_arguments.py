"""Each tool's arguments are declared once, by its argument model: the handler takes the model,
tools/list publishes its schema, and the model hands the core its value objects."""

import datetime as dt
import inspect

import pytest
from pydantic import ValidationError

from knowledge.search import SearchFilters
from mcp_api.tools import TOOLS
from mcp_api.tools.search import SearchArguments
from mcp_api.tools.writes import UpdateArguments, UpsertArguments


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_a_handler_takes_the_actor_and_its_tools_argument_model(tool):
    params = list(inspect.signature(tool.handler, eval_str=True).parameters.values())
    assert [p.name for p in params] == ["actor", "args"]
    assert params[1].annotation is tool.arguments
    assert tool.description, "the handler's docstring is what the agent reads"


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_a_model_refuses_unknown_arguments(tool):
    with pytest.raises(ValidationError, match="extra"):
        tool.arguments.model_validate({"no_such_argument": 1})


def test_search_hands_over_search_filters_under_the_cores_names():
    args = SearchArguments.model_validate(
        {"since": "2026-01-02", "category": "Risk, cost", "kinds": "Decision", "tags": ["ops"]}
    )
    filters = SearchFilters.pick(dict(args))
    assert filters.after == dt.datetime(2026, 1, 2, tzinfo=filters.after.tzinfo)
    assert (filters.categories, filters.kinds, filters.tags) == (
        ("risk", "cost"),
        ("decision",),
        ("ops",),
    )
    published = SearchArguments.model_json_schema(by_alias=True)["properties"]
    assert {"since", "category"} <= set(published) and not {"after", "categories"} & set(published)


def test_upsert_keeps_the_tags_when_none_are_given_and_update_clears_them():
    upsert = UpsertArguments(project="acme", title="T", body="b", tags="")
    assert upsert.fields().tags is None
    assert UpsertArguments(
        project="acme", title="T", body="b", tags='["a", "b"]'
    ).fields().tags == [
        "a",
        "b",
    ]
    update = UpdateArguments(id=1, tags="", title="")
    assert update.fields().tags == [] and update.fields().title is None
    assert UpdateArguments(id=1).fields().given() == {}
