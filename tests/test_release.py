"""A release a team may run and name: the Apache-2.0 licence with the vendored libraries' own
listed, one version written once, and a changelog and upgrade notes that agree with it
(docs/release.py, which `make release` runs before it tags)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ops.version import VERSION, read_version
from tests.docs_text import ROOT


def _release():
    spec = importlib.util.spec_from_file_location("docs_release", ROOT / "docs" / "release.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release = _release()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_licence_is_apache_2_0_and_says_so_everywhere():
    licence = (ROOT / "LICENSE").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence
    assert PYPROJECT["license"] == "Apache-2.0"
    assert set(PYPROJECT["license-files"]) == {"LICENSE", "NOTICE"}
    assert "Apache License, Version 2.0" in (ROOT / "NOTICE").read_text()
    assert "Apache-2.0" in (ROOT / "README.md").read_text()


def test_every_vendored_file_is_listed_with_its_licence():
    notice = (ROOT / "NOTICE").read_text()
    tracked = subprocess.run(
        ["git", "ls-files", "*/vendor/*"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    vendored = [
        Path(p) for p in tracked if not Path(p).name.startswith(("LICENSE", "README", "VERSION"))
    ]
    assert vendored
    unlisted = [
        str(p)
        for p in vendored
        # the file, or a folder of its own inside vendor/ (easymde/), is named in NOTICE
        if not any(
            f"{q}{'/' if q != p else ''}" in notice
            for q in [p, *p.parents]
            if "vendor" in q.parent.parts
        )
    ]
    assert not unlisted, f"Vendored files NOTICE does not list with their licence: {unlisted}"


def test_the_version_is_written_once_and_read_from_there(tmp_path):
    assert PYPROJECT["version"] == VERSION
    bumped = tmp_path / "pyproject.toml"
    bumped.write_text((ROOT / "pyproject.toml").read_text().replace(VERSION, "9.8.7", 1))
    assert read_version(bumped) == "9.8.7"
    # No other file writes a version of its own for Cairn (the MCP server's, a backup's).
    written = subprocess.run(
        ["git", "grep", "-nE", r"version\s*=\s*\"[0-9]+\.[0-9]+\.[0-9]+\"", "--", "*.py",
         ":!tests/test_release.py"],
        cwd=ROOT, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert not written, f"A second place writes a version:\n{written}"


def test_manage_py_names_the_version():
    out = subprocess.run(
        [sys.executable, "manage.py", "--version"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(
        rf"Cairn {re.escape(VERSION)} \(Django [\d.]+, Python [\d.]+\)\n", out.stdout
    )


def test_the_changelog_and_the_upgrade_notes_agree_with_the_version():
    assert release.problems() == []


NEWEST_DATE = release.releases((ROOT / "CHANGELOG.md").read_text())[0][1]
LAST_MIGRATION = release.migrations()[-1]


@pytest.mark.parametrize(
    "change, caught",
    [
        (("pyproject.toml", f'version = "{VERSION}"', 'version = "99.0.0"'),
         f"newest release is {VERSION}"),
        (("CHANGELOG.md", "## [Unreleased]", "## Unreleased"), "no '## [Unreleased]'"),
        (("CHANGELOG.md", f"] - {NEWEST_DATE}", "] - someday"), "CHANGELOG.md"),
        (("docs/operators/upgrades.md", f"`{LAST_MIGRATION}`", "a migration"), LAST_MIGRATION),
        (("docs/operators/upgrades.md", f"\n### {VERSION}\n", "\n### soon\n"),
         f"no release notes for {VERSION}"),
    ],
)  # fmt: skip
def test_a_release_whose_papers_disagree_is_refused(tmp_path, monkeypatch, change, caught):
    """Each check can fail: break one paper in a copy and the check names what is wrong."""
    path, old, new = change
    every_migration = release.migrations()
    for name in ("pyproject.toml", "CHANGELOG.md", "docs/operators/upgrades.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / name).read_text()
        if name == path:
            assert old in text, f"{old!r} is no longer in {path}: update this test"
            text = text.replace(old, new, 1)
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(release, "ROOT", tmp_path)
    monkeypatch.setattr(release, "CHANGELOG", tmp_path / "CHANGELOG.md")
    monkeypatch.setattr(release, "UPGRADES", tmp_path / "docs/operators/upgrades.md")
    monkeypatch.setattr(release, "migrations", lambda: every_migration)
    found = release.problems()
    assert any(caught in p for p in found), found
