"""What names a run: the id a client marks its writes with, and the mark of the ids Cairn gives.

A run is what one token (and its agent label) wrote: the writes a client marked with one run id
(the X-Cairn-Run header), or else the token's writes that follow each other with no gap longer
than CAIRN_RUN_GAP_MINUTES. Each revision records its run (knowledge/services/_kernel/runs.py);
a run is named on the pages and in the API by the number of one of its revisions.
"""

from __future__ import annotations

import re

RUN_HEADER = "X-Cairn-Run"
GENERATED = "~"  # the ids Cairn gives start with it; a client's never do
MAX_CLIENT_RUN = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9._:@/+-]+")


def client_run(raw: str | bytes | None) -> str:
    """A client's run id as recorded: letters, digits and `._:@/+-` kept, at most 64 of them
    (an id is a label, never refused: a request is not failed over its header)."""
    if isinstance(raw, bytes):
        raw = raw.decode("latin-1")
    return _NOT_ALLOWED.sub("-", (raw or "").strip())[:MAX_CLIENT_RUN].strip("-")


def marked_by_client(run: str) -> bool:
    return bool(run) and not run.startswith(GENERATED)
