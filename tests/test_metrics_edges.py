"""Δsem,syn where nothing or too much was seen: unreadable text, copies, no pairs, invalid text, huge texts."""

from __future__ import annotations

import math
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer

import metrics
from metrics import score_pairs
from metrics.profiles import get_profile
from metrics.scoring import DERIVED, MEASURES, semantic_scorer
from metrics.semantic import WMS_WORDS, word_pieces
from metrics.syntactic import SyntacticScorer, pair_scheme, rouge_l

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
    with pytest.warns(UserWarning, match=r"^no pairs to score: .* every aggregate mean NaN \(n 0\)$"):
        empty = score_pairs([], [])
    for measure in MEASURES + DERIVED:
        assert empty[measure] == [] and empty["nan"][measure] == 0
        assert empty["aggregates"][measure]["n"] == 0 and math.isnan(empty["aggregates"][measure]["mean"])
    assert empty["truncated"] == 0 and empty["truncated_pairs"] == []
    assert empty["signature"].startswith("profile:minilm")
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
    with pytest.warns(UserWarning, match="no pairs to score"):  # a NaN mean, and the reason for it
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
        with pytest.warns(UserWarning, match=r"texts cut per measure: wms 2 \(to 1,000 distinct content words\)$"):
            r = score_pairs([a], [b], measures=["wms"], check_language=False)  # a word list, not English text
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 < r["wms"][0] < 1 and r["truncated"] == 2 and r["truncated_by_measure"] == {"wms": 2}
    assert peak < 50e6  # the uncut 3,000 × 3,000 cost matrix alone is 72 MB


def _rouge_score_l(scorer: SyntacticScorer, a: str, b: str) -> float:
    """ROUGE-L F1 as rouge_score itself computes it (its LCS table), on the scorer's tokens of the pair."""
    scheme = pair_scheme(a, b, scorer.tokenizer)
    tokens_a, tokens_b = scorer._tokenizer.tokens(a, scheme), scorer._tokenizer.tokens(b, scheme)
    return rouge_scorer._score_lcs(tokens_a, tokens_b).fmeasure


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefgh"), max_size=40),
    st.lists(st.sampled_from("abcdefgh"), max_size=40),
)
def test_rouge_l_is_rouge_scores_figure_on_random_tokens(a: list[str], b: list[str]) -> None:
    """The LCS in linear memory gives rouge_score's F1 to the last bit, empty sides included."""
    assert rouge_l(a, b) == rouge_scorer._score_lcs(a, b).fmeasure


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120), st.text(max_size=120))
def test_rouge_l_is_rouge_scores_figure_on_random_texts(a: str, b: str) -> None:
    scorer = SyntacticScorer()
    scores = scorer.score(a, b, ["rougeL"])
    if not math.isnan(scores["rougeL"]):  # a text without a token is NaN before any measure runs
        assert scores["rougeL"] == _rouge_score_l(scorer, a, b)


def test_rouge_l_is_rouge_scores_figure_on_real_pairs() -> None:
    """Table 5's captions and 2,000 pairs of real Wikipedia sentences (some long): the same figure exactly."""
    from test_metrics import TABLE_5

    from metrics.baseline import wikipedia_sentences

    sentences = wikipedia_sentences()
    pairs = [(a, b) for a, b, _ in TABLE_5] + list(zip(sentences[:2000], sentences[2000:4000], strict=True))
    pairs.append((" ".join(sentences[:40]), " ".join(sentences[40:80])))  # two texts of about 800 tokens
    scorer = SyntacticScorer()
    authors = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)  # rouge_score's own tokens and stems
    for a, b in pairs:
        ours = scorer.score(a, b, ["rouge1", "rougeL"])
        assert ours["rougeL"] == _rouge_score_l(scorer, a, b), (a, b)
        if pair_scheme(a, b, "auto") == "rouge":
            theirs = authors.score(a, b)
            assert (ours["rouge1"], ours["rougeL"]) == (theirs["rouge1"].fmeasure, theirs["rougeL"].fmeasure), (a, b)


def test_a_long_pair_is_scored_whole_in_little_memory() -> None:
    """Two texts of 6,000 tokens: rouge_score's LCS table alone is 36 million cells (290 MB of pointers)."""
    first = " ".join(f"word{i % 1500}" for i in range(6000))
    second = " ".join(f"word{(7 * i) % 1700}" for i in range(6000))
    scorer = SyntacticScorer()
    tracemalloc.start()
    try:
        scores = scorer.score(first, second)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 < scores["rougeL"] < 1 and 0 < scores["rouge1"] < 1
    assert peak < 30e6
