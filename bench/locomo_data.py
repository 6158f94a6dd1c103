"""LoCoMo conversations as bench/locomo.py reads and writes them: the evidence ids, the sessions
and turns, their ingestion into one project per conversation (session or turn level), and the
pickles `--dump DIR` leaves for offline tuning. Cairn is imported inside the functions, so this
module imports before Django is set up."""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path


def parse_evidence(raw: list) -> list[str]:
    ids = []
    for item in raw:
        for part in str(item).split(";"):
            part = part.strip()
            if re.fullmatch(r"D\d+:\d+", part):
                ids.append(part)
    return ids


def sessions_of(conv: dict) -> list[tuple[int, str, list[dict]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list):
            n = int(m.group(1))
            out.append((n, conv.get(f"session_{n}_date_time", ""), turns))
    return sorted(out)


def turn_line(turn: dict) -> str:
    line = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        line += f" [shares an image: {turn['blip_caption']}]"
    return line


def ingest(samples, level: str, actor) -> tuple[dict[int, str], dict[str, str], float]:
    """Returns (entry id -> evidence unit, sample id -> project slug, seconds)."""
    from knowledge.errors import AlreadyExists
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create

    units: dict[int, str] = {}
    projects: dict[str, str] = {}
    start = time.perf_counter()
    from tqdm import tqdm

    for sample in tqdm(samples, desc=f"ingest {level}", unit="conv"):
        slug = f"locomo-{level}-{sample['sample_id']}"
        with contextlib.suppress(AlreadyExists):
            project_create(actor=actor, slug=slug, fields=ProjectFields(name=slug))
        projects[sample["sample_id"]] = slug
        for n, date, turns in sessions_of(sample["conversation"]):
            if level == "session":
                body = "\n".join(turn_line(t) for t in turns)
                entry = entry_upsert(
                    actor=actor,
                    project=slug,
                    fields=EntryFields(title=f"Session {n} ({date})", body=body, kind="session"),
                ).entry
                units[entry.pk] = f"S{n}"
            else:
                for t in turns:
                    entry = entry_upsert(
                        actor=actor,
                        project=slug,
                        subtopic=f"session-{n}",
                        fields=EntryFields(
                            title=f"{t['dia_id']} {t['speaker']} ({date})",
                            body=turn_line(t),
                            kind="turn",
                        ),
                    ).entry
                    units[entry.pk] = t["dia_id"]
    return units, projects, time.perf_counter() - start


def unit_of(evidence: str, level: str) -> str:
    return "S" + evidence[1:].split(":")[0] if level == "session" else evidence


def dump_item(sid, question, qa, gold, found, bm25_ranked, stage: dict) -> dict:
    from knowledge.search.providers import get_provider
    from knowledge.search.query_vectors import query_vector

    provider = get_provider()
    return {
        "sid": sid,
        "question": question,
        "category": qa.get("category"),
        "gold": sorted(gold),
        "text": found.text,
        "text_scores": found.text_scores,
        "semantic": found.semantic,
        "semantic_scores": found.semantic_scores,
        "bm25": bm25_ranked,
        "vector": query_vector(provider, question).result() if provider else None,
        "stage": stage,
    }


def stage_inputs(actor, question: str, filters) -> dict:
    """The second stage's candidates and feature rows as the search computes them: the fused
    list above the relevance floor (knowledge/search/engine.first_stage), its top
    CAIRN_SEARCH_RERANK_TOP and their rows (knowledge/search/reranking.features), for
    bench/stages_tune.py --write-weights."""
    from django.conf import settings

    from knowledge.search.engine import first_stage
    from knowledge.search.reranking import features

    fused, found, _ = first_stage(actor, question, mode="hybrid", filters=filters)
    top = fused[: settings.CAIRN_SEARCH_RERANK_TOP]
    rows = features(question, top, found).tolist() if top else []
    return {"fused": fused, "ids": [i for i, _ in top], "rows": rows}


def write_dump(
    folder: Path, level: str, items: list[dict], units, projects, name: str = "locomo"
) -> None:
    """Everything offline tuning needs: the questions' candidate lists and the entries."""
    import pickle

    from knowledge.models import Entry

    folder.mkdir(parents=True, exist_ok=True)
    entries = {
        pk: {"title": t, "body": b, "created": c, "unit": units[pk]}
        for pk, t, b, c in Entry.objects.filter(pk__in=list(units)).values_list(
            "pk", "title", "body", "created_at"
        )
    }
    payload = {"level": level, "items": items, "entries": entries, "projects": projects}
    (folder / f"{name}-{level}.pkl").write_bytes(pickle.dumps(payload))
