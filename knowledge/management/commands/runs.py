"""`manage.py runs [list|show|undo]`: what each agent token wrote, grouped into runs, and undoing
one as one unit (docs/people/runs.md)."""

from __future__ import annotations

import time

from django.core.management.base import CommandError

from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.reads.run_preview import run_preview
from knowledge.selectors.runs import DEFAULT_DAYS, MAX_RUNS, runs_list
from knowledge.services import run_undo


class Command(DataCommand):
    help = (
        "Runs: what one API token (and its agent label) wrote, as one thing. list: the latest "
        "runs (--days, --token, --project, --mine, --limit). show KEY: every entry a run wrote, "
        "what it changed, what others changed since and what an undo would do. undo KEY "
        "--reason TEXT: take the run back as one unit (later changes by others are kept; "
        "conflicts are listed and left as they are); --preview shows it and changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["list", "show", "undo"], nargs="?", default="list")
        parser.add_argument("key", nargs="?", help="show, undo: the run (a revision number of it)")
        self.add_acting_argument(
            parser, "--by", help="who reads or undoes (default: the first active superuser)"
        )
        parser.add_argument("--days", type=int, default=DEFAULT_DAYS, help="list: how far back")
        parser.add_argument("--token", type=int, help="list: only this token's runs (its id)")
        parser.add_argument("--project", help="list: only runs that wrote in this project")
        parser.add_argument("--mine", action="store_true", help="list: only the --by user's runs")
        parser.add_argument("--limit", type=int, default=50, help=f"list: at most (≤ {MAX_RUNS})")
        parser.add_argument("--reason", default="", help="undo: why (recorded on each revision)")
        parser.add_argument(
            "--preview", action="store_true", help="undo: show what it would do, change nothing"
        )

    def handle(self, *args, action, key=None, **options):
        if action != "list" and not key:
            raise CommandError(f"runs {action} needs the run: `manage.py runs list` names them.")
        try:
            getattr(self, f"_{action}")(key, options)
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc

    def _list(self, key, options):
        found = runs_list(
            self.actor,
            days=options["days"],
            token=options["token"],
            project=options["project"],
            mine=options["mine"],
            limit=options["limit"],
        )
        if not found:
            self.stdout.write(f"No run in the last {options['days']} days that you may see.")
            return
        self.stdout.write("run       started           user       agent               +   ~   -")
        for run in found:
            token = f"  {run.token}" + (" (revoked)" if run.token_revoked else "")
            self.stdout.write(
                f"r{run.key:<8} {run.started:%Y-%m-%d %H:%M}  {run.user[:10]:<10} "
                f"{run.agent[:18]:<18} {run.created:>3} {run.changed:>3} {run.deleted:>3}"
                f"  {', '.join(run.projects)}{token}" + ("  [undo]" if run.is_undo else "")
            )

    def _show(self, key, options, *, what: str = "did"):
        page = run_preview(self.actor, key)
        run = page["run"]
        self.stdout.write(
            f"Run r{run.key}: {run.user} as {run.agent or '-'}, {run.token or 'no token'}, "
            f"{run.started:%Y-%m-%d %H:%M:%S} to {run.ended:%H:%M:%S}; {run.entries} entries: "
            f"{run.created} created, {run.changed} changed, {run.deleted} deleted."
        )
        for item in page["items"]:
            self.stdout.write(
                f"\n{item['short_id']} {item['title']} ({item['path']}): {item['run_action']} by "
                f"the run; undo: {item['action']} ({item['note']})"
            )
            text = item[what] if what == "did" else item["will"] or ""
            if text:
                self.stdout.write(text)
            for change in item["later"]:
                self.stdout.write(
                    f"  since: v{change['version']} {change['action']} by {change['by']} "
                    f"{change['at']:%Y-%m-%d %H:%M}"
                    + (f": {change['reason']}" if change["reason"] else "")
                )
        if page["more"]:
            self.stdout.write(f"\n… and {page['more']} more entries.")
        if page["refusal"]:
            self.stdout.write(self.style.WARNING(page["refusal"]))
        return page

    def _undo(self, key, options):
        if options["preview"]:
            page = self._show(key, options, what="will")
            counts = page["counts"]
            self.stdout.write(
                f"\nAn undo would set back {counts['restore']}, delete {counts['delete']}, bring "
                f"back {counts['undelete']}, leave {counts['conflict']} conflicts as they are, "
                f"and change nothing in {counts['keep']}. Nothing was changed."
            )
            return
        if not options["reason"].strip():
            raise CommandError("Say why the run is undone: --reason TEXT.")
        started = time.monotonic()
        report = run_undo(actor=self.actor, run=key, reason=options["reason"])
        seconds = time.monotonic() - started
        self.stdout.write(self.style.SUCCESS(f"{report.summary()} ({seconds:.1f} s)"))
        for short_id, why in report.conflicts:
            self.stdout.write(self.style.WARNING(f"  {short_id}: {why}"))
        if report.undo_run:
            self.stdout.write(
                f"The undo is run r{report.undo_run}: `manage.py runs undo {report.undo_run} "
                "--reason …` puts it all back."
            )
