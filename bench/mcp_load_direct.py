"""The child modes of bench/mcp_load.py, run in a process of their own on the bench database:
`--embed` embeds the projects' entries with bench/locomo.py's passage cache, `--direct` makes the
same writes and searches through the services in-process (the floor the MCP numbers are compared
with). Django is set up inside the functions, so this module imports before it is."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.mcp_load_stages import pick_questions, stage_p50, summarize  # noqa: E402


def embed_projects(prefix: str) -> float:
    """Embed the projects' entries (the worker's code) with bench/locomo.py's passage cache."""
    from bench.locomo_scoring import CachedProvider
    from knowledge.models import Entry
    from knowledge.search.providers import get_provider
    from knowledge.services.embeddings import entries_embed, lexeme_stats_refresh

    start = time.perf_counter()
    provider = CachedProvider(get_provider(), ROOT / "var" / "bench-cache" / "embeddings.sqlite3")
    ids = list(Entry.objects.filter(project__slug__startswith=prefix).values_list("pk", flat=True))
    for i in tqdm(range(0, len(ids), 16), desc=f"embed {prefix}*", file=sys.stderr):
        entries_embed(entry_ids=ids[i : i + 16], provider=provider)
    lexeme_stats_refresh()
    return time.perf_counter() - start


def direct(sessions, questions, searches: int) -> list[dict]:
    """The same writes and searches through the services in-process (no HTTP, no MCP): the floor
    the MCP numbers are compared with. Runs in a child process on the bench database."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    os.environ.pop("CAIRN_SEARCH_PROFILE", None)
    django.setup()
    from django.contrib.auth import get_user_model

    from knowledge.actors import Actor
    from knowledge.search import SearchFilters, search_entries, stages
    from knowledge.services import EntryFields, entry_upsert, project_create

    actor = Actor.for_user(get_user_model().objects.get(username="bench"), agent="agent:bench")
    for conv in sorted({s["conv"] for s in sessions}):
        project_create(actor=actor, slug=f"d-{conv}")
    lat = []
    start = time.perf_counter()
    for s in sessions:
        t = time.perf_counter()
        entry_upsert(
            actor=actor,
            project=f"d-{s['conv']}",
            fields=EntryFields(title=s["title"], body=s["body"], kind="session"),
            subtopic="sessions",
        )
        lat.append(time.perf_counter() - t)
    rows = [summarize("upsert (services, no MCP)", 1, lat, time.perf_counter() - start)]
    embed_projects("d-")
    picked = pick_questions(questions, searches, 0)
    lat, calls = [], []
    start = time.perf_counter()
    for q in picked:
        t = time.perf_counter()
        with stages.collect() as spent:
            filters = SearchFilters.parse(project=f"d-{q['conv']}")
            for hit in search_entries(actor, q["q"], filters=filters, limit=10):
                hit.as_dict()  # the adapter's work MCP does too
        lat.append(time.perf_counter() - t)
        calls.append(spent)
    rows.append(summarize("search (services, no MCP)", 1, lat, time.perf_counter() - start))
    rows[-1]["stages_p50_ms"] = stage_p50(calls)
    return rows
