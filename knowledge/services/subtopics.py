from __future__ import annotations

from django.db import IntegrityError, transaction

from knowledge.actors import Actor
from knowledge.models import Project, Subtopic
from knowledge.paths import split_path
from knowledge.services._common import record, require_write


def ensure_path(*, actor: Actor, project: Project, path: str | None) -> Subtopic | None:
    """Create every missing level of `path` (no transaction of its own). None = project root."""
    parent = None
    slugs: list[str] = []
    for slug, name in split_path(path):
        slugs.append(slug)
        full = "/".join(slugs)
        node = Subtopic.objects.filter(project=project, path=full).first()
        if node is None:
            node = Subtopic(project=project, parent=parent, slug=slug, name=name, path=full)
            record(node, actor, f"create subtopic {full}")
            # A concurrent writer may create the same node: the savepoint lets us fall back.
            try:
                with transaction.atomic():
                    node.save()
            except IntegrityError:
                node = Subtopic.objects.get(project=project, path=full)
        parent = node
    return parent


@transaction.atomic
def subtopic_ensure(*, actor: Actor, project: str | int, path: str) -> Subtopic | None:
    """Return the subtopic at `path` in `project`, creating any missing level."""
    from knowledge.selectors import project_get

    require_write(actor)
    return ensure_path(actor=actor, project=project_get(actor, project, for_write=True), path=path)
