"""Import keeps the graph: a Basic Memory-style folder and an Obsidian-style vault yield the
relations their tools show, whatever the file order; reindex --graph rebuilds the graph."""

import pytest
from django.core.management import call_command

from history.importing import import_folder
from knowledge.models import Entry, Observation, Relation

pytestmark = pytest.mark.django_db


def relations_of(title):
    entry = Entry.objects.get(title=title)
    return {
        (r.relation_type, r.target_text, r.target.title if r.target else None)
        for r in Relation.objects.filter(source=entry, valid_to__isnull=True).select_related(
            "target"
        )
    }


def test_basic_memory_folder_keeps_observations_and_relations(tmp_path, actor, project):
    (tmp_path / "notes").mkdir()
    # "a-..." sorts first: its links point forward, to files imported after it.
    (tmp_path / "notes" / "a-coffee.md").write_text(
        "---\ntitle: Coffee Brewing Methods\ntype: note\npermalink: notes/coffee-brewing-methods\n"
        "tags: [coffee]\n---\n\n# Coffee Brewing Methods\n\n## Observations\n"
        "- [method] Pour over gives a clean cup #brewing (morning)\n"
        "- [tip] Grind fresh\n\n## Relations\n"
        "- relates_to [[Tea Steeping]]\n- requires [[notes/Grinder]]\n"
        "- inspired_by [[Somewhere Else]]\n"
    )
    (tmp_path / "notes" / "b-grinder.md").write_text("---\ntitle: Grinder\n---\nBurrs matter.\n")
    (tmp_path / "tea.md").write_text(
        "---\ntitle: Tea Steeping\n---\nUnlike [[Coffee Brewing Methods]], tea waits.\n"
    )
    report = import_folder(tmp_path, actor=actor, project="acme")
    assert report.counts["created"] == 3
    assert relations_of("Coffee Brewing Methods") == {
        ("relates_to", "Tea Steeping", "Tea Steeping"),
        ("requires", "notes/Grinder", "Grinder"),
        ("inspired_by", "Somewhere Else", None),
    }
    assert relations_of("Tea Steeping") == {
        ("links_to", "Coffee Brewing Methods", "Coffee Brewing Methods")
    }
    obs = Observation.objects.filter(entry__title="Coffee Brewing Methods").order_by("position")
    assert [(o.category, o.content, o.tags, o.context) for o in obs] == [
        ("method", "Pour over gives a clean cup", ["brewing"], "morning"),
        ("tip", "Grind fresh", [], ""),
    ]


def test_obsidian_vault_links_by_title_alias_and_heading(tmp_path, actor, project):
    (tmp_path / "Daily").mkdir()
    (tmp_path / "Daily" / "2026-08-01.md").write_text(
        "Met about [[Project Atlas|Atlas]], see [[Project Atlas#Risks]] and [[Daily/2026-08-02]].\n"
    )
    (tmp_path / "Daily" / "2026-08-02.md").write_text("Follow-up.\n")
    (tmp_path / "Project Atlas.md").write_text("# Project Atlas\n\n## Risks\n")
    import_folder(tmp_path, actor=actor, project="acme")
    assert relations_of("2026-08-01") == {
        ("links_to", "Project Atlas", "Project Atlas"),
        ("links_to", "Daily/2026-08-02", "2026-08-02"),
    }


def test_reindex_graph_builds_the_graph_of_existing_entries(actor, project, settings):
    from knowledge.services import EntryFields, entry_upsert

    settings.CAIRN_GRAPH_ON_SAVE = False  # entries written before the graph existed
    for title, body in (("A", "- uses [[B]]\n- [fact] one"), ("B", "[[A]]")):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body=body))
    settings.CAIRN_GRAPH_ON_SAVE = True
    assert not Relation.objects.exists()
    call_command("reindex", "--graph")
    call_command("reindex", "--graph")  # idempotent
    assert relations_of("A") == {("uses", "B", "B")}
    assert relations_of("B") == {("links_to", "A", "A")}
    assert Observation.objects.count() == 1
