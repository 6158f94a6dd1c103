"""`manage.py mirror status|verify|rebuild|drain|retry`: look after the git mirror of entry
history."""

from django.conf import settings
from django.core.management.base import CommandError
from tqdm import tqdm

from history import maintenance, mirror, restoring
from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand


class Command(DataCommand):
    help = (
        "The git mirror of entry history. status: pending revisions, lag, last commit. "
        "verify: compare the tree at HEAD with the database (exit 1 on any difference). "
        "rebuild: recreate the repository from the full history. drain: commit pending now. "
        "retry: put parked revisions (all, or --revision N ...) back in line and drain. "
        "restore --from PATH_OR_URL: rebuild an empty database from a mirror, then verify."
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
            "--revision", type=int, nargs="+", help="retry: only these parked revision ids"
        )

    def handle(self, *args, action, revision=None, source=None, force=False, **options):
        self.revisions = revision
        self.source, self.force = source, force
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
        try:
            with tqdm(desc="restore", unit="rev", disable=None) as bar:
                report, problems = restoring.restore(source=source, force=self.force, progress=bar)
        except (restoring.RestoreError, KnowledgeError) as exc:
            raise CommandError(getattr(exc, "message", str(exc))) from exc
        self.stdout.write(
            f"Restored {report.projects} project(s), {report.entries} entr(y/ies) and "
            f"{report.revisions} revision(s) from {source}."
        )
        if report.created_users:
            self.stdout.write(
                f"Created {len(report.created_users)} inactive account(s) without a password "
                f"for authors and members: {', '.join(report.created_users)}. They sign in "
                "through SSO, or an administrator activates them and sets a password."
            )
        for line in report.lost:
            self.stdout.write(self.style.WARNING(f"Not restored: {line}"))
        self.stdout.write(
            "Embeddings are computed by the worker (`make run` starts it); search by words "
            "works now."
        )
        if problems:
            for line in problems:
                self.stdout.write(f"  {line}")
            raise CommandError(
                f"After the restore the mirror differs from the database in {len(problems)} "
                "place(s) (listed above)."
            )
        self.stdout.write(self.style.SUCCESS("The mirror matches the database."))

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
