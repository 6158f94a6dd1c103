"""The subtopic tree in the admin: a sidebar filter on the entry changelist (each node filters
the list to itself and everything below it, counts included) and the same tree on a project's
page."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Q
from django.urls import reverse
from django.utils.http import urlencode

from knowledge.errors import ValidationFailed
from knowledge.paths import normalize_path
from knowledge.reads.trees import Forest, TreeNode, entry_forest

TREE_PARAM = "tree"


def _walk(nodes: list[TreeNode]):
    for node in nodes:
        yield node
        yield from _walk(node.children)


def mark_open(forest: Forest, selected: str | None) -> None:
    """Open the nodes on the way to the selected one (and a lone project)."""
    lone = len(forest.roots) == 1
    for node in _walk(forest.roots):
        node.open = bool(selected) and (selected == node.key or selected.startswith(node.key + "/"))
        node.open = node.open or (lone and node.depth == 0)
        node.selected = selected == node.key


def tree_links(forest: Forest) -> None:
    """Each node's links: the entry list filtered to it, and adding a subtopic under it."""
    entries = reverse("admin:knowledge_entry_changelist")
    add = reverse("admin:knowledge_subtopic_add")
    for node in _walk(forest.roots):
        node.url = f"{entries}?{urlencode({TREE_PARAM: node.key})}"
        below = f"{node.path}/" if node.path else ""
        node.add_url = f"{add}?{urlencode({'project': node.project_id, 'path': below})}"
        if node.path:
            node.move_url = (
                reverse("admin:knowledge_subtopic_move")
                + "?"
                + urlencode({"project": node.project_id, "path": node.path})
            )


def _tree_key(value: str) -> str:
    """`project/sub/path` with the path normalized; ValidationFailed for what the path rules
    refuse (and a NUL byte, which no query may hold)."""
    if "\x00" in value:
        raise ValidationFailed("The subtopic tree filter holds a NUL byte (\\x00).", field="tree")
    slug, _, path = value.partition("/")
    path = normalize_path(path)
    return f"{slug}/{path}" if path else slug


class SubtopicTreeFilter(admin.ListFilter):
    """`?tree=project` or `?tree=project/sub/path`: the node and everything below it."""

    title = "subtopic tree"
    parameter_name = TREE_PARAM  # the theme's filter panel looks filters up by it
    template = "knowledge/admin/entries/tree_filter.html"

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        value = params.pop(TREE_PARAM, [""])[-1].strip().strip("/")
        try:
            value = _tree_key(value)
        except ValidationFailed as exc:  # a hand-made address: say so, list everything
            messages.error(request, f"{exc.message} The list shows every entry instead.")
            value = ""
        if value:
            self.used_parameters[TREE_PARAM] = value
        self.value = value or None

    def has_output(self) -> bool:
        return True

    def expected_parameters(self):
        return [TREE_PARAM]

    def queryset(self, request, queryset):
        if not self.value:
            return queryset
        slug, _, path = self.value.partition("/")
        queryset = queryset.filter(project__slug=slug)
        if path:
            queryset = queryset.filter(
                Q(subtopic__path=path) | Q(subtopic__path__startswith=f"{path}/")
            )
        return queryset

    def choices(self, changelist):
        forest = entry_forest(self.request.actor)
        mark_open(forest, self.value)
        for node in _walk(forest.roots):
            node.url = changelist.get_query_string({TREE_PARAM: node.key})
        yield {
            "forest": forest,
            "selected": self.value,
            "all_url": changelist.get_query_string(remove=[TREE_PARAM]),
        }
