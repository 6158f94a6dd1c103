"""Requests per minute from one address to the registration and token endpoints.

Counts live in Django's cache, as the admin's login limit's do (memory_site/login_limits.py):
per process with the default local-memory cache, shared when CACHES points at Redis. The
address is uvicorn's view of the client: behind a proxy in FORWARDED_ALLOW_IPS, the client's.
"""

from __future__ import annotations

import hashlib
import time

from django.core.cache import cache


def over_limit(scope, what: str, per_minute: int) -> int:
    """0 when this request may go on, else the seconds until the address may try again."""
    if per_minute <= 0:
        return 0
    address = (scope.get("client") or ("?", 0))[0]
    window = int(time.time() // 60)
    key = "cairn-oauth-" + hashlib.sha256(f"{what}|{address}|{window}".encode()).hexdigest()
    cache.add(key, 0, 120)
    try:
        count = cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, 120)
        count = 1
    return 0 if count <= per_minute else 60 - int(time.time() % 60)
