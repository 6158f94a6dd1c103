"""What `make mutants` tests, read from pyproject.toml [tool.cairn.mutants] in one place: per
guarantee, the functions that keep it (`module.function`) and the tests that judge their mutants
(a test file, or a node id or the start of one).

`python -m tests.mutation.scope` prints the mutmut names of those functions' mutants (globs),
which `make mutants` hands to `mutmut run`.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Guarantee:
    name: str
    functions: tuple[str, ...]
    tests: tuple[str, ...]


GUARANTEES = [
    Guarantee(name, tuple(table["functions"]), tuple(table["tests"]))
    for name, table in PYPROJECT["tool"]["cairn"]["mutants"].items()
]
ONLY_MUTATE = PYPROJECT["tool"]["mutmut"]["only_mutate"]


def mutmut_name(function: str) -> str:
    """mutmut's name of a function (`knowledge.markdown.x_parse_heading`)."""
    module, name = function.rsplit(".", 1)
    return f"{module}.x_{name}"


def function_of(mutant: str) -> str:
    """`knowledge.markdown.parse_heading` for `knowledge.markdown.x_parse_heading__mutmut_3`."""
    module, name = mutant.split("__mutmut_")[0].rsplit(".", 1)
    return f"{module}.{name.removeprefix('x_')}"


def globs() -> list[str]:
    """The mutants to run, as `mutmut run` takes them."""
    return [f"{mutmut_name(f)}__mutmut_*" for g in GUARANTEES for f in g.functions]


def in_scope(mutant: str) -> bool:
    return any(fnmatch.fnmatchcase(mutant, g) for g in globs())


def guarantee_of(mutant: str) -> Guarantee | None:
    function = function_of(mutant)
    return next((g for g in GUARANTEES if function in g.functions), None)


def tests_for(mutant: str | None) -> tuple[str, ...]:
    """The tests that judge `mutant` (every guarantee's, for None: a run of no one mutant)."""
    if mutant is None:
        return tuple(dict.fromkeys(t for g in GUARANTEES for t in g.tests))
    guarantee = guarantee_of(mutant)
    return guarantee.tests if guarantee else ()


if __name__ == "__main__":
    print(" ".join(globs()))
