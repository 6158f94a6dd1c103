"""`manage.py search "query" --user NAME [--project P]`: the memory's search, for operators and
scripts (the same search_entries every surface uses), printing compact hits."""

import json

from django.core.management.base import CommandError

from knowledge.errors import KnowledgeError
from knowledge.management.base import DataCommand
from knowledge.search import SearchFilters, search_entries


class Command(DataCommand):
    help = (
        "Search the memory as a user sees it (a superuser sees every project) and print one "
        "line per hit: id, score, project/path, title, snippet. --json for scripts."
    )

    def add_arguments(self, parser):
        parser.add_argument("query", help="words to look for; quotes for phrases")
        self.add_acting_argument(
            parser, "--user", required=True, help="whose view of the memory to search"
        )
        parser.add_argument("--project", default=None, help="project slug or name")
        parser.add_argument("--limit", type=int, default=10, help="hits (1-50, default 10)")
        parser.add_argument("--mode", default="hybrid", choices=["hybrid", "text", "semantic"])
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="one JSON object per line"
        )

    def agent_label(self, user, options):
        return "cli:search"

    def handle(self, *args, query, user, project, limit, mode, as_json, **options):
        try:
            filters = SearchFilters.parse(project=project)
            hits = search_entries(self.actor, query, filters=filters, limit=limit, mode=mode)
        except KnowledgeError as exc:
            raise CommandError(exc.message) from exc
        if as_json:
            for hit in hits:
                self.stdout.write(_json_line(hit))
            return
        if not hits:
            self.stdout.write(f"No entries match {query!r} for {user}.")
            return
        for hit in hits:
            where = f"{hit.project}/{hit.path}".rstrip("/")
            self.stdout.write(f"{hit.id:>6}  {hit.score:.3f}  {where}  {hit.title}")
            if hit.snippet:
                self.stdout.write(f"        {' '.join(hit.snippet.split())[:160]}")


def _json_line(hit) -> str:
    return json.dumps(
        {
            "id": hit.id,
            "short_id": hit.short_id,
            "title": hit.title,
            "project": hit.project,
            "path": hit.path,
            "kind": hit.kind,
            "tags": hit.tags,
            "status": hit.status,
            "updated": hit.updated.isoformat(),
            "score": round(hit.score, 4),
            "snippet": hit.snippet,
        }
    )
