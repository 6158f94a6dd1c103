"""Check that a release's papers agree, and tag it: `make release` (or `.venv/bin/python
docs/release.py`, which checks only; `--tag` also makes the annotated tag v<version>).

- pyproject.toml's version (the one place it is written) is the newest release in CHANGELOG.md,
  which has an Unreleased section above it and its releases newest first, each with a date;
- docs/operators/upgrades.md has release notes for that version and lists every migration of
  the checkout under some release (or Unreleased);
- the tag does not exist yet and the work tree is clean (with --tag).

tests/test_release.py runs the same checks on every `make test`, so a version bumped without its
changelog, or a migration without its note, fails before any release is cut.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
UPGRADES = ROOT / "docs" / "operators" / "upgrades.md"
SEMVER = r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?"
RELEASE = re.compile(rf"^## \[({SEMVER})\] - (\d{{4}}-\d{{2}}-\d{{2}})$", re.M)


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def releases(text: str) -> list[tuple[str, str]]:
    """(version, date) of each release in the changelog, in its order."""
    return RELEASE.findall(text)


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(n) for n in v.split("-")[0].split("."))


def migrations() -> list[str]:
    """Every migration of the checkout, as `app.0001_name`."""
    return sorted(f"{p.parent.parent.name}.{p.stem}" for p in ROOT.glob("*/migrations/[0-9]*.py"))


def section(text: str, version: str) -> str:
    """The changelog's section of one release (its lines up to the next release)."""
    m = re.search(rf"^## \[{re.escape(version)}\][^\n]*\n(.*?)(?=^## \[|\Z)", text, re.M | re.S)
    return m.group(1).strip() if m else ""


def problems() -> list[str]:
    """What disagrees; nothing when the version, the changelog and the notes agree."""
    found = []
    current = version()
    if not re.fullmatch(SEMVER, current):
        found.append(f"pyproject.toml's version {current!r} is not MAJOR.MINOR.PATCH")
    log = CHANGELOG.read_text()
    unreleased, first = re.search(r"^## \[Unreleased\]$", log, re.M), RELEASE.search(log)
    if not unreleased:
        found.append("CHANGELOG.md has no '## [Unreleased]' section for the next changes")
    elif first and first.start() < unreleased.start():
        found.append("CHANGELOG.md's Unreleased section is not above the releases")
    listed = releases(log)
    if not listed:
        found.append("CHANGELOG.md names no release ('## [X.Y.Z] - YYYY-MM-DD')")
    elif listed[0][0] != current:
        found.append(
            f"pyproject.toml says {current}, CHANGELOG.md's newest release is {listed[0][0]}: "
            "move the Unreleased lines under a new release of that number, or fix the version"
        )
    versions = [v for v, _ in listed]
    if versions != sorted(versions, key=_key, reverse=True) or len(set(versions)) != len(versions):
        found.append(f"CHANGELOG.md's releases are not newest first, each once: {versions}")
    dates = [d for _, d in listed]
    if dates != sorted(dates, reverse=True):
        found.append(f"CHANGELOG.md's release dates go back in time: {dates}")
    for v, _ in listed:
        if not section(log, v):
            found.append(f"CHANGELOG.md's release {v} says nothing")
    notes = UPGRADES.read_text()
    if "\n## Release notes\n" not in notes:
        found.append("docs/operators/upgrades.md has no '## Release notes'")
    else:
        notes = notes.split("\n## Release notes\n", 1)[1]
        for v in versions:
            if f"\n### {v}\n" not in notes:
                found.append(f"docs/operators/upgrades.md has no release notes for {v}")
        missing = [m for m in migrations() if f"`{m}`" not in notes]
        if missing:
            found.append(
                "docs/operators/upgrades.md's release notes do not list these migrations (add "
                f"them under Unreleased): {', '.join(missing)}"
            )
    return found


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def main() -> int:
    found = problems()
    tag = f"v{version()}"
    if "--tag" in sys.argv[1:]:
        if _git("rev-parse", "-q", "--verify", f"refs/tags/{tag}").returncode == 0:
            found.append(f"the tag {tag} exists already: bump the version for a new release")
        if _git("status", "--porcelain").stdout.strip():
            found.append("the work tree has uncommitted changes: commit them first")
    if found:
        print("Not ready to release:", *(f"  - {p}" for p in found), sep="\n", file=sys.stderr)
        return 1
    if "--tag" in sys.argv[1:]:
        notes = section(CHANGELOG.read_text(), version())
        done = _git("tag", "-a", tag, "-m", f"Cairn {version()}\n\n{notes}")
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return 1
        print(f"Tagged {tag}. Publish it with: git push origin {tag}")
    else:
        print(f"Cairn {version()}: the version, CHANGELOG.md and the upgrade notes agree.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
