"""`manage.py mirror status|verify|rebuild|drain|retry|restore`: look after the git mirror of
entry history."""

import sys

from django.conf import settings
from django.core.management.base import CommandError
from tqdm import tqdm

from history import maintenance, mirror, mirror_restore
from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.models import Sensitivity


class Command(DataCommand):
    stealth_options = ("stdin",)  # tests answer the question through it
    help = (
        "The git mirror of entry history. status: pending revisions, lag, last commit. "
        "verify: compare the tree at HEAD with the database (exit 1 on any difference). "
        "rebuild: recreate the repository from the full history. drain: commit pending now. "
        "retry: put parked revisions (all, or --revision N ...) back in line and drain. "
        "restore --from PATH_OR_URL: show what a mirror would restore, ask, rebuild an empty "
        "database from it, then verify."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "action", choices=["status", "verify", "rebuild", "drain", "retry", "restore"]
        )
        parser.add_argument(
            "--from",
            dest="source",
            help="restore: the mirror to read (a path such as var/mirror.git, or a git URL; "
            "default: CAIRN_MIRROR_PUSH_URL)",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="restore: replace the projects and entries already in the database",
        )
        parser.add_argument(
            "--sensitivity",
            choices=[s.value for s in Sensitivity],
            help="restore: the sensitivity of projects the mirror's manifest does not describe "
            "(required for a mirror without .cairn/projects.yaml; restricted is the safe choice)",
        )
        parser.add_argument(
            "--keep-verified",
            action="store_true",
            help="restore: keep the mirror's verification marks (verified_by names anyone could "
            "have written; dropped by default)",
        )
        parser.add_argument(
            "--no-memberships",
            dest="memberships",
            action="store_false",
            help="restore: skip the manifest's memberships (grant them afterwards)",
        )
        parser.add_argument(
            "--yes", action="store_true", help="restore: apply the plan without asking"
        )
        parser.add_argument(
            "--revision", type=int, nargs="+", help="retry: only these parked revision ids"
        )

    def handle(self, *args, action, revision=None, source=None, force=False, **options):
        self.revisions = revision
        self.source, self.force, self.options = source, force, options
        getattr(self, f"_{action}")()

    def _status(self):
        info = maintenance.status()
        self.stdout.write(f"repository:     {info['path']}")
        self.stdout.write(f"revisions:      {info['revisions']}")
        self.stdout.write(f"pending:        {info['pending']}")
        self.stdout.write(f"lag:            {info['lag_seconds']:.1f}s")
        if info["last_commit"]:
            self.stdout.write(
                f"last commit:    {info['last_commit']} (revision {info['last_revision']}, "
                f"{info['last_commit_time']:%Y-%m-%d %H:%M:%S} UTC)"
            )
        else:
            self.stdout.write("last commit:    none yet")
        self.stdout.write(f"parked:         {len(info['parked'])}")
        for line in maintenance.parked_lines():
            self.stdout.write(self.style.WARNING(f"  {line}"))

    def _verify(self):
        waiting = mirror.pending().count()
        problems = maintenance.verify()
        explained = maintenance.parked_lines()
        for line in explained:
            self.stdout.write(self.style.WARNING(line))
        if waiting:
            self.stdout.write(
                self.style.WARNING(
                    f"{waiting} revision(s) are still pending; differences may be lag. "
                    "Run `manage.py mirror drain` (or start a worker) and verify again."
                )
            )
        if problems:
            for line in problems:
                self.stdout.write(f"  {line}")
            raise CommandError(
                f"The mirror differs from the database in {len(problems)} place(s). "
                "`manage.py mirror rebuild` recreates it from the database's history."
            )
        self.stdout.write(self.style.SUCCESS("The mirror matches the database."))

    def _rebuild(self):
        with tqdm(desc="rebuild", unit="rev", disable=None) as bar:
            count = maintenance.rebuild(progress=bar)
        self.stdout.write(self.style.SUCCESS(f"Rebuilt the mirror: {count} revision(s)."))

    def _restore(self):
        source = self.source or settings.CAIRN_MIRROR_PUSH_URL
        if not source:
            raise CommandError(
                "Say which mirror to restore from: --from var/mirror.git (or the push remote's "
                "URL; CAIRN_MIRROR_PUSH_URL is the default when set)."
            )
        options = self.options
        try:
            with mirror_restore.prepared(
                source=source, force=self.force, sensitivity=options.get("sensitivity"),
                keep_verified=options.get("keep_verified", False),
                memberships=options.get("memberships", True),
            ) as plan:  # fmt: skip
                for line in mirror_restore.plan_lines(plan):
                    self.stdout.write(line)
                self._confirm()
                with tqdm(desc="restore", unit="rev", disable=None) as bar:
                    report, problems = mirror_restore.apply(plan, force=self.force, progress=bar)
        except (mirror_restore.RestoreError, KnowledgeError) as exc:
            raise CommandError(getattr(exc, "message", str(exc))) from exc
        self._report(report, source)
        if problems:
            for line in problems:
                self.stdout.write(f"  {line}")
            raise CommandError(
                f"After the restore the mirror differs from the database in {len(problems)} "
                "place(s) (listed above)."
            )
        self.stdout.write(self.style.SUCCESS("The mirror matches the database."))

    def _confirm(self):
        if self.options.get("yes"):
            return
        stdin = self.options.get("stdin") or sys.stdin
        if not (hasattr(stdin, "isatty") and stdin.isatty()):
            raise CommandError(
                "Nothing restored: no one to ask (no terminal). Read the plan above and pass "
                "--yes to apply it."
            )
        self.stdout.write("Apply this restore? [y/N] ", ending="")
        self.stdout.flush()
        if stdin.readline().strip().lower() not in ("y", "yes"):
            raise CommandError("Nothing restored (not confirmed).")

    def _report(self, report, source):
        self.stdout.write(
            f"Restored {report.projects} project(s), {report.entries} entr(y/ies) and "
            f"{report.revisions} revision(s) from {source}."
        )
        if report.created_users:
            where = (
                f" and in the guest group {settings.CAIRN_GUEST_GROUPS[0]!r}"
                if report.guests
                else ""
            )
            self.stdout.write(
                f"Created {len(report.created_users)} inactive account(s) without a password"
                f"{where} for authors and members: {', '.join(report.created_users)}. They sign "
                "in through SSO (which re-syncs their groups), or an administrator activates "
                "them, sets a password and their groups."
            )
        if report.dropped_verified:
            self.stdout.write(
                f"Dropped the verification marks of {len(report.dropped_verified)} entr(y/ies) "
                "(--keep-verified keeps them); verify them again in Cairn."
            )
        if report.recorded:
            self.stdout.write(
                "Committed to the mirror what this restore did otherwise than it said (marks "
                "dropped, revisions refused, memberships or projects as chosen above)."
            )
        for line in report.tokens_repointed:
            self.stdout.write(f"Token re-pointed to the restored projects: {line}")
        for line in report.tokens_revoked:
            self.stdout.write(
                self.style.WARNING(f"Token revoked (none of its projects came back): {line}")
            )
        for line in report.lost:
            self.stdout.write(self.style.WARNING(f"Not restored: {line}"))
        self.stdout.write(
            "Embeddings are computed by the worker (`make run` starts it); search by words "
            "works now."
        )

    def _retry(self):
        count = mirror.retry(self.revisions)
        self.stdout.write(f"Put {count} parked revision(s) back in line.")
        self._drain()

    def _drain(self):
        result = mirror.drain()
        if result.locked_out:
            self.stdout.write("Another drain is running; it will commit what is pending.")
        self.stdout.write(
            f"Committed {result.committed} revision(s) in {result.seconds:.2f}s"
            + (
                f" (recorded {result.reconciled} after an interruption)."
                if result.reconciled
                else "."
            )
        )
        if result.parked:
            self.stdout.write(
                self.style.WARNING(
                    f"Parked {result.parked} revision(s) that could not be committed; "
                    "`manage.py mirror status` shows why."
                )
            )
