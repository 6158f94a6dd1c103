"""The project → subtopic tree as people think in it, with counts that include every entry
below a node (what a filter on the node shows), for the projects the actor may see."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q

from knowledge.actors import Actor
from knowledge.models import Subtopic
from knowledge.selectors import visible_projects

MAX_NODES = 2000  # subtopics drawn in one tree; a deeper cut says so


@dataclass
class TreeNode:
    key: str  # `project` or `project/sub/path`: what a filter on the node asks for
    name: str
    project: str
    project_id: int
    path: str = ""  # "" for the project itself
    entries: int = 0  # directly in the node (a project: at its root)
    total: int = 0  # the node and everything below it
    children: list[TreeNode] = field(default_factory=list)

    @property
    def depth(self) -> int:
        return self.path.count("/") + 1 if self.path else 0


@dataclass
class Forest:
    roots: list[TreeNode]
    cut: bool  # more subtopics than MAX_NODES: the deepest were left out


def entry_forest(actor: Actor, *, project: int | None = None) -> Forest:
    """Each project the actor may see (or only `project`, an id) with its subtopic tree;
    every entry counts, superseded ones too (the admin lists them). Two queries."""
    projects = visible_projects(actor)
    if project is not None:
        projects = projects.filter(pk=project)
    roots = {
        p.pk: TreeNode(key=p.slug, name=p.name, project=p.slug, project_id=p.pk, entries=p.n)
        for p in projects.annotate(n=Count("entries", filter=Q(entries__subtopic__isnull=True)))
        .order_by("slug")
        .only("pk", "slug", "name")
    }
    rows = list(
        Subtopic.objects.filter(project__in=list(roots))
        .annotate(n=Count("entries"))
        .order_by("project_id", "path")
        .values_list("project_id", "path", "name", "n")[: MAX_NODES + 1]
    )
    nodes: dict[tuple[int, str], TreeNode] = {}
    for project_id, path, name, n in rows[:MAX_NODES]:
        root = roots[project_id]
        node = TreeNode(
            key=f"{root.project}/{path}",
            name=name,
            project=root.project,
            project_id=project_id,
            path=path,
            entries=n,
        )
        nodes[(project_id, path)] = node
        _parent(nodes, root, path).children.append(node)
    for node in reversed(list(nodes.values())):  # children come after their parents
        node.total += node.entries
        _parent(nodes, roots[node.project_id], node.path).total += node.total
    for root in roots.values():
        root.total += root.entries
    return Forest(roots=list(roots.values()), cut=len(rows) > MAX_NODES)


def _parent(nodes: dict[tuple[int, str], TreeNode], root: TreeNode, path: str) -> TreeNode:
    return nodes.get((root.project_id, path.rpartition("/")[0]), root)
