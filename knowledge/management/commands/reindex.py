"""Rebuild search data: full-text vectors and embeddings, batched, resumable, with progress;
with --graph, the knowledge graph's observations and relations instead."""

from __future__ import annotations

import time

from django.core.management.base import CommandError

from knowledge.management.base import DataCommand
from knowledge.models import Entry, Project
from knowledge.search import EmbeddingUnavailable, get_provider
from knowledge.services import entries_reindex_graph
from knowledge.services.embeddings import (
    entries_embed,
    entries_reindex_text,
    lexeme_stats_refresh,
    needs_embedding,
)
from ops.commands import progress, rate


class Command(DataCommand):
    help = (
        "Rebuild full-text vectors and embeddings. Resumable: an interrupted run restarted "
        "with --missing continues where it stopped, since finished entries are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--missing",
            action="store_true",
            help="only entries without current vectors (new content, never embedded, or "
            "embedded by another model); full text is left as is",
        )
        parser.add_argument("--project", help="only this project (slug)")
        parser.add_argument(
            "--model",
            action="store_true",
            help="only entries embedded by a model other than the configured one",
        )
        parser.add_argument("--text-only", action="store_true", help="skip embeddings")
        parser.add_argument("--embeddings-only", action="store_true", help="skip full text")
        parser.add_argument(
            "--force", action="store_true", help="re-embed even entries that are current"
        )
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument(
            "--graph",
            action="store_true",
            help="only the knowledge graph: re-read every entry's observations and relations "
            "(for entries written before the graph existed); idempotent",
        )

    def handle(self, *args, **opts):
        entries = Entry.objects.all()
        if opts["project"]:
            project = Project.objects.filter(slug=opts["project"]).first()
            if project is None:
                slugs = ", ".join(Project.objects.values_list("slug", flat=True)[:20])
                raise CommandError(f"No project {opts['project']!r}. Projects: {slugs}")
            entries = entries.filter(project=project)
        batch = max(1, opts["batch_size"])
        if opts["graph"]:
            self._graph(entries, batch)
            return
        do_text = not opts["embeddings_only"] and not opts["missing"] and not opts["model"]
        do_embed = not opts["text_only"]
        try:
            provider = get_provider() if do_embed else None
        except EmbeddingUnavailable as exc:
            raise CommandError(exc.message) from exc
        if do_embed and provider is None:
            self.stdout.write("Embeddings are switched off (CAIRN_EMBEDDING_PROVIDER=none).")
            do_embed = False

        if do_text:
            ids = list(entries.order_by("pk").values_list("pk", flat=True))
            start = time.perf_counter()
            with progress("full text", total=len(ids)) as bar:
                for i in range(0, len(ids), batch * 8):
                    part = ids[i : i + batch * 8]
                    entries_reindex_text(entry_ids=part)
                    bar.update(len(part))
            self._rate("full text", len(ids), time.perf_counter() - start, "entries")

        if do_embed:
            todo = entries
            if opts["model"]:
                todo = todo.exclude(embedding_model=provider.name)
            rows = todo.order_by("pk").values_list(
                "pk", "content_hash", "title", "embedded_hash", "embedding_model"
            )
            if opts["force"]:
                ids = [row[0] for row in rows]
            else:
                ids = [
                    pk
                    for pk, content, title, embedded, model in rows.iterator()
                    if needs_embedding(
                        Entry(
                            content_hash=content,
                            title=title,
                            embedded_hash=embedded,
                            embedding_model=model,
                        ),
                        provider.name,
                    )
                ]
            start = time.perf_counter()
            counts: dict[str, int] = {}
            with progress(f"embed ({provider.name})", total=len(ids)) as bar:
                for i in range(0, len(ids), batch):
                    part = ids[i : i + batch]
                    try:
                        outcomes = entries_embed(
                            entry_ids=part, provider=provider, force=opts["force"]
                        )
                    except EmbeddingUnavailable as exc:
                        raise CommandError(
                            f"{exc.message} Done so far is kept; rerun with --missing to go on."
                        ) from exc
                    for outcome in outcomes.values():
                        counts[outcome] = counts.get(outcome, 0) + 1
                    bar.update(len(part))
            detail = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing to do"
            self._rate("embeddings", len(ids), time.perf_counter() - start, f"entries ({detail})")
        lexeme_stats_refresh()

    def _graph(self, entries, batch: int) -> None:
        ids = list(entries.order_by("pk").values_list("pk", flat=True))
        size = min(1000, batch * 8)
        start = time.perf_counter()
        with progress("graph", total=len(ids)) as bar:
            for i in range(0, len(ids), size):
                part = ids[i : i + size]
                entries_reindex_graph(actor=self.actor, entry_ids=part)
                bar.update(len(part))
        self._rate("graph", len(ids), time.perf_counter() - start, "entries")

    def _rate(self, what: str, count: int, seconds: float, unit: str) -> None:
        self.stdout.write(
            self.style.SUCCESS(
                f"{what}: {count} {unit} in {seconds:.1f} s ({rate(count, seconds)} entries/s)"
            )
        )
