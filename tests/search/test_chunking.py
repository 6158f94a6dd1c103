from knowledge.search.chunking import chunk_text


def words(n: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def test_short_text_is_one_chunk():
    chunks = chunk_text("Just a short note.\n\nWith two paragraphs.", size=200, overlap=40)
    assert len(chunks) == 1
    assert "short note" in chunks[0].text and "two paragraphs" in chunks[0].text


def test_empty_text_has_no_chunks():
    assert chunk_text("  \n\n ", size=200, overlap=40) == []


def test_long_text_is_split_near_the_size_with_overlap():
    body = "\n\n".join(words(50, f"p{i}-") for i in range(12))  # 600 words, 12 paragraphs
    chunks = chunk_text(body, size=200, overlap=60)
    assert 3 <= len(chunks) <= 5
    assert all(len(c.text.split()) <= 200 for c in chunks)
    # consecutive chunks share a paragraph (the overlap) and nothing is lost
    assert chunks[1].text.split("\n")[0] in chunks[0].text
    all_words = set(" ".join(c.text for c in chunks).split())
    assert all_words == set(body.split())


def test_headings_start_new_chunks_and_are_kept_as_context():
    body = f"# Setup\n\n{words(120, 's')}\n\n## Deploy\n\n{words(120, 'd')}"
    chunks = chunk_text(body, size=200, overlap=40)
    assert [c.heading for c in chunks] == ["Setup", "Deploy"]
    assert chunks[1].text.startswith("d0")  # no overlap across a section boundary
    assert chunks[1].for_embedding("Runbook").startswith("Runbook — Deploy\n")


def test_a_list_of_short_lines_splits_between_lines():
    body = "\n".join(f"Speaker{i % 2}: {words(25, f'l{i}-')}" for i in range(20))  # 520 words
    chunks = chunk_text(body, size=200, overlap=30)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert all(line.startswith("Speaker") for line in chunk.text.split("\n"))


def test_one_huge_paragraph_is_cut_at_sentences():
    body = " ".join(f"Sentence number {i} has a few words in it." for i in range(100))
    chunks = chunk_text(body, size=100, overlap=20)
    assert len(chunks) >= 8
    assert all(len(c.text.split()) <= 100 for c in chunks)
    assert all(c.text.rstrip().endswith(".") for c in chunks)
