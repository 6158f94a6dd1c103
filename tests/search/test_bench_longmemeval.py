"""bench/longmemeval.py on a tiny LongMemEval-shaped fixture: pools, loading, scoring."""

import json

import pytest

from bench.longmemeval import run_level
from bench.longmemeval_data import make_pools, read_source


def item(qid, question, answer_sessions, haystack):
    """One LongMemEval item: haystack is {session id: [(role, text, has_answer), ...]}."""
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": question,
        "answer": "x",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": list(haystack),
        "haystack_dates": [f"2023/05/0{i + 1} (Mon) 09:00" for i in range(len(haystack))],
        "haystack_sessions": [
            [{"role": r, "content": c, "has_answer": h} for r, c, h in turns]
            for turns in haystack.values()
        ],
        "answer_session_ids": answer_sessions,
    }


ITEMS = [
    item(
        "q-kayak",
        "Where did I buy my kayak?",
        ["answer_k"],
        {
            "sharegpt_1": [("user", "Explain recursion in Python.", False)],
            "answer_k": [
                ("user", "I bought a red kayak at Harbor Outfitters last week.", True),
                ("assistant", "Nice purchase! Paddling is fun.", False),
            ],
        },
    ),
    item(
        "q-cello",
        "Which cello teacher did I start lessons with?",
        ["answer_c"],
        {
            "answer_c": [
                ("user", "Hello there.", False),
                ("user", "I started cello lessons with Mrs. Okafor on Tuesdays.", True),
            ],
            "ultrachat_2": [("user", "Summarize the French revolution.", False)],
        },
    ),
    item(
        "q-garden",
        "What did I plant in the garden?",
        ["answer_g"],
        {"answer_g": [("user", "I planted tomatoes and basil in the garden beds.", True)]},
    ),
    item("q-kayak_abs", "Where did I buy my canoe?", ["answer_k"], {"answer_k": []}),
]


def test_pools_hold_the_evidence_sessions_of_their_questions_only_and_alternate_splits():
    data = make_pools(ITEMS, questions=10, per_pool=2)

    questions = [q["id"] for pool in data["pools"] for q in pool["questions"]]
    assert sorted(questions) == ["q-cello", "q-garden", "q-kayak"]  # _abs left out
    assert [p["split"] for p in data["pools"]] == ["dev", "held-out"]
    sessions = {s["id"] for pool in data["pools"] for s in pool["sessions"]}
    assert sessions == {"answer_k", "answer_c", "answer_g"}  # no distractor filler
    by_id = {q["id"]: q for pool in data["pools"] for q in pool["questions"]}
    assert by_id["q-cello"]["answer_turns"] == ["answer_c:1"]
    # A fixed sample: the same items in another order give the same pools.
    assert make_pools(list(reversed(ITEMS)), questions=10, per_pool=2) == data


def test_read_source_takes_the_official_file_and_a_folder_of_s_sized_questions(tmp_path):
    official = tmp_path / "longmemeval_s_cleaned.json"
    official.write_text(json.dumps(ITEMS))
    assert [it["question_id"] for it in read_source(official)] == [
        it["question_id"] for it in ITEMS
    ]
    folder = tmp_path / "lme_jsons"
    folder.mkdir()
    (folder / "48_q-kayak.json").write_text(json.dumps(ITEMS[0]))
    (folder / "1_q-kayak.json").write_text(json.dumps(ITEMS[0]))  # the oracle's copy
    assert len(list(read_source(folder))) == 1
    with pytest.raises(SystemExit, match="No LongMemEval data"):
        list(read_source(tmp_path / "missing"))


@pytest.mark.parametrize(
    ("level", "expected"),
    [("session", 3), ("turn", 3)],
)
def test_each_question_finds_its_own_evidence_first_in_its_pool(agent, level, expected):
    pools = make_pools(ITEMS, questions=10, per_pool=3)["pools"]

    class NoModel:
        embedded = 0

    result = run_level(pools, level, ["text"], agent, NoModel())

    dev = result["splits"]["dev"]
    assert dev["text"]["questions"] == expected
    assert dev["text"]["recall@1"] == 1.0
    assert dev["bm25-stem"]["recall@1"] == 1.0
    assert result["entries"] == (3 if level == "session" else 5)
    assert result["types"]["single-session-user"]["text"] == {
        "questions": 3,
        "recall@5": 1.0,
        "mrr": 1.0,
    }
