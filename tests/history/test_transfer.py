"""Export and import: layouts, dialects, bad files, idempotence, the byte-identical round trip."""

import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command

from history import exporting, mirror
from history.importing import import_folder
from knowledge.models import Entry, Project, Source, Subtopic
from knowledge.services import EntryFields, entry_move, entry_update, entry_upsert, project_create
from tests.history.conftest import EntriesOnly

pytestmark = pytest.mark.django_db


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def memory(actor, project):
    """A small but awkward memory: nesting, tags, metadata, sources, hostile and clashing titles."""
    e = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="customer-x/2026-08",
        fields=EntryFields(
            title="Incident",
            body="# Outage\n\nDB failover took 4 min.\n",
            kind="decision",
            tags=["ops", "db"],
            status="resolved",
            metadata={"severity": 2, "a": [1]},
        ),
        sources=[{"kind": "email", "external_id": "<m1@x>", "title": "Report"}],
    ).entry
    entry_update(
        actor=actor, ref=e.pk, fields=EntryFields(body="# Outage\n\nDB failover took 5 min.\n")
    )
    entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="../../etc/passwd", body="no escape")
    )
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Pricing", body="per seat"))
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Pricing!", body="clash", kind="transcript"),
    )
    moved = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Moved", body="x\r\ny  ")
    ).entry
    entry_move(actor=actor, ref=moved.pk, subtopic="later")
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Ünïcode 漢字", body=""))
    project_create(actor=actor, slug="other")
    entry_upsert(actor=actor, project="other", fields=EntryFields(title="Elsewhere", body="z"))
    return e


def test_export_writes_the_mirror_layout_as_folder_zip_and_tar(memory, tmp_path):
    call_command("export", str(tmp_path / "out"))
    folder = files_under(tmp_path / "out")
    assert "acme/customer-x/2026-08/incident.md" in folder
    assert "acme/etcpasswd.md" in folder
    assert sum(p.startswith("acme/pricing") for p in folder) == 2
    mirror.drain()
    assert folder == EntriesOnly(mirror.open_mirror()).files()  # export and mirror agree
    call_command("export", str(tmp_path / "out.zip"))
    with zipfile.ZipFile(tmp_path / "out.zip") as z:
        assert {n: z.read(n) for n in z.namelist()} == folder
    call_command("export", str(tmp_path / "out.tar.gz"), "--project", "acme")
    with tarfile.open(tmp_path / "out.tar.gz") as t:
        acme = {p: data for p, data in folder.items() if p.startswith("acme/")}
        assert {m.name: t.extractfile(m).read() for m in t.getmembers()} == acme
    assert "other/elsewhere.md" in folder


def test_export_refuses_a_folder_that_is_not_empty(memory, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="not empty"):
        call_command("export", str(tmp_path / "full"))
    with pytest.raises(CommandError, match=r"No project nope\. Known projects: acme, other"):
        call_command("export", str(tmp_path / "new"), "--project", "nope")


def test_jsonl_export_has_every_entry_with_its_full_history(memory, tmp_path):
    call_command("export", str(tmp_path / "all.jsonl"), "--format", "jsonl")
    records = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()]
    assert len(records) == Entry.objects.count()
    incident = next(r for r in records if r["title"] == "Incident")
    assert [h["version"] for h in incident["history"]] == [1, 2]
    assert incident["history"][0]["body"].endswith("4 min.\n")
    assert incident["sources"] == [{"kind": "email", "external_id": "<m1@x>", "title": "Report"}]
    moved = next(r for r in records if r["title"] == "Moved")
    assert [h["subtopic"] for h in moved["history"]] == ["", "later"]


def test_export_import_export_is_byte_identical(memory, tmp_path, actor):
    exporting.write(tmp_path / "first")
    first = files_under(tmp_path / "first")
    Entry.objects.all().delete()
    Source.objects.all().delete()
    Subtopic.objects.all().delete()
    Project.objects.all().delete()
    report = import_folder(tmp_path / "first", actor=actor)
    assert report.counts == {"created": len(first)}
    exporting.write(tmp_path / "second")
    assert files_under(tmp_path / "second") == first
    again = import_folder(tmp_path / "second", actor=actor)
    assert again.counts == {"unchanged": len(first)}


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def test_import_reads_basic_memory_obsidian_and_brain_engine(tmp_path, actor, project):
    bm, obs, brain = tmp_path / "bm", tmp_path / "vault", tmp_path / "memory"
    write(
        bm,
        "specs/search-design.md",
        "---\ntitle: Search Design\ntype: spec\npermalink: "
        "specs/search-design\ntags: [search, design]\n---\n\n# Search Design\n\n## Observations\n"
        "- [decision] Use RRF #fusion\n\n## Relations\n- implements [[Search]]\n",
    )
    write(obs, "Daily/2026-08-01.md", "Met [[Bob]] about #pricing.\n")
    write(obs, ".obsidian/workspace.json", "{}")
    write(obs, "assets/diagram.png", b"\x89PNG\r\n\x1a\n\0\0")
    write(
        brain,
        "decisions/db.md",
        "---\ntype: decision\nid: dec-0042\nstatus: superseded\n"
        "generated: 2026-07-01\nverified_by_user: true\nsources: [https://x.org/a, notes.txt]\n"
        "superseded_by: dec-0050\n---\nUse Postgres.\n",
    )
    r1 = import_folder(bm, actor=actor, project="acme")
    r2 = import_folder(obs, actor=actor, project="acme")
    r3 = import_folder(brain, actor=actor, project="acme")
    assert r1.counts == {"created": 1}
    spec = Entry.objects.get(title="Search Design")
    assert (spec.kind, spec.tags, spec.subtopic.path) == ("spec", ["search", "design"], "specs")
    assert spec.metadata == {"permalink": "specs/search-design"}
    assert "- implements [[Search]]" in spec.body and "## Observations" in spec.body
    assert r2.counts == {"created": 1, "skipped": 1}
    assert [r.reason for r in r2.results if r.outcome == "skipped"] == ["not a Markdown file (.md)"]
    daily = Entry.objects.get(title="2026-08-01")
    assert daily.subtopic.path == "daily" and daily.body == "Met [[Bob]] about #pricing."
    assert r3.counts == {"created": 1}
    db = Entry.objects.get(subtopic__path="decisions")
    assert (db.title, db.kind, db.status) == ("db", "decision", "superseded")
    assert db.metadata == {
        "id": "dec-0042",
        "generated": "2026-07-01",
        "verified_by_user": True,
        "superseded_by": "dec-0050",
    }
    assert sorted(db.sources.values_list("kind", "external_id")) == [
        ("ref", "notes.txt"),
        ("url", "https://x.org/a"),
    ]


def test_bad_files_are_reported_and_the_rest_imported(tmp_path, actor, project, settings):
    settings.CAIRN_IMPORT_MAX_BYTES = 1000
    root = tmp_path / "in"
    write(root, "good.md", "---\ntitle: Good\n---\nfine\n")
    write(root, "bad-yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
    write(root, "list.md", "---\n- a\n- b\n---\nbody\n")
    write(root, "unterminated.md", "---\ntitle: x\nbody without end\n")
    write(root, "binary.md", b"\x00\x01\x02")
    write(root, "latin1.md", "caf\xe9".encode("latin-1"))
    write(root, "huge.md", "x" * 5000)
    write(root, "bad-status.md", "---\ntitle: Odd\nstatus: weird\nkind: '!!!'\n---\nok\n")
    write(root, "notitle/???.md", "---\ntitle: '   '\n---\nbody\n")
    secret = tmp_path / "secret.md"
    secret.write_text("---\ntitle: Secret\n---\noutside the folder\n")
    (root / "link.md").symlink_to(secret)
    report = import_folder(root, actor=actor, project="acme")
    reasons = {r.path: r.reason for r in report.results if r.outcome == "skipped"}
    assert set(reasons) == {
        "bad-yaml.md",
        "list.md",
        "unterminated.md",
        "binary.md",
        "latin1.md",
        "huge.md",
        "link.md",
    }
    assert reasons["bad-yaml.md"].startswith("bad YAML")
    assert reasons["list.md"] == "the frontmatter is not a mapping of keys to values"
    assert reasons["binary.md"] == "binary content"
    assert reasons["latin1.md"] == "not UTF-8 text"
    assert "too large" in reasons["huge.md"]
    assert reasons["link.md"].startswith("a symbolic link")
    assert not Entry.objects.filter(title="Secret").exists()
    odd = Entry.objects.get(title="Odd")
    assert (odd.status, odd.kind, odd.metadata) == ("active", "note", {"status": "weird"})
    assert Entry.objects.filter(title="???").exists()  # the file name is the fallback title


def test_import_is_idempotent_and_dry_run_changes_nothing(tmp_path, actor, project, capsys):
    root = tmp_path / "in"
    write(root, "a.md", "---\ntitle: A\ntags: x, y\n---\none\n")
    write(root, "sub/b.md", "# B heading\n\ntwo\n")
    call_command("import", str(root), "--project", "acme", "--user", "alice", "--dry-run")
    out = capsys.readouterr().out
    assert "Dry run, nothing saved: 2 created, 0 updated, 0 unchanged, 0 skipped in " in out
    assert "files/s)." in out and "worker embeds" not in out
    assert not Entry.objects.exists()
    call_command("import", str(root), "--project", "acme", "--user", "alice")
    assert Entry.objects.count() == 2
    assert Entry.objects.get(title="B heading").subtopic.path == "sub"
    revisions = Entry.history.count()
    call_command("import", str(root), "--project", "acme", "--user", "alice")
    out = capsys.readouterr().out
    assert "0 created, 0 updated, 2 unchanged, 0 skipped in " in out
    assert "worker embeds the 2 new or changed entries" in out  # the second run's, not this
    assert Entry.history.count() == revisions
    write(root, "a.md", "---\ntitle: A\ntags: x, y\n---\none, edited\n")
    call_command("import", str(root), "--project", "acme", "--user", "alice")
    out = capsys.readouterr().out
    assert "0 created, 1 updated, 1 unchanged, 0 skipped in " in out
    assert "The worker embeds the 1 new or changed entries next" in out


def test_import_without_a_project_uses_the_first_folder(tmp_path, actor):
    root = tmp_path / "in"
    write(root, "loose.md", "hello")
    write(root, "newproj/deep/er/n.md", "---\ntitle: N\n---\n")
    report = import_folder(root, actor=actor)
    assert report.counts == {"created": 1, "skipped": 1}
    assert Entry.objects.get(title="N").subtopic.path == "deep/er"
    assert Project.objects.filter(slug="newproj").exists()
