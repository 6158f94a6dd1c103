"""Snapshot files for interfaces (tools/list, OpenAPI): a change must be deliberate.

Set CAIRN_UPDATE_SNAPSHOTS=1 to rewrite them, then review the diff before committing.
"""

import json
import os
from pathlib import Path

SNAPSHOT_DIR = Path(__file__).parent / "snapshots"


def assert_matches_snapshot(name: str, data) -> None:
    path = SNAPSHOT_DIR / name
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("CAIRN_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if os.environ.get("CAIRN_UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"Wrote a new snapshot {path}; review and commit it.")
        return
    assert json.loads(path.read_text()) == json.loads(text), (
        f"{name} changed. If deliberate, rerun with CAIRN_UPDATE_SNAPSHOTS=1 and commit the diff."
    )
