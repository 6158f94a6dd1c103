"""Fitting the second stage's weights (knowledge/search/second_stage.json) and replaying it.

The rows are those the search computes (knowledge/search/reranking.features), dumped by
`bench/locomo.py --dump DIR` (and longmemeval.py, pooled.py) under each question's "stage".
The fit is pairwise logistic regression (linear RankNet): each question's evidence above each
of its other candidates, every question weighing the same, L2 `L2`, Newton's method from zeros
on standardized features: deterministic, numpy only. It reads the tune split only (LoCoMo
conv-26, 30, 41, both levels); the rows it fitted are kept as a small fixture
(tests/search/data/second_stage_tune.npz) so a test can refit them and find the same weights.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np

from bench._setup import ROOT

WEIGHTS = ROOT / "knowledge" / "search" / "second_stage.json"
FIXTURE = ROOT / "tests" / "search" / "data" / "second_stage_tune.npz"
TUNE = {"conv-26", "conv-30", "conv-41"}
L2 = 0.01
TRAINED_ON = "LoCoMo dev conv-26, conv-30, conv-41 (the tune split), session and turn level"


def labelled(dump: dict, item: dict) -> tuple[np.ndarray, np.ndarray]:
    """A dumped question's feature rows and whether each candidate is evidence."""
    gold = set(item["gold"])
    stage = item["stage"]
    labels = np.array([dump["entries"][i]["unit"] in gold for i in stage["ids"]], dtype=bool)
    return np.array(stage["rows"], dtype=np.float64).reshape(len(labels), -1), labels


def tune_groups(folder: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """The tune split's questions with evidence and other candidates among their rows, as
    float32 (what the fixture keeps), from locomo-session.pkl and locomo-turn.pkl."""
    groups = []
    for level in ("session", "turn"):
        dump = pickle.loads((folder / f"locomo-{level}.pkl").read_bytes())
        for item in dump["items"]:
            if item["sid"] not in TUNE or not item["stage"]["ids"]:
                continue
            rows, labels = labelled(dump, item)
            if labels.any() and not labels.all():
                groups.append((rows.astype(np.float32), labels))
    return groups


def write_fixture(groups, path: Path = FIXTURE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        rows=np.vstack([r for r, _ in groups]).astype(np.float32),
        labels=np.concatenate([lab for _, lab in groups]),
        sizes=np.array([len(lab) for _, lab in groups], dtype=np.int32),
    )


def read_fixture(path: Path = FIXTURE) -> list[tuple[np.ndarray, np.ndarray]]:
    data = np.load(path)
    bounds = np.cumsum(data["sizes"])[:-1]
    return list(zip(np.split(data["rows"], bounds), np.split(data["labels"], bounds), strict=True))


def fit(groups, names: tuple[str, ...], l2: float = L2) -> dict:
    """The weights, as second_stage.Model reads them, fitted on `groups` (rows, labels)."""
    x_all = np.vstack([r for r, _ in groups]).astype(np.float64)
    mean, scale = x_all.mean(axis=0), x_all.std(axis=0)
    scale[scale == 0] = 1.0
    diffs, weight = [], []
    for rows, labels in groups:
        x = (np.asarray(rows, dtype=np.float64) - mean) / scale
        d = (x[labels][:, None, :] - x[~labels][None, :, :]).reshape(-1, x.shape[1])
        diffs.append(d)
        weight.append(np.full(len(d), 1.0 / len(d)))
    d, weight = np.vstack(diffs), np.concatenate(weight) / len(diffs)
    w = np.zeros(d.shape[1])
    for _ in range(100):  # the loss is convex and smooth: a few Newton steps
        p = 1.0 / (1.0 + np.exp(d @ w))  # the chance each pair is ordered wrong
        grad = -(d.T @ (weight * p)) + l2 * w
        hess = (d.T * (weight * p * (1 - p))) @ d + l2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-12:
            break
    return {
        "features": list(names),
        "mean": dict(zip(names, mean.round(6).tolist(), strict=True)),
        "scale": dict(zip(names, scale.round(6).tolist(), strict=True)),
        "weights": dict(zip(names, w.round(6).tolist(), strict=True)),
        "l2": l2,
        "trained_on": TRAINED_ON,
    }


def write_weights(weights: dict, path: Path = WEIGHTS) -> None:
    path.write_text(json.dumps(weights, indent=1) + "\n")


def replay(dump: dict, item: dict, model, margin: float) -> list[int]:
    """The ids a search with the stage on answers, from a dumped question: its fused list
    with the top reordered by `model` unless the first hit leads by more than `margin` (as
    knowledge/search/reranking.rerank does)."""
    from knowledge.search import second_stage

    fused = [tuple(p) for p in item["stage"]["fused"]]
    if not item["stage"]["ids"] or second_stage.leads(fused, margin):
        return [i for i, _ in fused]
    rows, _ = labelled(dump, item)
    return [i for i, _ in second_stage.reorder(fused, model.score(rows))]
