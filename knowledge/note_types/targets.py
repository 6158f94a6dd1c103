"""The kinds of the entries an entry's relations name, for schemas whose fields are relations
(`works_at?: Organization` wants `- works_at [[Acme]]` to name an organization entry). Only
entries the reader may see count: a link to a hidden entry is checked no more than a waiting
one, so a schema report never tells what kind a hidden entry is."""

from __future__ import annotations

from knowledge.actors import Actor
from knowledge.graph.parsing import parse
from knowledge.graph.resolve import resolve_targets
from knowledge.models import Entry, Relation
from knowledge.selectors import visible_entries

Targets = dict[tuple[str, str], str]  # (relation type, target as written) → the target's kind


def stored_target_kinds(actor: Actor, entry_ids: list[int]) -> dict[int, Targets]:
    """Saved entries: their current relations' targets, as the graph resolved them. One
    query."""
    if not entry_ids:
        return {}
    rows = (
        Relation.objects.filter(
            source_id__in=entry_ids,
            valid_to__isnull=True,
            target__in=visible_entries(actor),
        )
        .values_list("source_id", "relation_type", "target_text", "target__kind")
        .order_by()
    )
    found: dict[int, Targets] = {}
    for source_id, kind, text, target_kind in rows:
        found.setdefault(source_id, {})[(kind, text)] = target_kind
    return found


def draft_target_kinds(entry: Entry, actor: Actor | None) -> Targets:
    """An entry about to be saved (or a draft in the editor): its body's relations resolved as a
    save would resolve them, each with the kind of the entry it names."""
    relations = parse(entry.body or "").relations
    if not relations:
        return {}
    found = resolve_targets(entry, [r.target for r in relations], actor)
    ids = {pk for pk in found.values() if pk}
    shown = visible_entries(actor) if actor is not None else Entry.objects.all()
    kinds = dict(shown.filter(pk__in=ids).values_list("pk", "kind")) if ids else {}
    return {
        (r.type, r.target): kinds[found[r.target]]
        for r in relations
        if found.get(r.target) in kinds
    }
