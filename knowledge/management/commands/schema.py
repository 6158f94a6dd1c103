"""`manage.py schema validate|infer|diff`: note-type schemas for operators and CI, the same
reads as the schema_* MCP tools and the REST endpoints. `--strict` exits 1 when an entry does
not fit (validate) or the schema drifted (diff); `--json` prints the report as JSON."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.note_types import reads as note_types
from knowledge.note_types import to_text
from knowledge.reads import note_types as note_type_reports


class Command(DataCommand):
    help = (
        "Check entries against their note type's schema (validate), suggest a schema from the "
        "entries (infer), or compare a schema with how its entries are written (diff)."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["validate", "infer", "diff"])
        parser.add_argument("note_type", nargs="?", default=None, help="e.g. person")
        parser.add_argument("--project", default=None, help="project slug or name")
        parser.add_argument("--entry", default=None, help="validate one entry (id or short id)")
        parser.add_argument("--threshold", type=float, default=0.25, help="infer/diff (0-1)")
        parser.add_argument("--strict", action="store_true", help="exit 1 on misfits or drift")
        parser.add_argument("--json", action="store_true", dest="as_json", help="JSON output")
        self.add_acting_argument(
            parser, "--user", help="whose view of the memory (default: the first superuser)"
        )

    def handle(self, *args, action, note_type, project, entry, threshold, strict, as_json, **o):
        if action != "validate" and not (note_type and project):
            raise CommandError(f"schema {action} needs a note type and --project.")
        try:
            if action == "validate":
                failed = self._validate(project, note_type, entry, as_json)
            elif action == "infer":
                run = note_types.schema_infer(
                    self.actor, project=project, note_type=note_type, threshold=threshold
                )
                self._infer(run, as_json)
                failed = 0
            else:
                run = note_types.schema_diff(
                    self.actor, project=project, note_type=note_type, threshold=threshold
                )
                failed = self._diff(run, as_json)
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc
        if strict and failed:
            raise CommandError(f"{failed} problem(s) with {action}: see above.", returncode=1)

    def _validate(self, project, note_type, entry, as_json) -> int:
        runs = note_types.schema_validate(
            self.actor, project=project, note_type=note_type, ref=entry
        )
        if as_json:
            self.stdout.write(
                json.dumps([note_type_reports.validation_dict(r) for r in runs], indent=2)
            )
        failed = 0
        for run in runs:
            if run.schema is None:
                failed += 1
                if not as_json:
                    self.stdout.write(
                        run.error
                        or f"No schema for {run.note_type!r} in {run.project.slug}: write an "
                        "entry of kind schema titled with the type, with a ```yaml block of "
                        "fields (`manage.py schema infer` suggests one)."
                    )
                continue
            failed += len(run.misfits)
            if as_json:
                continue
            self.stdout.write(
                f"{run.note_type} schema (entry {run.schema.entry}, version "
                f"{run.schema.version}) in {run.project.slug}: {run.fitting} of "
                f"{len(run.results)} fit."
            )
            for fit in run.results:
                mark = "ok  " if fit.report.fits else "MISS"
                detail = "" if fit.report.fits else f" — {fit.report.summary()}"
                self.stdout.write(
                    f"  {mark} {fit.entry.short_id} {fit.entry.path}/{fit.entry.title}{detail}"
                )
        return failed

    def _infer(self, run, as_json) -> None:
        if as_json:
            self.stdout.write(json.dumps(note_type_reports.inference_dict(run), indent=2))
            return
        found = run.inference
        self.stdout.write(f"{found.total} {found.note_type} entries in {run.project.slug}:")
        for u in found.usages:
            left = "" if u.share >= found.threshold else "  (below threshold)"
            self.stdout.write(f"  {u.name:24} {u.source:11} {u.count}/{found.total}{left}")
        if found.fields:
            self.stdout.write("Suggested schema:\n```yaml\n" + to_text(found.fields) + "\n```")

    def _diff(self, run, as_json) -> int:
        if as_json:
            self.stdout.write(json.dumps(note_type_reports.diff_dict(run), indent=2))
        if run.schema is None:
            if not as_json:
                self.stdout.write(run.error or f"No schema for {run.note_type!r}.")
            return 1
        d = run.drift
        if not as_json:
            lines = [f"+ {u.name}: in {u.share:.0%}, not in the schema" for u in d.new_fields]
            lines += [f"- {f.name}: declared, in {s:.0%}" for f, s in d.dropped_fields]
            lines += [f"~ {f.name}: declared {a}, used as {b}" for f, a, b in d.cardinality]
            lines += [f"~ {f.name}: in {s:.0%}, could be {w}" for f, w, s in d.requiredness]
            self.stdout.write("\n".join(lines) or "No drift.")
        return len(d.new_fields) + len(d.dropped_fields) + len(d.cardinality) + len(d.requiredness)
