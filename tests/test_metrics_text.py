"""Δsem,syn on text the authors' tokenizer cannot read, and the paper profile's WMS words."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics import score_pairs
from metrics.profiles import get_profile
from metrics.scoring import semantic_scorer
from metrics.semantic import WordMover, WordVectors
from metrics.syntactic import SyntacticScorer, needs_unicode, unicode_words

IDENTICAL = {
    "chinese": "北京是中华人民共和国的首都",
    "russian": "Москва — столица России и крупнейший город страны",
    "arabic": "القاهرة هي عاصمة جمهورية مصر العربية",
    "greek": "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας",
    "hindi": "नई दिल्ली भारत की राजधानी है",
}


def test_identical_non_latin_texts_score_syn_one() -> None:
    texts = list(IDENTICAL.values())
    r = score_pairs(texts, texts, measures=["rouge1", "rougeL", "bleu"], check_language=False)  # given as English
    assert r["syn"] == [1.0] * len(texts)
    assert "|tok:auto|" in r["signature"]
    r = score_pairs(texts, texts, measures=["rouge1", "rougeL", "bleu"], language="mul")  # ISO 639: several languages
    assert r["syn"] == [1.0] * len(texts)
    assert "|tok:unicode|lang:mul|" in r["signature"]


def test_the_authors_tokenizer_on_non_latin_text_is_nan_not_zero() -> None:
    with pytest.warns(UserWarning, match="have no score"):
        r = score_pairs(
            [IDENTICAL["russian"]],
            ["Москва — крупнейший город России"],
            measures=["rouge1", "bleu"],
            tokenize="rouge",
            check_language=False,
        )
    assert math.isnan(r["rouge1"][0]) and math.isnan(r["bleu"][0])
    with pytest.raises(ValueError, match="unknown tokenizer 'spaces'"):
        score_pairs(["a"], ["a"], measures=["bleu"], tokenize="spaces")


def test_unicode_words_match_the_authors_tokens_on_english() -> None:
    scorer = SyntacticScorer("unicode")
    english = "Troops clearing rubble after the May air-raid on Belfast, 1941 (don't)."
    assert not needs_unicode(english)
    assert scorer.tokens(english, english)[0] == SyntacticScorer("rouge").tokens(english, english)[0]
    assert unicode_words("東京タワー in 1958") == ["東", "京", "タ", "ワ", "ー", "in", "1958"]
    assert unicode_words("हिन्दी") == ["हिन्दी"]  # vowel signs stay inside their word
    assert needs_unicode("The Moscow Kremlin (Московский Кремль)")
    assert not needs_unicode("A café in Paris")  # the authors' tokenizer keeps "caf": their scores for English


def test_similar_non_latin_texts_score_between_zero_and_one() -> None:
    """Given as English against the check (the English model still reads Cyrillic word pieces)."""
    r = score_pairs([IDENTICAL["russian"]], ["Москва — крупнейший город России"], check_language=False)
    assert 0.3 < r["rouge1"][0] < 1.0
    assert all(0.0 < r[measure][0] < 1.0 for measure in ("wms", "bert", "st"))


def test_paper_wms_words_are_stemmed_tokens_without_stop_words() -> None:
    """The paper profile's WMS path on its own: rouge_score's stemmed tokens, then the stop words, then gensim's WMD."""
    from gensim.models import KeyedVectors

    scorer = semantic_scorer(get_profile("paper"))
    words = scorer.wms_words
    stemmed = ["the", "rabbit", "were", "depict", "on", "thi", "postcard"]
    assert words("The rabbits were depicted on this postcard") == stemmed
    stop_words = frozenset({"the", "were", "on", "this", "a"})  # "this" is stemmed to "thi" first, so "thi" stays
    rows = {"rabbit": [1.0, 0.0, 0.2], "depict": [0.1, 1.0, 0.0], "thi": [0.3, 0.3, 1.0], "postcard": [0.0, 0.4, 1.0]}
    rows["bunni"] = [0.9, 0.1, 0.3]
    keyed = KeyedVectors(vector_size=3)
    keyed.add_vectors(list(rows), np.array(list(rows.values())))
    mover = WordMover(WordVectors.from_keyed_vectors(keyed), stop_words, words)
    first, second = "The rabbits were depicted on this postcard", "A bunny postcard"
    assert mover.content_words(first) == ["rabbit", "depict", "thi", "postcard"]
    expected = 1 - keyed.wmdistance(mover.content_words(first), mover.content_words(second)) / 2
    assert mover.similarity(mover.bag(first), mover.bag(second)) == pytest.approx(expected, abs=1e-9)
    assert math.isnan(mover.similarity(mover.bag("The were on"), mover.bag(second)))  # infinite distance
