"""Pushing the mirror's branch to a remote (CAIRN_MIRROR_PUSH_URL), when it is behind."""

from __future__ import annotations

import logging

from django.conf import settings

from history.mirror.queue import open_mirror

log = logging.getLogger("history.mirror")  # one logger for the mirror, as before the split

PUSHED_MARKER = "cairn-pushed"  # inside the bare repository: the last commit the remote got


def push() -> bool:
    """Push the branch to CAIRN_MIRROR_PUSH_URL when the remote is behind. Failures are logged,
    never raised; the marker is only moved on success, so the next drain or sweep retries."""
    url = settings.CAIRN_MIRROR_PUSH_URL
    if not url:
        return False
    repo = open_mirror()
    head = repo.head()
    marker = repo.path / PUSHED_MARKER
    if head is None or (marker.exists() and marker.read_text().strip() == f"{head.id} {url}"):
        return False
    try:
        repo.push(
            url,
            username=settings.CAIRN_MIRROR_PUSH_USERNAME,
            password=settings.CAIRN_MIRROR_PUSH_PASSWORD,
            ssh_key=settings.CAIRN_MIRROR_PUSH_SSH_KEY,
        )
    except Exception as exc:
        log.warning("Mirror: push to %s failed (%s); the next drain or sweep retries.", url, exc)
        return False
    marker.write_text(f"{head.id} {url}\n")
    return True
