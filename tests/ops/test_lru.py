"""The bounded cache: least recently used out first, in bytes, with a lifetime."""

import time

import numpy as np

from ops.lru import BoundedCache, approx_size


def test_values_are_measured_by_what_they_hold():
    small, large = approx_size({"a": "x"}), approx_size({"a": "x" * 100_000})
    assert large - small >= 99_000
    assert approx_size([np.zeros(1000, dtype=np.float32)]) >= 4000
    shared = "y" * 50_000
    assert approx_size([shared, shared]) < 2 * 50_000  # one object counted once


def test_the_least_recently_used_go_first_past_the_budget():
    cache = BoundedCache(1000, sizeof=lambda value: 100)
    for key in range(10):
        cache.put(key, key)
    cache.get(0)  # used: kept over 1
    cache.put(10, 10)
    assert cache.get(0) == 0
    assert cache.get(1) is None
    assert cache.bytes <= 1000 and len(cache) == 10


def test_a_value_over_a_quarter_of_the_budget_is_not_kept():
    cache = BoundedCache(1000, sizeof=len)
    assert cache.put("small", "x" * 250)
    assert not cache.put("large", "x" * 251)
    assert cache.get("large") is None and cache.get("small")


def test_values_expire_after_their_seconds_and_a_budget_of_zero_keeps_nothing():
    cache = BoundedCache(1000, seconds=0.05, sizeof=len)
    cache.put("k", "v")
    assert cache.get("k") == "v"
    time.sleep(0.06)
    assert cache.get("k") is None and cache.bytes == 0
    off = BoundedCache(lambda: 0, sizeof=len)
    assert not off.put("k", "v") and off.get("k") is None
