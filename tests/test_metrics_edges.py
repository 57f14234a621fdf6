"""Δsem,syn where nothing or too much was seen: unreadable text, copies, no pairs, invalid text, huge texts."""

from __future__ import annotations

import math
import tracemalloc

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

import metrics
from metrics import score_pairs
from metrics.profiles import get_profile
from metrics.scoring import DERIVED, MEASURES, semantic_scorer
from metrics.semantic import WMS_WORDS, word_pieces
from metrics.syntactic import SyntacticScorer

SEMANTIC_AND_DERIVED = ("wms", "bert", "st", "sem", "delta")
# All-MiniLM-L6-v2's tokenizer knows none of these scripts: each word is one [UNK] piece.
UNREADABLE = ["ሰላም ለዓለም", "ᚠᚢᚦᚨᚱᚲ ᚠᚢᚦᚨᚱᚲ runes", "กรุงเทพมหานคร เป็นเมืองหลวง"]


@pytest.fixture(scope="module")
def minilm():  # noqa: ANN201 - the module's one SemanticScorer
    return semantic_scorer(get_profile("minilm"))


def test_text_the_model_reads_mostly_as_unknown_is_nan_and_counted(minilm) -> None:  # noqa: ANN001
    """Amharic, runic and Thai are [UNK] to MiniLM: no semantic score, not ST 1.0 and BERT 0.0."""
    tokenizer = minilm.encoder().tokenizer
    partly = "The ᚠᚢᚦᚨᚱᚲ stone"  # one [UNK] of three pieces: the model still reads it
    assert tokenizer.tokenize(UNREADABLE[0]) == ["[UNK]", "[UNK]"]
    assert word_pieces(tokenizer, [*UNREADABLE, partly, "A harbour"], 512).unknown == [True, True, True, False, False]
    with pytest.warns(UserWarning, match="3 pairs have a text the model reads mostly as unknown word pieces"):
        r = score_pairs([*UNREADABLE, partly], ["Hello world", "Runes on a stone", "Bangkok is the capital", "A stone"])
    for measure in SEMANTIC_AND_DERIVED:
        assert [math.isnan(value) for value in r[measure]] == [True, True, True, False], measure
        assert r["nan"][measure] == 3 and r["aggregates"][measure]["n"] == 1
    assert r["nan"]["syn"] == 0  # the words are still compared as words
    with pytest.warns(UserWarning, match="1 pairs have a text the model reads mostly"):  # word-piece vectors too
        assert math.isnan(score_pairs([UNREADABLE[1]], ["Runes on a stone"], measures=["wms"])["wms"][0])


def test_unknown_pieces_count_in_bertscore_as_in_bert_score(minilm) -> None:  # noqa: ANN001
    """[UNK] is a token bert_score matches like any other; only [CLS] and [SEP] are left out."""
    import bert_score

    from metrics.profiles import MINILM_BASELINE, minilm_path

    a, b = "The ᚠᚢᚦᚨᚱᚲ stone near the old church", "The rune stone by the church"
    ours = score_pairs([a], [b], measures=["bert"])["bert"][0]
    _, _, f1 = bert_score.BERTScorer(model_type=minilm_path(), num_layers=6, device="cpu").score([a], [b])
    assert ours == pytest.approx((f1.item() - MINILM_BASELINE) / (1 - MINILM_BASELINE), abs=1e-5)


def test_identical_texts_are_never_diverse() -> None:
    """A copy (the same after NFKC and case folding) scores 1 everywhere, Δ 0; short texts get short n-grams."""
    first = ["Hello", "Straße", "ﬁsh and chips", "A b", "ሰላም ለዓለም"]
    second = ["Hello", "STRASSE", "fish and chips", "a b", "ሰላም ለዓለም"]
    r = score_pairs(first, second)
    for measure in MEASURES + DERIVED:
        assert r[measure] == [0.0 if measure == "delta" else 1.0] * len(first), measure
    near = score_pairs(["Hello!", "Hello there"], ["Hello", "Hello world"])
    assert near["bleu"][0] == 1.0 and near["syn"][0] == 1.0 and near["delta"][0] <= 0.0
    order_two = sentence_bleu([["hello", "world"]], ["hello", "there"], (0.5, 0.5), SmoothingFunction().method7)
    assert near["bleu"][1] == pytest.approx(order_two)
    scorer = SyntacticScorer()
    assert scorer.bleu(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert "+order:min(4,shorter)|" in r["signature"]


def test_no_pairs_bare_strings_and_invalid_text() -> None:
    empty = score_pairs([], [])
    for measure in MEASURES + DERIVED:
        assert empty[measure] == [] and empty["nan"][measure] == 0
        assert empty["aggregates"][measure]["n"] == 0 and math.isnan(empty["aggregates"][measure]["mean"])
    assert empty["truncated"] == 0 and empty["signature"].startswith("profile:minilm")
    with pytest.raises(TypeError, match="predictions is a single str, not a list of texts"):
        score_pairs("abc", "abd")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="references is a single bytes"):
        score_pairs(["abc"], b"abd")  # type: ignore[arg-type]
    with pytest.warns(UserWarning, match="1 pairs have a text that is not valid Unicode"):
        r = score_pairs(["a \ud800 harbour", "Boats in a harbour"], ["a harbour", "A harbour at dusk"])
    for measure in MEASURES + DERIVED:
        assert math.isnan(r[measure][0]) and not math.isnan(r[measure][1]), measure


def test_the_evaluate_module_refuses_bare_strings_and_keeps_invalid_text(tmp_path) -> None:  # noqa: ANN001
    metric = metrics.load(cache_dir=str(tmp_path))
    assert metric.compute(predictions=[], references=[], measures=["bleu"])["bleu"] == []
    with pytest.raises(TypeError, match="predictions is a single str"):
        metric.compute(predictions="abc", references="abd")
    metric.add_batch(predictions=["Boats in a harbour"], references=["A harbour at dusk"])
    metric.add(prediction="a harbour", reference="a \udfff harbour")
    with pytest.warns(UserWarning, match="1 pairs have a text that is not valid Unicode"):
        r = metric.compute(measures=["rouge1", "bleu"])
    assert not math.isnan(r["rouge1"][0]) and math.isnan(r["rouge1"][1]) and r["nan"]["bleu"] == 1
    r = metric.compute(predictions=["A harbour at dusk"], references=["A harbour at dusk"], measures=["bleu"])
    assert r["bleu"] == [1.0]  # the row count starts again after a compute


def test_wms_reads_a_bounded_number_of_distinct_words(minilm) -> None:  # noqa: ANN001
    """Texts of 3,000 distinct words each: the transport problem stays at WMS_WORDS², and the cut is counted."""
    mover = minilm.word_mover()
    vocabulary = minilm.encoder().tokenizer.get_vocab()
    words = sorted(w for w in vocabulary if w.isascii() and w.isalpha() and len(w) > 2 and w not in mover.stop_words)
    a, b = " ".join(words[:3000]), " ".join(words[3000:6000])
    (vectors, weights), cut = mover.cut_bag(a)
    assert cut and len(weights) == WMS_WORDS
    prefix = mover.bag(" ".join(words[:WMS_WORDS]))
    assert (vectors == prefix[0]).all() and (weights == prefix[1]).all()
    assert mover.cut_bag("A harbour at dusk")[1] is False
    score_pairs(["Boats"], ["A harbour"], measures=["wms"])  # word vectors loaded before measuring
    tracemalloc.start()
    try:
        with pytest.warns(UserWarning, match="2 texts are longer than .* 1,000 distinct content words for WMS"):
            r = score_pairs([a], [b], measures=["wms"], check_language=False)  # a word list, not English text
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 < r["wms"][0] < 1 and r["truncated"] == 2
    assert peak < 50e6  # the uncut 3,000 × 3,000 cost matrix alone is 72 MB
