"""Δsem,syn: the paper's scorers, the offline profile, the evaluate module and the command line."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import evaluate
import numpy as np
import pytest

from metrics import ModelUnavailable, score_pairs
from metrics.cli import main
from metrics.profiles import MINILM_BASELINE, get_profile, minilm_path
from metrics.scoring import semantic_scorer

REPO = Path(__file__).resolve().parent.parent

# Table 5 of the paper: the caption pairs and their syntactic scores (ROUGE-1, ROUGE-L, BLEU, average).
TABLE_5 = [
    (
        "An Easter postcard from 1907 depicting a rabbit.",
        "A 1907 postcard featuring the Easter Bunny.",
        (0.53, 0.13, 0.14, 0.27),
    ),
    (
        "Twelfth century illustration of a man digging.",
        "An English serf at work digging, c. 1170.",
        (0.13, 0.13, 0.10, 0.12),
    ),
    (
        "Troops clearing rubble after the May air raid on Belfast.",
        "Soldiers clearing rubble after the May air raid on Belfast.",
        (0.90, 0.90, 0.99, 0.93),
    ),
    (
        "System of a Down is composed of four Armenian-Americans.",
        "Dolmayan drumming with System of a Down in 2011.",
        (0.42, 0.42, 0.33, 0.39),
    ),
]


def test_table_5_syntactic_columns() -> None:
    results = score_pairs([a for a, _, _ in TABLE_5], [b for _, b, _ in TABLE_5], measures=["rouge1", "rougeL", "bleu"])
    for index, (_, _, expected) in enumerate(TABLE_5):
        measured = tuple(round(results[m][index], 2) for m in ("rouge1", "rougeL", "bleu", "syn"))
        assert measured == expected
    assert "sem" not in results and "delta" not in results


@pytest.fixture(scope="module")
def table_5_scores() -> dict:
    return score_pairs([a for a, _, _ in TABLE_5], [b for _, b, _ in TABLE_5], profile="minilm")


def test_all_measures_bounded_and_averaged(table_5_scores: dict) -> None:
    r = table_5_scores
    for measure in ("rouge1", "rougeL", "bleu", "wms", "bert", "st", "syn", "sem"):
        assert all(0.0 <= value <= 1.0 for value in r[measure]), measure
    for i in range(len(TABLE_5)):
        assert r["sem"][i] == pytest.approx((r["wms"][i] + r["bert"][i] + r["st"][i]) / 3)
        assert r["delta"][i] == pytest.approx(r["sem"][i] - r["syn"][i])
    assert r["aggregates"]["delta"]["mean"] == pytest.approx(float(np.mean(r["delta"])))
    assert r["aggregates"]["delta"]["std"] == pytest.approx(float(np.std(r["delta"])))
    # the paper's ordering: the sophisticated pairs A and B above the near-copy C and the unrelated D
    assert min(r["delta"][0], r["delta"][1]) > max(r["delta"][2], r["delta"][3])
    assert r["signature"].startswith("profile:minilm|st:all-MiniLM-L6-v2")
    assert f"rescale:{MINILM_BASELINE}" in r["signature"]


def test_shared_forward_pass_equals_the_libraries(table_5_scores: dict) -> None:
    """ST and BERTScore from one pass must be what sentence-transformers and bert_score compute."""
    import bert_score
    from sentence_transformers import SentenceTransformer

    a = [x for x, _, _ in TABLE_5]
    b = [y for _, y, _ in TABLE_5]
    model = SentenceTransformer(minilm_path(), device="cpu")
    va = model.encode(a, normalize_embeddings=True)
    vb = model.encode(b, normalize_embeddings=True)
    assert table_5_scores["st"] == pytest.approx([float(x @ y) for x, y in zip(va, vb, strict=True)], abs=1e-5)
    scorer = bert_score.BERTScorer(model_type=minilm_path(), num_layers=6, device="cpu")
    _, _, f1 = scorer.score(a, b)
    rescaled = [(f - MINILM_BASELINE) / (1 - MINILM_BASELINE) for f in f1.tolist()]
    assert table_5_scores["bert"] == pytest.approx([min(1.0, max(0.0, f)) for f in rescaled], abs=1e-5)


def test_wms_equals_gensim_word_movers_distance(table_5_scores: dict) -> None:
    """WMS is 1 - WMD/2 on unit vectors; gensim's own WMD on the same vectors must agree."""
    from gensim.models import KeyedVectors

    mover = semantic_scorer(get_profile("minilm")).word_mover()
    for index, (a, b, _) in enumerate(TABLE_5):
        words_a, words_b = (
            [w for w in re.findall(r"\w+", text.lower()) if w not in mover.stop_words] for text in (a, b)
        )
        words = sorted(set(words_a) | set(words_b))
        vectors = KeyedVectors(vector_size=mover.vectors.dimension)
        vectors.add_vectors(words, np.stack([mover.vectors.vector(w) for w in words]))
        expected = 1 - vectors.wmdistance(words_a, words_b) / 2
        assert table_5_scores["wms"][index] == pytest.approx(expected, abs=1e-5)


def test_wordless_texts_are_nan_and_long_texts_are_counted() -> None:
    """No word (empty, punctuation, emoji): NaN with a warning, not a confident 0 or 1; cut texts are counted."""
    shared = " ".join(["caption"] * 400)
    long_a, long_b = f"{shared} {'river ' * 3000}", f"{shared} {'mountain ' * 3000}"
    with pytest.warns(UserWarning) as caught:
        r = score_pairs(["", "🎉🎉", "...", long_a], ["", "🐍", "Some words here.", long_b])
    for measure in ("rouge1", "rougeL", "bleu", "wms", "bert", "st", "syn", "sem", "delta"):
        assert [math.isnan(value) for value in r[measure]] == [True, True, True, False], measure
        assert r["aggregates"][measure]["n"] == 1
    assert r["nan"]["delta"] == 3 and r["truncated"] == 2 and r["truncated_pairs"] == [0, 0, 0, 2]
    assert r["truncated_by_measure"] == {"rouge1": 0, "rougeL": 0, "bleu": 0, "wms": 0, "bert": 2, "st": 2}
    messages = " ".join(str(warning.message) for warning in caught)
    assert "3 of 4 pairs have no score" in messages
    assert (
        "2 texts were cut to the models' limit; texts cut per measure: bert 2 (to 512 word pieces), "
        "st 2 (to 512 word pieces); rouge1, rougeL, bleu, wms read every text whole"
    ) in messages
    assert "|maxlen:512|" in r["signature"]
    with pytest.raises(ValueError, match="differ in length: 2 vs 1"):
        score_pairs(["a", "b"], ["a"])
    with pytest.raises(TypeError, match=r"references\[1\] is a int"):
        score_pairs(["a", "b"], ["a", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unknown measures"):
        score_pairs(["a"], ["b"], measures=["meteor"])
    with pytest.raises(ValueError, match="unknown profile"):
        score_pairs(["a"], ["b"], profile="large")


def test_paper_profile_without_its_models_says_how_to_get_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # read at import time
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(
        ModelUnavailable, match=r"profile 'paper': cannot load sentence model .*paraphrase-mpnet-base-v2.*internet"
    ):
        score_pairs(["a b"], ["c d"], profile="paper", measures=["st"])


def test_evaluate_module_loads_as_documented(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``evaluate.load("delta_sem_syn")`` from the repository root, ``metrics.load()`` from anywhere."""
    import metrics

    monkeypatch.chdir(REPO)
    metric = evaluate.load("delta_sem_syn")
    results = metric.compute(
        predictions=[TABLE_5[0][0]], references=[TABLE_5[0][1]], measures=["rouge1", "rougeL", "bleu"]
    )
    assert round(results["syn"][0], 2) == 0.27
    monkeypatch.chdir(tmp_path)
    anywhere = metrics.load()
    assert anywhere.name == "delta_sem_syn"
    results = anywhere.compute(predictions=[TABLE_5[2][0]], references=[TABLE_5[2][1]], measures=["bleu"])
    assert round(results["bleu"][0], 2) == 0.99
    assert evaluate.load(metrics.MODULE_PATH).name == "delta_sem_syn"


def test_command_line_tsv_jsonl_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("sentence1\tsentence2\n" + "".join(f"{a}\t{b}\n" for a, b, _ in TABLE_5), encoding="utf-8")
    assert main(["score", str(tsv), "--profile", "minilm"]) == 0
    lines = (tmp_path / "pairs.scored.tsv").read_text(encoding="utf-8").splitlines()
    header = ["rouge1", "rougeL", "bleu", "wms", "bert", "st", "syn", "sem", "delta", "paraphrase_probability"]
    assert lines[0].split("\t")[2:] == header  # the default classifier's probability, from the two texts
    assert [round(float(line.split("\t")[8]), 2) for line in lines[1:]] == [row[2][3] for row in TABLE_5]
    assert all(0 < float(line.split("\t")[11]) < 1 for line in lines[1:])
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text("".join(json.dumps({"a": a, "b": b, "id": n}) + "\n" for n, (a, b, _) in enumerate(TABLE_5)))
    assert main(["score", str(jsonl), "--columns", "a", "b"]) == 0
    records = [json.loads(line) for line in (tmp_path / "pairs.scored.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [0, 1, 2, 3] and round(records[0]["rouge1"], 2) == 0.53
    bad = tmp_path / "bad.tsv"
    bad.write_text("one\ttwo\nonly one field\n", encoding="utf-8")
    assert main(["score", str(bad)]) == 2
    assert "bad.tsv:2: expected 2 tab-separated fields, found 1" in capsys.readouterr().err


def test_minilm_baseline_is_what_random_wikipedia_pairs_give() -> None:
    from metrics.baseline import estimate_baseline

    assert estimate_baseline(pairs=300, seed=1) == pytest.approx(MINILM_BASELINE, abs=0.03)


def test_paper_profile_bertscore_without_roberta(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(ModelUnavailable, match=r"profile 'paper': cannot load BERTScore model 'roberta-large'"):
        score_pairs(["a b"], ["c d"], profile="paper", measures=["bert"])


def test_word_vectors_from_a_local_file(tmp_path: Path) -> None:
    """Any profile's WMS vectors can be a local word2vec-format file (e.g. a fastText .vec)."""
    vectors = tmp_path / "tiny.vec"
    vectors.write_text("4 2\nrabbit 1 0\nhare 0.8 0.6\npostcard 0 1\ncard 0.6 0.8\n", encoding="utf-8")
    r = score_pairs(
        ["A rabbit postcard"], ["A hare card"], profile="minilm", measures=["wms"], word_vectors=str(vectors)
    )
    # rabbit→hare and postcard→card each move half the mass a distance of sqrt(0.4)
    assert r["wms"][0] == pytest.approx(1 - math.sqrt(0.4) / 2)
    assert "wms:tiny.vec" in r["signature"]
