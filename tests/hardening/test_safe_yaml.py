"""The one YAML loader for text a caller wrote (knowledge.safe_yaml) builds nothing until the
text's shape passed: no anchor or alias, no nesting past the depth bound, no more values than
the node bound. Here where it lives; the pipelines (tests/hardening/test_pipelines_linear.py)
time it on the hostile shapes."""

import pytest
import yaml

from knowledge.safe_yaml import MAX_DEPTH, MAX_NODES, YamlRefused, load_yaml


def test_plain_yaml_loads():
    assert load_yaml("a: [1, 2]\nb: {c: x}\n") == {"a": [1, 2], "b": {"c": "x"}}


@pytest.mark.parametrize(
    "text", ["a: &x 1\nb: 2\n", "a: 1\nb: *x\n", "a: &x [1]\nb: *x\n", "- &x {k: v}\n"]
)
def test_anchors_and_aliases_are_refused(text):
    with pytest.raises(YamlRefused, match="anchors and aliases"):
        load_yaml(text)


def test_nesting_is_refused_past_the_depth_bound_and_loads_at_it():
    at = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert load_yaml(at) is not None
    with pytest.raises(YamlRefused, match=f"deeper than {MAX_DEPTH}"):
        load_yaml("[" + at + "]")
    siblings = "[" + ", ".join(["[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)] * 3) + "]"
    assert len(load_yaml(siblings)) == 3  # depth is counted down again as each list closes
    # One level closed, three opened: a level deeper than the bound, however it got there.
    deeper = "[" * (MAX_DEPTH - 2) + "[], [[[]]]" + "]" * (MAX_DEPTH - 2)
    with pytest.raises(YamlRefused, match="deeper"):
        load_yaml(deeper)


def test_values_are_refused_past_the_node_bound_and_load_at_it():
    at = "[" + ", ".join(["1"] * (MAX_NODES - 1)) + "]"  # the list itself is one node
    assert len(load_yaml(at)) == MAX_NODES - 1
    with pytest.raises(YamlRefused, match=f"more than {MAX_NODES:,} values"):
        load_yaml("[" + ", ".join(["1"] * MAX_NODES) + "]")


def test_the_bounds_can_be_narrowed():
    with pytest.raises(YamlRefused, match="deeper than 2"):
        load_yaml("[[[]]]", max_depth=2)
    with pytest.raises(YamlRefused, match="more than 2"):
        load_yaml("[1, 2]", max_nodes=2)


def test_a_refusal_is_a_yaml_error_with_a_problem():
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml("a: *x\n")
    assert caught.value.problem and caught.value.problem_mark is None
