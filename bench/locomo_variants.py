"""Variants measured by bench/locomo_tune.py (name -> run() keyword arguments)."""

from __future__ import annotations

from bench.locomo_tune import engine_text, variant_text

VARIANTS = {
    "engine": {"text_fn": engine_text},
    "base": {"text_fn": variant_text()},
}
for w in ("{0.1, 0.2, 0.4, 0.4}", "{0.1, 0.2, 0.4, 0.2}", "{0.1, 0.2, 0.2, 0.2}",
          "{0.1, 0.2, 0.4, 0.6}", "{0.1, 0.4, 0.4, 1.0}", "{0.1, 0.2, 0.2, 1.0}"):
    VARIANTS["w" + w.replace(" ", "")] = {"text_fn": variant_text(weights=w)}
for n in (0, 2, 8, 16, 32, 33):
    VARIANTS[f"norm{n}"] = {"text_fn": variant_text(norm=n)}
for c in (0.1, 0.3, 1.0):
    VARIANTS[f"cover{c}"] = {"text_fn": variant_text(cover=c)}
