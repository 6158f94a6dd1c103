"""The mirror's projects manifest (`.cairn/projects.yaml`): one typed value, one writer
(`render`), one reader (`parse`).

The manifest is part of the mirror's format: `mirror restore` reads it back and `mirror verify`
compares it with what the database would write, so `render` gives exactly the bytes the mirror
has always held (tests/history/test_manifest_format.py holds them). history.mirror.manifest
builds the value from the database and commits it.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from knowledge.records import ProjectRecord, RecordRefused
from knowledge.safe_yaml import load_yaml

MANIFEST_PATH = ".cairn/projects.yaml"
MANIFEST_DIR = ".cairn/"
FORMAT = 1
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_HEADER = (
    "# Cairn's projects, their memberships and subtopics, written by the git mirror.\n"
    "# `manage.py mirror restore` reads it back; edit projects in Cairn, not here.\n"
)


class ManifestRefused(ValueError):
    """The manifest is not one Cairn writes. `project` is the offending project as read (None
    when the file as a whole is wrong)."""

    def __init__(self, message: str, project: object = None):
        super().__init__(message)
        self.project = project


@dataclass(frozen=True)
class ProjectsManifest:
    """Every project (in id order) with its settings, memberships and subtopics."""

    projects: tuple[ProjectRecord, ...] = ()
    format: int = FORMAT

    def plain(self) -> dict:
        return {"format": self.format, "projects": [p.plain() for p in self.projects]}

    def render(self) -> bytes:
        """The one writer: a commented YAML file, keys in the order held. Same value, same
        bytes."""
        body = yaml.dump(self.plain(), Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                         default_flow_style=False, width=10**6)  # fmt: skip
        return (_HEADER + body).encode()

    @classmethod
    def parse(cls, raw: bytes) -> ProjectsManifest:
        """The one reader. Raises ManifestRefused for a file that is not a projects manifest or
        holds a project of a shape Cairn does not write, UnicodeDecodeError or yaml.YAMLError
        for one that is not YAML."""
        data = load_yaml(raw.decode("utf-8")) or {}
        if not isinstance(data, dict) or not isinstance(data.get("projects", []), list):
            raise ManifestRefused(f"{MANIFEST_PATH} is not a Cairn projects manifest")
        projects = []
        for item in data.get("projects") or []:
            try:
                projects.append(ProjectRecord.parse(item))
            except RecordRefused as exc:
                raise ManifestRefused(str(exc), item) from exc
        fmt = data.get("format", FORMAT)
        return cls(tuple(projects), fmt if isinstance(fmt, int) else FORMAT)
