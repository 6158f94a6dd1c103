"""`make mutants` stays pointed at the code: the functions pyproject.toml [tool.cairn.mutants]
names exist, once each, in the modules mutmut is told to mutate (only_mutate, the same list);
its tests exist; and each survivor docs/developers/mutants.md explains is a mutant of a listed
function. A function that moves or is renamed fails here, not in a half-hour run."""

from __future__ import annotations

import importlib
import inspect

import pytest

from tests.mutation.report import explained
from tests.mutation.scope import GUARANTEES, ONLY_MUTATE, ROOT, function_of, functions, globs

FUNCTIONS = [f for g in GUARANTEES for f in g.functions]


def test_every_listed_function_exists_once():
    missing = []
    for function in FUNCTIONS:
        module, name = function.rsplit(".", 1)
        if not inspect.isfunction(getattr(importlib.import_module(module), name, None)):
            missing.append(function)
    assert missing == []
    assert len(FUNCTIONS) == len(set(FUNCTIONS))


def test_only_mutate_names_the_modules_of_the_listed_functions():
    modules = {f.rsplit(".", 1)[0].replace(".", "/") + ".py" for f in FUNCTIONS}
    assert sorted(ONLY_MUTATE) == sorted(modules)


def test_every_judging_test_exists():
    paths = {t.split("::")[0] for g in GUARANTEES for t in g.tests}
    assert sorted(p for p in paths if not (ROOT / p).is_file()) == []


def test_every_explained_survivor_is_a_mutant_of_a_listed_function():
    stray = sorted(n for n in explained() if function_of(n) not in FUNCTIONS)
    assert stray == [], f"explained in docs/developers/mutants.md, but not mutated: {stray}"


def test_only_narrows_the_run_to_the_parts_it_names():
    bounds = next(g for g in GUARANTEES if g.name == "bounds")
    assert functions(["bounds"]) == list(bounds.functions)
    assert functions(["knowledge.markdown"]) == [
        f for f in FUNCTIONS if f.startswith("knowledge.markdown.")
    ]
    assert globs(["knowledge.markdown.first_h1"]) == ["knowledge.markdown.x_first_h1__mutmut_*"]
    assert functions() == FUNCTIONS
    with pytest.raises(SystemExit, match="names no guarantee"):  # not a silent whole run
        functions(["knowledge.nowhere"])
