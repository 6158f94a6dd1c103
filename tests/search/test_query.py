from knowledge.search.query import parse


def test_plain_words_are_all_optional():
    parsed = parse("when did Caroline go to the support group?")
    assert parsed.required == [] and parsed.excluded == []
    assert "Caroline" in parsed.words and "group?" in parsed.words


def test_quoted_phrase_is_required_and_minus_excludes():
    parsed = parse('"support group" caroline -melanie -"board games"')
    assert parsed.required == [["support group"]]
    assert parsed.words == ["caroline"]
    assert parsed.excluded == ["melanie", "board games"]


def test_or_between_phrases_makes_alternatives():
    parsed = parse('"red car" OR "blue bike" trip')
    assert parsed.required == [["red car", "blue bike"]]
    assert parsed.words == ["trip"]


def test_or_between_a_phrase_and_a_word_requires_nothing():
    parsed = parse('"red car" OR bike')
    assert parsed.required == []
    assert parsed.words == ["red car", "bike"]


def test_lone_symbols_and_unclosed_quotes_do_not_break_parsing():
    assert parse("- OR").is_empty
    assert parse('"unclosed phrase').required == [["unclosed phrase"]]
    assert parse("e-mail").words == ["e-mail"]
