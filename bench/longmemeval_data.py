"""LongMemEval-S questions cut into pools a 2-core machine can embed (bench/data/README.md).

LongMemEval (Wu et al., ICLR 2025, MIT licence) gives each of its 500 questions its own haystack
of ~48 chat sessions of ~1,650 words: 19,133 distinct sessions, ~200,000 passages for Cairn's
embedder, about a day here. A pool keeps the benchmark's task (find the sessions that answer a
question among many sessions of one user's chat history) at a size that embeds in minutes: the
evidence sessions of `per_pool` questions, put together as one history, so every question's
evidence sessions are the other questions' distractors. Questions are taken in the order of the
sha256 of their id (a fixed sample of every question type); pools alternate dev / held-out.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

# Where the per-question files sit in the one public repository that ships LongMemEval-S
# whole (hussainzs/Memoria); their names start with the haystack's size (S: ~38-58 sessions).
MIRROR_FOLDER = "evaluations/data/lme_jsons"
S_SIZES = range(20, 100)


def _order(question_id: str) -> str:
    return hashlib.sha256(question_id.encode()).hexdigest()


def _size_of(name: str) -> int:
    m = re.match(r"(\d+)_", Path(name).name)
    return int(m.group(1)) if m else -1


def read_source(source: Path) -> Iterator[dict]:
    """LongMemEval-S items from the official longmemeval_s_cleaned.json, a folder of
    per-question files, or a git directory of hussainzs/Memoria (read without a checkout)."""
    if source.is_file():
        yield from json.loads(source.read_text())
    elif (source / "HEAD").exists() and (source / "objects").is_dir():
        git = ["git", "--git-dir", str(source)]
        names = subprocess.run(
            [*git, "ls-tree", "-r", "--name-only", "HEAD", MIRROR_FOLDER],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        for name in names:
            if _size_of(name) in S_SIZES:
                blob = subprocess.run(
                    [*git, "show", f"HEAD:{name}"],
                    capture_output=True, check=True,
                ).stdout  # fmt: skip
                yield json.loads(blob)
    elif source.is_dir():
        for path in sorted(source.glob("*.json")):
            if _size_of(path.name) in S_SIZES or _size_of(path.name) < 0:
                yield json.loads(path.read_text())
    else:
        raise SystemExit(
            f"No LongMemEval data at {source}: pass longmemeval_s_cleaned.json, a folder of "
            "per-question files, or a git directory of hussainzs/Memoria"
        )


def describe(source: Path) -> str:
    """What the pools were cut from, without this machine's paths."""
    if (source / "HEAD").exists() and (source / "objects").is_dir():
        commit = subprocess.run(
            ["git", "--git-dir", str(source), "rev-parse", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        return f"hussainzs/Memoria@{commit}:{MIRROR_FOLDER} (LongMemEval-S cleaned)"
    return source.name


def _turns(session: list) -> list[dict]:
    out = []
    for turn in session:
        turn = json.loads(turn) if isinstance(turn, str) else turn
        out.append(
            {
                "role": turn["role"],
                "content": turn["content"],
                "has_answer": bool(turn.get("has_answer")),
            }
        )
    return out


def make_pools(items, *, questions: int, per_pool: int, source: str = "") -> dict:
    """The first `questions` answerable questions in sha256 order, `per_pool` to a pool."""
    answerable = sorted(
        (it for it in items if not str(it["question_id"]).endswith("_abs")),
        key=lambda it: _order(str(it["question_id"])),
    )[:questions]
    pools = []
    for start in range(0, len(answerable), per_pool):
        group = answerable[start : start + per_pool]
        sessions: dict[str, dict] = {}
        asked = []
        for it in group:
            by_id = dict(
                zip(
                    it["haystack_session_ids"],
                    zip(it["haystack_dates"], it["haystack_sessions"], strict=True),
                    strict=True,
                )
            )
            turns = []
            for sid in it["answer_session_ids"]:
                date, raw = by_id[sid]
                session = sessions.setdefault(sid, {"id": sid, "date": date, "turns": _turns(raw)})
                turns += [f"{sid}:{i}" for i, t in enumerate(session["turns"]) if t["has_answer"]]
            asked.append(
                {
                    "id": it["question_id"],
                    "type": it["question_type"],
                    "question": it["question"],
                    "answer": str(it["answer"]),
                    "date": it.get("question_date", ""),
                    "answer_session_ids": list(it["answer_session_ids"]),
                    "answer_turns": turns,
                }
            )
        n = len(pools)
        pools.append(
            {
                "id": f"pool-{n}",
                "split": "dev" if n % 2 == 0 else "held-out",
                "sessions": sorted(sessions.values(), key=lambda s: (s["date"], s["id"])),
                "questions": asked,
            }
        )
    return {
        "source": source,
        "licence": "LongMemEval, MIT licence, Copyright (c) 2024 Di Wu",
        "order": "sha256(question_id), abstention questions (_abs) left out",
        "per_pool": per_pool,
        "pools": pools,
    }


def session_body(session: dict) -> str:
    return "\n".join(turn_line(t) for t in session["turns"])


def turn_line(turn: dict) -> str:
    return f"{turn['role'].capitalize()}: {turn['content']}"
