"""Rule 13: `knowledge/` is built in floors. Each module imports only its own floor or the floors
below it, and on a floor between the ground and the top only its own package: search and the
graph stand side by side on the entity reads and never lean on each other; the reads shaped for
one caller (knowledge.reads) stand on all of them, and only the writes and the app's own surfaces
stand on those."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.source import ROOT, module_name, python_files, report, write_sample
from tests.architecture.test_module_graph import _import_graph

GROUND, DB, ACCESS, ENTITIES, SEARCH_GRAPH, NOTE_TYPES, READS, TOP = range(8)
NAMES = ("ground: values and models", "data access", "the access rule", "entity reads",
         "search and graph", "note-type reads", "reads for one caller",
         "writes and the app's surfaces")  # fmt: skip

# The longest dotted prefix names a module's floor.
FLOORS = {
    # ground: values, models and pure functions, which read and write no data
    "knowledge.models": GROUND, "knowledge.actors": GROUND, "knowledge.errors": GROUND,
    "knowledge.inputs": GROUND, "knowledge.limits": GROUND, "knowledge.paths": GROUND,
    "knowledge.markdown": GROUND, "knowledge.diffs": GROUND, "knowledge.merges": GROUND,
    "knowledge.rendering": GROUND, "knowledge.safe_yaml": GROUND,
    "knowledge.write_result": GROUND, "knowledge.runs": GROUND, "knowledge.records": GROUND,
    "knowledge.graph.parsing": GROUND,
    "knowledge.note_types": GROUND,  # the schema language: picoschema, validation, inference, cache
    "knowledge.db": DB,
    "knowledge.access": ACCESS,
    "knowledge.selectors": ENTITIES,
    "knowledge.search": SEARCH_GRAPH, "knowledge.graph": SEARCH_GRAPH,
    "knowledge.note_types.lookup": NOTE_TYPES, "knowledge.note_types.stored_facts": NOTE_TYPES,
    "knowledge.note_types.targets": NOTE_TYPES, "knowledge.note_types.reads": NOTE_TYPES,
    "knowledge.reads": READS,
    "knowledge.services": TOP, "knowledge.tasks": TOP, "knowledge.admin": TOP,
    "knowledge.management": TOP, "knowledge.templatetags": TOP, "knowledge.apps": TOP,
}  # fmt: skip
RULE_13 = (
    "rule 13: knowledge/ is built in floors (tests/architecture/test_floors.py FLOORS): a module "
    "imports its own package or the floors below it; give a new module the floor of what it is"
)


def floor(module: str) -> int | None:
    best = None
    for prefix in FLOORS:
        if (module == prefix or module.startswith(f"{prefix}.")) and (
            best is None or len(prefix) > len(best)
        ):
            best = prefix
    return None if best is None else FLOORS[best]


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def floor_offences(root: Path = ROOT) -> list[str]:
    files = python_files("knowledge/**/*.py", root=root)
    graph = _import_graph(files, root)
    offenders = [
        f"{module}: give it a floor"
        for module in sorted(graph)
        if module != "knowledge" and floor(module) is None
    ]
    for module, edges in sorted(graph.items()):
        mine = floor(module)
        if mine is None:
            continue
        for target, where in sorted(edges.items()):
            theirs = floor(target)
            if theirs is None:
                continue
            if theirs > mine:
                why = "a floor above"
            elif (
                theirs == mine
                and mine not in (GROUND, TOP)
                and _package(module) != _package(target)
            ):
                why = "a sibling on its floor"
            else:
                continue
            offenders += [
                f"{at} ({NAMES[mine]}) imports {target} ({NAMES[theirs]}, {why})" for at in where
            ]
    return offenders


def test_rule_13_knowledge_is_built_in_floors():
    offenders = floor_offences()
    assert offenders == [], report(RULE_13, offenders)


def test_every_floor_prefix_names_code_that_exists():
    modules = {module_name(p) for p in python_files("knowledge/**/*.py")}
    stale = [
        prefix
        for prefix in FLOORS
        if not any(m == prefix or m.startswith(f"{prefix}.") for m in modules)
    ]
    assert stale == [], f"FLOORS names modules that are gone: {stale}"


# --- the check can fail ---------------------------------------------------------------------------


def test_the_floor_check_catches_a_floor_above_a_sibling_and_a_module_without_one(tmp_path):
    write_sample(
        tmp_path, "knowledge/selectors/entries.py", "from knowledge.search.scope import x\n"
    )
    write_sample(tmp_path, "knowledge/search/scope.py", "from knowledge.graph.selectors import y\n")
    write_sample(tmp_path, "knowledge/graph/selectors.py", "from knowledge.selectors import z\n")
    write_sample(tmp_path, "knowledge/reads/pages.py", "from knowledge.search.scope import x\n")
    write_sample(tmp_path, "knowledge/elsewhere.py", "")
    assert floor_offences(tmp_path) == [
        "knowledge.elsewhere: give it a floor",
        "knowledge/search/scope.py:1 (search and graph) imports knowledge.graph.selectors "
        "(search and graph, a sibling on its floor)",
        "knowledge/selectors/entries.py:1 (entity reads) imports knowledge.search.scope "
        "(search and graph, a floor above)",
    ]
