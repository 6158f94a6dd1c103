"""The synthetic corpus of bench/scale.py: Zipf-distributed pseudo-words, log-normal lengths,
8 projects, 10 subtopics each, kinds and tags; entries written through the services link to two
earlier ones; vectors synthesized from a real sample's space."""

from __future__ import annotations

import itertools
import random

SYLLABLES = [
    "ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "gro", "shi", "an", "el", "or",
    "ul", "ber", "con", "dar", "fen", "gil", "hal", "jor", "kel", "lin", "mor", "nes", "pol",
]  # fmt: skip
STOP = ["the", "a", "of", "and", "to", "in", "is", "it", "for", "on", "with", "as", "was"]
PROJECTS = 8
SUBTOPICS = ["ops", "ops/storage", "ops/network", "people", "sales/emea", "sales/apac",
             "research/2026-08", "research/2026-09", "support/incidents", ""]  # fmt: skip
KINDS = ["note", "decision", "fact", "session", "task"]
TAGS = ["alpha", "beta", "gamma", "delta", "urgent", "customer", "infra", "ml"]


class Corpus:
    def __init__(self, seed: int = 7, vocabulary: int = 20000) -> None:
        self.rng = random.Random(seed)
        words = set()
        while len(words) < vocabulary:
            words.add("".join(self.rng.choices(SYLLABLES, k=self.rng.randint(2, 4))))
        self.titles: dict[str, list[str]] = {}
        self.words = sorted(words)
        self.rng.shuffle(self.words)
        # Zipf-like frequencies, like real text: a few words everywhere, most words rare.
        self.cum_weights = list(
            itertools.accumulate(1 / (rank + 1) ** 1.05 for rank in range(vocabulary))
        )

    def text(self, n: int) -> str:
        picked = self.rng.choices(self.words, cum_weights=self.cum_weights, k=n)
        out = []
        for i, word in enumerate(picked):
            if self.rng.random() < 0.3:
                out.append(self.rng.choice(STOP))
            out.append(word)
            if i % 14 == 13:
                out[-1] += "."
                if self.rng.random() < 0.3:
                    out[-1] += "\n\n"
        return " ".join(out)

    def entry(self, i: int) -> dict:
        length = int(min(1500, max(15, self.rng.lognormvariate(4.6, 0.9))))  # median ~100 words
        return {
            "project": f"scale-{i % PROJECTS}",
            "subtopic": self.rng.choice(SUBTOPICS),
            "title": f"{self.text(4).replace('.', '').strip()} {i}",
            "body": self.text(length),
            "kind": self.rng.choice(KINDS),
            "tags": self.rng.sample(TAGS, self.rng.randint(0, 3)),
        }

    def linked_entry(self, words: int | None = None) -> dict:
        """The next entry written through the services: it names two entries written before
        it in its project as relations, so build_context has neighbours to walk."""
        self.linked = getattr(self, "linked", 0) + 1
        data = self.entry(10_000_000 + self.linked)
        if words:
            data["body"] = self.text(words)
        earlier = self.titles.setdefault(data["project"], [])
        links = self.rng.sample(earlier, min(2, len(earlier)))
        data["body"] += "".join(f"\n- relates_to [[{title}]]" for title in links)
        earlier.append(data["title"])
        return data

    def query(self) -> str:
        # Questions mix mid-frequency topic words with common and unknown ones.
        words = self.rng.choices(self.words[50:4000], k=self.rng.randint(2, 5))
        return " ".join(["what", "about", *words, "zzqx"])


def synthesize(entries, real_vectors, rng) -> None:
    """Vectors for `entries` from the real sample's space, one per real chunk boundary (0.7·a
    + 0.3·b + noise, normalized), and the entries marked embedded."""
    import numpy as np
    from django.conf import settings

    from knowledge.models import Entry, EntryChunk
    from knowledge.search.chunking import chunk_text
    from knowledge.search.providers import get_provider
    from knowledge.services.embeddings import embedding_key

    model = get_provider().name
    chunks = []
    for entry in entries:
        pieces = chunk_text(
            entry.body, size=settings.CAIRN_CHUNK_WORDS, overlap=settings.CAIRN_CHUNK_OVERLAP
        ) or [None]
        for ordinal, piece in enumerate(pieces):
            a, b = rng.integers(0, len(real_vectors), 2)
            vec = 0.7 * real_vectors[a] + 0.3 * real_vectors[b]
            vec = vec + rng.normal(0, 0.02, vec.shape)
            vec = vec / np.linalg.norm(vec)
            chunks.append(
                EntryChunk(
                    entry=entry,
                    ordinal=ordinal,
                    text=piece.text if piece else entry.title,
                    model=model,
                    embedding=vec.astype(np.float32),
                )
            )
    EntryChunk.objects.filter(entry__in=entries).delete()
    EntryChunk.objects.bulk_create(chunks, batch_size=1000)
    for entry in entries:
        entry.embedded_hash = embedding_key(entry)
        entry.embedding_model = model
        entry.embed_pending_since = None
    Entry.objects.bulk_update(
        entries, ["embedded_hash", "embedding_model", "embed_pending_since"], 1000
    )
