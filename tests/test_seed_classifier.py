"""Brockett & Dolan's classifier: its features on real MSRPC pairs, the shipped models recomputed from the shipped
files, the training corpora as committed, and ``metrics score --classifier`` on a real TSV and a built folder."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from benchmarks import paraphrase_study as study
from metrics.cli import PROBABILITY, main
from metrics.corpora import CorpusError, ReadReport, read_msrpc, read_paws
from metrics.paraphrase import (
    MODELS,
    Classifier,
    cut_for_precision,
    load_classifier,
    model_features,
    pair_probability,
    wilson,
)
from metrics.seed_features import SEED_FEATURES, levenshtein, lexicon, pair_features, seed_features, word_pairs

REPO = Path(__file__).resolve().parent.parent
TRAINING = REPO / "metrics" / "data" / "training"
MSRPC_TRAIN = TRAINING / "msrpc" / "msr_paraphrase_train.txt.gz"
DOCS = REPO / "docs" / "paraphrases.md"


def _msrpc_pair(pair_id: str) -> tuple[str, str, int]:
    record = next(r for r in read_msrpc(MSRPC_TRAIN, ReadReport()) if r.id == f"msr_paraphrase_train-{pair_id}")
    return record.sentence1, record.sentence2, record.label  # type: ignore[return-value]


def test_the_training_corpora_are_the_releases_counts() -> None:
    report = ReadReport()
    records = list(read_msrpc(TRAINING / "msrpc", report))
    train = [r for r in records if r.id.startswith("msr_paraphrase_train-")]
    test = [r for r in records if r.id.startswith("msr_paraphrase_test-")]
    assert (len(train), sum(r.label for r in train)) == (4076, 2753)  # the seed's §4.4: 2753 positive, 1323 negative
    assert (len(test), sum(r.label for r in test)) == (1725, 1147)
    paws = list(read_paws(TRAINING / "paws", ReadReport()))
    assert len(paws) == 16000 and sum(r.label for r in paws) == 3539 + 3536
    assert paws[0].id == "dev-1" and paws[-1].id == "test-8000"
    with gzip.open(MSRPC_TRAIN, "rb") as handle:  # the release's bytes, as SOURCE.md states
        assert hashlib.sha256(handle.read()).hexdigest() == (
            "2174e11735d71a0f852d51f77fe098baf52ac01a5dfc54b62ddb41b9837b9ebf"
        )


def test_a_corrupt_gzip_copy_is_an_error_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "msr_paraphrase_train.txt.gz"
    broken.write_bytes(MSRPC_TRAIN.read_bytes()[:5000])
    with pytest.raises(CorpusError, match=f"{broken}: cannot read"):
        list(read_msrpc(tmp_path, ReadReport()))


def test_string_features_of_msrpcs_first_pair_computed_by_hand() -> None:
    """MSRPC train's first pair: 14 and 16 words, 10 shared types; word edit distance 11 (align "the witness":
    5 substitutions and 2 deletions before it, 4 insertions after); over the alphabetized unique words 6."""
    first, second, label = _msrpc_pair("702876-702977")
    assert label == 1
    values = dict(zip(SEED_FEATURES, pair_features(first, second), strict=True))
    assert values["words_short"] == 14 and values["words_long"] == 16 and values["words_difference"] == 2
    assert values["relative_length"] == 14 / 16
    assert values["shared"] == 10 and values["shared_short"] == 10 / 13 and values["shared_long"] == 10 / 15
    assert values["edit"] == 11 and values["edit_long"] == 11 / 16 and values["edit_short"] == 11 / 14
    assert values["lexical_edit"] == 6 and values["lexical_edit_long"] == 6 / 15
    assert values["matches_per_edit"] == 10 / 12
    assert values["morph"] == 0 and values["synonyms"] == 0


def test_morphological_variants_of_a_real_msrpc_pair() -> None:
    """admitted|admitting, falsifying|falsified, restart|restarted: the three words of the shorter text (24 words,
    22 unique) that are not in the longer (27 words, 25 unique); approval, to, won stay unmatched."""
    first, second, _ = _msrpc_pair("129193-129302")
    values = dict(zip(SEED_FEATURES, pair_features(first, second), strict=True))
    assert (values["words_short"], values["words_long"], values["shared"]) == (24, 27, 19)
    assert values["morph"] == 3 and values["morph_short"] == 3 / 22
    assert values["synonyms"] == 0 and values["hypernyms"] == 0
    assert values["unmatched_short"] == 0 and values["unmatched_long"] == 3
    assert values["matched_short"] == 1.0 and values["matched_long"] == 22 / 25
    assert lexicon().forms("falsifying") & lexicon().forms("falsified") == {"falsifi", "falsify"}
    assert word_pairs(first, second) == [
        "morph:admitted|admitting",
        "morph:falsified|falsifying",
        "morph:restart|restarted",
    ]


def test_wordnet_synonyms_of_a_real_msrpc_pair() -> None:
    """'Those who only had surgery lived an average of 46 months.' / 'For those who got surgery alone, median
    survival was 41 months.': only|alone, had|got, average|median and lived|was share a WordNet synset."""
    first, second, _ = _msrpc_pair("2216702-2216672")
    values = dict(zip(SEED_FEATURES, pair_features(first, second), strict=True))
    senses = lexicon().senses
    for one, other in (("only", "alone"), ("had", "got"), ("average", "median"), ("lived", "was")):
        assert senses(one)[0] & senses(other)[0], (one, other)
    assert values["synonyms"] == 4 and values["morph"] == 0
    assert sorted(pair for pair in word_pairs(first, second) if pair.startswith("synonym:")) == [
        "synonym:alone|only",
        "synonym:average|median",
        "synonym:got|had",
        "synonym:lived|was",
    ]


def test_levenshtein_and_the_matrix_agree_with_one_pair() -> None:
    assert levenshtein("kitten", "sitting") == 3 and levenshtein([], ["a", "b"]) == 2
    first, second, _ = _msrpc_pair("702876-702977")
    matrix = seed_features([first, second], [second, first])
    assert matrix.shape == (2, len(SEED_FEATURES)) and (matrix[0] == matrix[1]).all()  # symmetric


def test_the_shipped_seed_model_is_plain_numbers_with_its_corpus() -> None:
    name = "seed"
    model = load_classifier(name)
    data = json.loads(MODELS[name].read_text(encoding="utf-8"))
    assert model.features == SEED_FEATURES and model.profile == "" and set(data["calibration"]) == {"a", "c"}
    corpora = model.trained_on["svm"]
    assert corpora[0]["name"] == "MSRPC train" and corpora[0]["pairs"] == 4076
    for corpus in corpora:
        for file, digest in corpus["files"].items():
            assert hashlib.sha256((REPO / file).read_bytes()).hexdigest() == digest
    labelled = model.labelled
    english = study.english_rows(study.read_labels(study.LABELS))  # the labelled English caption pairs
    assert len(labelled["probability"]) == len(labelled["label"]) == len(labelled["source"]) == len(english)
    assert labelled["label"] == [int(row["paraphrase"]) for row in english]


def test_the_msrpc_models_test_figures_recomputed_from_the_shipped_files() -> None:
    """The shipped weights, applied to the committed MSRPC test split, give the accuracy and F1 they state, and
    the SVM retrained from the committed training split gives the shipped weights."""
    model = load_classifier("seed")
    records = list(read_msrpc(TRAINING / "msrpc" / "msr_paraphrase_test.txt.gz", ReadReport()))
    matrix = seed_features([r.sentence1 for r in records], [r.sentence2 for r in records])
    truth = np.array([r.label for r in records])
    predicted = model.margin(matrix) > 0
    figures = study.figures_of(truth, predicted)
    assert model.evaluation["msrpc_test"] == {k: round(v, 4) for k, v in figures.items()}
    assert round(figures["accuracy"], 3) == 0.743 and round(figures["f1"], 3) == 0.819
    train = study._labelled("MSRPC train", list(read_msrpc(MSRPC_TRAIN, ReadReport())), [MSRPC_TRAIN])  # noqa: SLF001
    mean, scale, weights, intercept = study.fit_svm(train.matrix, train.labels)
    assert np.allclose(model.mean, mean) and np.allclose(model.scale, scale)
    assert np.allclose(model.coefficients, weights, atol=1e-6) and math.isclose(
        model.intercept, intercept, abs_tol=1e-6
    )
    assert np.allclose(
        [model.calibration["a"], model.calibration["c"]], study.msrpc_platt(train), atol=1e-6
    )
    # the probability is Platt's sigmoid of the margin
    probability = model.probability(matrix)
    assert np.allclose(
        probability, 1 / (1 + np.exp(-(model.calibration["a"] * model.margin(matrix) + model.calibration["c"])))
    )
    assert ((probability > 0.5) == (model.calibration["a"] * model.margin(matrix) + model.calibration["c"] > 0)).all()


def test_platt_matches_a_logistic_fit_of_the_smoothed_targets() -> None:
    """Platt's sigmoid minimises the log loss of his smoothed targets: its gradient there is zero."""
    rng = np.random.default_rng(0)
    margins = rng.normal(size=400)
    labels = (margins + rng.normal(scale=0.8, size=400) > 0).astype(int)
    a, c = study.platt(margins, labels)
    positives, negatives = labels.sum(), len(labels) - labels.sum()
    targets = np.where(labels == 1, (positives + 1) / (positives + 2), 1 / (negatives + 2))
    residual = 1 / (1 + np.exp(-(a * margins + c))) - targets
    assert abs(residual @ margins) < 1e-8 and abs(residual.sum()) < 1e-8 and a > 0


@pytest.mark.parametrize("name", ["crossencoder", "seed"])
def test_the_cut_by_precision_on_the_labelled_sample(name: str) -> None:
    model = load_classifier(name)  # the cross-encoder's in the precision this machine scores in
    probability, labels = np.array(model.labelled_probability()), np.array(model.labelled["label"])
    cut = cut_for_precision(model, 0.9)
    kept = probability >= cut.threshold
    assert cut.kept == kept.sum() and cut.paraphrases == labels[kept].sum() and cut.precision >= 0.9
    assert cut.precision == labels[kept].mean() and cut.recall == labels[kept].sum() / labels.sum()
    lower = probability[probability < cut.threshold]
    if lower.size:  # one step lower falls under 0.9: the cut keeps the most pairs that reach it
        below = probability >= lower.max()
        assert labels[below].mean() < 0.9
    assert (cut.low, cut.high) == wilson(cut.paraphrases, cut.kept)
    with pytest.raises(ValueError, match="must be in"):
        cut_for_precision(model, 1.5)


def test_wilson_is_scipys() -> None:
    assert np.allclose(wilson(49, 100), study.wilson(49, 100)) and np.allclose(wilson(0, 7), study.wilson(0, 7))


def test_an_unknown_classifier_name_is_refused() -> None:
    with pytest.raises(ValueError, match="no classifier 'nope'; the shipped ones are crossencoder, seed, measures"):
        load_classifier("nope")
    with pytest.raises(ValueError, match="classifier 'caption': the seed's SVM calibrated on the project's own"):
        load_classifier("caption")
    assert load_classifier("msrpc") == load_classifier("seed")  # the seed's former name
    with pytest.raises(ValueError, match="a calibration holds a and c"):
        Classifier("v", "", ("edit",), (0.0,), (1.0,), (1.0,), 0.0, {}, {}, {"slope": 1.0})


def test_model_features_say_what_a_file_lacks() -> None:
    import pyarrow as pa

    table = pa.table({"sentence1": ["A dog"], "sentence2": ["A dog runs"]})
    with pytest.raises(ValueError, match="the pairs lack image, page1, page2"):
        model_features(["same_page"], table, None, "none")
    assert model_features(["shared", "words_long"], table).tolist() == [[2.0, 3.0]]


@pytest.mark.parametrize("classifier", ["crossencoder", "seed"])
def test_score_a_real_msrpc_tsv_with_a_classifier_and_a_cut(
    classifier: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The MSRPC excerpt scored as a user scores a TSV: every row carries the model's probability of its texts,
    and the summary states the cut and the estimated share of paraphrases kept."""
    source = REPO / "tests" / "data" / "corpora" / "msrpc" / "msr_paraphrase_test.txt"
    output = tmp_path / "scored.tsv"
    code = main(["score", str(source), "--output", str(output), "--no-progress", "--classifier", classifier,
                 "--min-precision", "0.9"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    with open(output, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == 40 and PROBABILITY in rows[0]
    model = load_classifier(classifier)
    table = pa.table({"sentence1": [r["#1 String"] for r in rows], "sentence2": [r["#2 String"] for r in rows]})
    expected = pair_probability(model, table)
    assert np.allclose([float(r[PROBABILITY]) for r in rows], expected, atol=1e-6)
    cut = cut_for_precision(model, 0.9)
    kept = int((np.round(expected, 6) >= cut.threshold).sum())
    assert (
        f"kept at {PROBABILITY} ≥ {cut.threshold:.4f}: {kept:,} of 40, estimated share of paraphrases "
        f"{cut.precision:.0%} [{cut.low:.0%}, {cut.high:.0%}]"
    ) in out


def test_score_a_jsonl_carries_the_probability_and_measures_model_says_why_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, _ = _msrpc_pair("702876-702977")
    source = tmp_path / "pairs.jsonl"
    source.write_text(json.dumps({"sentence1": first, "sentence2": second}) + "\n", encoding="utf-8")
    assert main(["score", str(source), "--no-progress"]) == 0
    record = json.loads((tmp_path / "pairs.scored.jsonl").read_text(encoding="utf-8"))
    expected = load_classifier().probability([first], [second])[0]  # the default: the cross-encoder
    assert record[PROBABILITY] == pytest.approx(expected, abs=1e-6)
    before = (tmp_path / "pairs.scored.jsonl").read_bytes()
    # a model that cannot score a file is refused before the work, naming the ones that can
    assert main(["score", str(source), "--no-progress", "--classifier", "measures", "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "--classifier measures takes a build's meta-information, which a file has not" in err
    assert "choose --classifier crossencoder or seed" in err
    assert (tmp_path / "pairs.scored.jsonl").read_bytes() == before


def test_an_unreachable_precision_is_an_error_before_scoring(capsys: pytest.CaptureFixture[str]) -> None:
    """A precision no cut reaches on the labelled sample is refused, naming the best one: the shipped sample with
    its most confident pair's label turned (every shipped model's most confident pair is a paraphrase); and out
    of (0, 1] the command line refuses it before reading its input."""
    import dataclasses

    source = REPO / "tests" / "data" / "corpora" / "msrpc" / "msr_paraphrase_test.txt"
    model = load_classifier("measures")
    probability, labels = np.array(model.labelled["probability"]), np.array(model.labelled["label"])
    labels[np.argmax(probability)] = 0
    best = max(labels[probability >= cut].mean() for cut in probability)
    turned = dataclasses.replace(model, labelled={**model.labelled, "label": labels.tolist()})
    with pytest.raises(ValueError, match=rf"no cut of classifier paraphrase-lr-1 reaches precision 1 .* {best:.3f}"):
        cut_for_precision(turned, 1.0)
    assert main(["score", str(source), "--no-progress", "--classifier", "seed", "--min-precision", "1.5"]) == 2
    assert "--min-precision must be in (0, 1], not 1.5" in capsys.readouterr().err


def test_the_docs_state_the_shipped_models_figures() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    msrpc = load_classifier("seed").evaluation["msrpc_test"]
    assert f"| msrpc | MSRPC train | {msrpc['accuracy']:.3f}" in docs
    cut = cut_for_precision(load_classifier(), 0.9)
    assert (
        f"for the default model at 0.9: cut {cut.threshold:.2f}, {cut.kept} of the {cut.labelled} pairs kept, "
        f"{cut.precision:.0%} [{cut.low:.0%}, {cut.high:.0%}] paraphrases, recall {cut.recall:.0%}"
    ) in docs


def test_an_unreachable_precision_through_the_command_line_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed model with its most confident labelled pair turned to a non-paraphrase: precision 1 is reached by
    no cut, so ``metrics score`` exits 2 before any scoring and writes no file."""
    import metrics.paraphrase

    data = json.loads(MODELS["seed"].read_text(encoding="utf-8"))
    probability = np.array(data["labelled"]["probability"])
    data["labelled"]["label"][int(np.argmax(probability))] = 0
    turned = tmp_path / "seed.json"
    turned.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setitem(metrics.paraphrase.MODELS, "seed", turned)
    source = REPO / "tests" / "data" / "corpora" / "msrpc" / "msr_paraphrase_test.txt"
    output = tmp_path / "scored.tsv"
    code = main(["score", str(source), "--output", str(output), "--no-progress", "--classifier", "seed",
                 "--min-precision", "1"])  # fmt: skip
    assert code == 2
    assert "no cut of classifier paraphrase-seed-svm-msrpc-1 reaches precision 1" in capsys.readouterr().err
    assert not output.exists() and sorted(tmp_path.iterdir()) == [turned]
