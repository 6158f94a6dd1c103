"""What `make mutants` tests, read from pyproject.toml [tool.cairn.mutants] in one place: per
guarantee, the functions that keep it (`module.function`) and the tests that judge their mutants
(a test file, or a node id or the start of one).

`python -m tests.mutation.scope [PART ...]` prints the mutmut names of those functions' mutants
(globs), which `make mutants` hands to `mutmut run`; a PART (`make mutants ONLY=...`) is a
guarantee's name or the start of a function's (`knowledge.markdown`), and narrows the run to it.
"""

from __future__ import annotations

import sys
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


def functions(only: list[str] | None = None) -> list[str]:
    """The listed functions, or those of the parts named in `only` (guarantees or the start of
    a function's name). A part that names nothing is a mistake, not an empty run."""
    listed = [(g.name, f) for g in GUARANTEES for f in g.functions]
    if not only:
        return [f for _, f in listed]
    unknown = [p for p in only if not any(p == g or f.startswith(p) for g, f in listed)]
    if unknown:
        names = ", ".join(g.name for g in GUARANTEES)
        raise SystemExit(
            f"ONLY={' '.join(unknown)} names no guarantee ({names}) and starts no listed "
            "function's name (pyproject.toml [tool.cairn.mutants])."
        )
    return [f for g, f in listed if any(p == g or f.startswith(p) for p in only)]


def globs(only: list[str] | None = None) -> list[str]:
    """The mutants to run, as `mutmut run` takes them."""
    return [f"{mutmut_name(f)}__mutmut_*" for f in functions(only)]


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
    print(" ".join(globs(sys.argv[1:])))
