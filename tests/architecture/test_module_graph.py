"""Rule 8: no module of the apps is over 400 lines, and imports run one way: no circle of any
length between the apps, the packages (`knowledge.search`, `history.mirror`, …) nor the modules,
bench's included (an import inside a function counts). The circles
are found with Tarjan's algorithm and reported as the imports that make them."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tests.architecture.source import (
    APP_CODE,
    MAX_LINES,
    ROOT,
    app_code,
    imports_of,
    module_name,
    rel,
    report,
    write_sample,
)

# --- rule 8: small modules, imports run one way ---------------------------------------------------

BENCH = sorted(ROOT.glob("bench/**/*.py"))


def _too_long(path: Path, root: Path = ROOT) -> list[str]:
    lines = len(path.read_text().splitlines())
    if lines <= MAX_LINES:
        return []
    return [f"{rel(path, root)}:{MAX_LINES + 1} is past {MAX_LINES} lines ({lines})"]


Edges = dict[str, dict[str, list[str]]]  # node -> {node it imports: ["file:line", …]}


def _import_graph(files: list[Path], root: Path = ROOT) -> Edges:
    """module -> {our module it imports: [where]}; `from pkg import mod` counts as pkg.mod."""
    names = {module_name(p, root) for p in files}
    graph: Edges = {}
    for path in files:
        me = module_name(path, root)
        edges: dict[str, list[str]] = defaultdict(list)
        for imp in imports_of(path, root):
            targets = [f"{imp.module}.{n}" for n in imp.names if f"{imp.module}.{n}" in names]
            for target in targets or [imp.module]:
                if target in names and target != me:
                    edges[target].append(f"{rel(path, root)}:{imp.line}")
        graph[me] = dict(edges)
    return graph


def _app_graph(modules: Edges) -> Edges:
    """The same imports between top-level apps (knowledge, history, api, …)."""
    graph: Edges = defaultdict(lambda: defaultdict(list))
    for module, edges in modules.items():
        graph[module.split(".")[0]]  # every app is a node, also one that imports no other
        for target, where in edges.items():
            if target.split(".")[0] != module.split(".")[0]:
                graph[module.split(".")[0]][target.split(".")[0]] += where
    return {node: dict(edges) for node, edges in graph.items()}


def _package_graph(modules: Edges) -> Edges:
    """The same imports between packages: a module's first two name parts (knowledge.search,
    knowledge.access, history.mirror, bench.locomo)."""
    graph: Edges = defaultdict(lambda: defaultdict(list))
    for module, edges in modules.items():
        mine = ".".join(module.split(".")[:2])
        graph[mine]
        for target, where in edges.items():
            theirs = ".".join(target.split(".")[:2])
            if theirs != mine:
                graph[mine][theirs] += where
    return {node: dict(edges) for node, edges in graph.items()}


def _strongly_connected(graph: Edges) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the groups of nodes that reach each other (size > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def _circles(graph: Edges, what: str) -> list[str]:
    """Every circle as the imports that make it: for each group of `what`s that import each
    other, each arrow inside the group with every file and line behind it, the arrows with the
    fewest imports first (most often the one running the wrong way)."""
    found = []
    for group in _strongly_connected(graph):
        arrows = sorted(
            ((a, b, graph[a][b]) for a in group for b in graph[a] if b in group),
            key=lambda arrow: (len(arrow[2]), arrow[0], arrow[1]),
        )
        lines = [
            f"  {a} -> {b} ({len(where)} import{'s' * (len(where) > 1)}): " + ", ".join(where)
            for a, b, where in arrows
        ]
        found.append(f"{what}s {', '.join(group)} import each other:\n" + "\n".join(lines))
    return found


def test_rule_8_modules_stay_small_and_imports_run_one_way():
    modules = _import_graph(APP_CODE + BENCH)
    offenders = [hit for path in APP_CODE for hit in _too_long(path)]
    offenders += _circles(_app_graph(modules), "app") + _circles(_package_graph(modules), "package")
    offenders += _circles(modules, "module")
    assert offenders == [], report(
        "rule 8: a module past 400 lines becomes a package split by responsibility; imports run "
        "one way (move what both sides need into a module of its own, or have the upper one "
        "register itself with the lower one)",
        offenders,
    )


# --- the checks can fail --------------------------------------------------------------------------


def test_the_size_check_catches_a_long_module(tmp_path):
    engine = write_sample(tmp_path, "knowledge/search/engine.py", "x = 1\n")
    hits = write_sample(tmp_path, "knowledge/search/hits.py", "x = 1\n" * (MAX_LINES + 2))
    assert _too_long(hits, root=tmp_path) == [
        f"knowledge/search/hits.py:{MAX_LINES + 1} is past {MAX_LINES} lines ({MAX_LINES + 2})"
    ]
    assert _too_long(engine, root=tmp_path) == []


def test_the_circle_check_finds_circles_of_any_length_between_modules_and_apps(tmp_path):
    # three modules in a ring (one import inside a function), and a pair beside them
    write_sample(tmp_path, "knowledge/search/engine.py", "from knowledge.search.hits import load\n")
    write_sample(tmp_path, "knowledge/search/hits.py", "from knowledge.search import scope\n")
    write_sample(
        tmp_path, "knowledge/search/scope.py", "def f():\n    from knowledge.search import engine\n"
    )
    write_sample(tmp_path, "knowledge/search/fine.py", "from knowledge.search import engine\n")
    # two apps through a third: knowledge -> history -> api -> knowledge
    write_sample(
        tmp_path, "knowledge/admin/pages.py", "from history.selectors import revision_text\n"
    )
    write_sample(tmp_path, "history/selectors.py", "from api.site import api\n")
    write_sample(tmp_path, "api/site.py", "from knowledge.models import Entry\n")
    write_sample(tmp_path, "knowledge/models/__init__.py", "")
    write_sample(tmp_path, "ops/timing.py", "")
    modules = _import_graph(app_code(tmp_path), root=tmp_path)
    [ring] = _circles(modules, "module")
    assert ring == (
        "modules knowledge.search.engine, knowledge.search.hits, knowledge.search.scope import "
        "each other:\n"
        "  knowledge.search.engine -> knowledge.search.hits (1 import): "
        "knowledge/search/engine.py:1\n"
        "  knowledge.search.hits -> knowledge.search.scope (1 import): knowledge/search/hits.py:1\n"
        "  knowledge.search.scope -> knowledge.search.engine (1 import): "
        "knowledge/search/scope.py:2"
    )
    [apps] = _circles(_app_graph(modules), "app")
    assert apps.startswith("apps api, history, knowledge import each other:\n")
    assert "  knowledge -> history (1 import): knowledge/admin/pages.py:1" in apps
    assert "ops" not in apps and "fine" not in ring
    # the check sees nothing where there is nothing
    assert _circles({"a": {"b": ["a.py:1"]}, "b": {}}, "module") == []


def test_the_package_check_finds_circles_that_no_two_modules_make(tmp_path):
    # search -> selectors through one module, selectors -> search through another: no module
    # circle, but the two packages lean on each other
    write_sample(
        tmp_path, "knowledge/search/scope.py", "from knowledge.selectors.entries import f\n"
    )
    write_sample(tmp_path, "knowledge/selectors/entries.py", "")
    write_sample(
        tmp_path, "knowledge/selectors/listings.py", "from knowledge.search.scope import g\n"
    )
    write_sample(tmp_path, "ops/timing.py", "")
    modules = _import_graph(app_code(tmp_path), root=tmp_path)
    assert _circles(modules, "module") == []
    [pair] = _circles(_package_graph(modules), "package")
    assert pair.startswith("packages knowledge.search, knowledge.selectors import each other:")
    assert "knowledge/selectors/listings.py:1" in pair and "knowledge/search/scope.py:1" in pair
