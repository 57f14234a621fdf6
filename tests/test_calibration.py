"""Table 7's ST threshold chosen on MSRPC's labels (``--threshold msrpc``), as the paper chose 0.8."""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import random
from pathlib import Path

import numpy as np
import pytest

from metrics import calibration, score_pairs
from metrics.calibration import choose, shortest_between, sweep
from metrics.compare import main, resolve_threshold
from metrics.corpora import CorpusError, load

ROOT = Path(__file__).resolve().parent.parent
MSRPC = ROOT / "tests" / "data" / "corpora" / "msrpc"
TAPACO = ROOT / "tests" / "data" / "corpora" / "tapaco"


def precision_recall(scores: list[float], labels: list[int], threshold: float) -> tuple[float, float]:
    """Precision and recall of "paraphrase when ST > threshold", counted pair by pair."""
    predicted = [label for score, label in zip(scores, labels, strict=True) if score > threshold]
    hits = sum(predicted)
    return (hits / len(predicted) if predicted else math.nan), hits / sum(labels)


def distance(precision: float, recall: float) -> float:
    """Distance to the paper's precision and recall of ST > 0.8 on MSRPC."""
    return math.hypot(precision - 0.82, recall - 0.77)


@pytest.fixture(scope="module")
def msrpc_st() -> tuple[list[float], list[int]]:
    """The real MiniLM ST scores of the MSRPC fixture (train and test files) and their labels."""
    records, _ = load("msrpc", MSRPC)
    scores = score_pairs([r.sentence1 for r in records], [r.sentence2 for r in records], measures=["st"])
    return scores["st"], [r.label for r in records]  # type: ignore[return-value]


def test_msrpc_threshold_is_the_closest_to_the_papers_precision_and_recall(
    tmp_path: Path, msrpc_st: tuple[list[float], list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    scores, labels = msrpc_st
    assert len(scores) == 43 and 0 < sum(labels) < 43 and not any(math.isnan(score) for score in scores)
    out = tmp_path / "out"
    arguments = ["--corpus", f"msrpc={MSRPC}", "--corpus", f"tapaco={TAPACO}", "--threshold", "msrpc"]
    assert main([*arguments, "--output", str(out)]) == 0
    with open(out / "table.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    threshold = float(rows[0]["threshold"])
    precision, recall = float(rows[0]["threshold_precision"]), float(rows[0]["threshold_recall"])
    assert all(float(row["threshold"]) == threshold for row in rows)
    # the reported precision and recall are exactly those of the threshold applied
    assert (precision, recall) == precision_recall(scores, labels, threshold)
    # no candidate (a distinct score that leaves some pair above it) comes closer to (0.82, 0.77)
    chosen = distance(precision, recall)
    for candidate in sorted(set(scores))[:-1]:
        assert distance(*precision_recall(scores, labels, candidate)) >= chosen - 1e-12
    # the subset rows use it
    label = f"st>{threshold!r}"
    msrpc = next(row for row in rows if row["corpus"] == "MSRPC" and row["subset"] == label)
    assert int(msrpc["n"]) == sum(score > threshold for score in scores)
    # printed, and in table.md's legend and signature
    printed = capsys.readouterr().out
    assert f"ST threshold {threshold!r}: precision {precision:.3f}, recall {recall:.3f} on 43 labelled" in printed
    table = (out / "table.md").read_text(encoding="utf-8")
    assert f"| MSRPC | H | {label} |" in table and f"| TaPaCo | H | {label} |" in table
    assert f"precision {precision:.2f}, recall {recall:.2f}" in table
    assert f"|subset:{label},msrpc-P:{precision:.3f},R:{recall:.3f}`" in table
    # a second run reads the ST scores from the cache and chooses the same threshold from a path
    assert main(["--corpus", f"tapaco={TAPACO}", "--threshold", str(MSRPC), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "msrpc calibration: cached ST scores" in printed and f"ST threshold {threshold!r}:" in printed


def test_calibration_command_reports_the_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    assert calibration.main([str(MSRPC / "msr_paraphrase_test.txt")]) == 0
    printed = capsys.readouterr().out
    assert "on 40 labelled MSRPC pairs (26 paraphrases)" in printed
    assert "profile minilm's default: 0.755 (precision 0.79, recall 0.77" in printed


def test_sweep_equals_counting_pair_by_pair() -> None:
    generator = random.Random(7)
    scores = [round(generator.random(), 2) for _ in range(300)]  # rounded: many ties
    labels = [int(generator.random() < score) for score in scores]
    thresholds, precision, recall = sweep(np.array(scores), np.array(labels))
    assert list(thresholds) == sorted(set(scores))
    for index, threshold in enumerate(thresholds):
        expected = precision_recall(scores, labels, threshold)
        assert recall[index] == expected[1]
        assert precision[index] == expected[0] or (math.isnan(precision[index]) and math.isnan(expected[0]))


def test_choice_leaves_out_nan_and_breaks_ties_toward_the_higher_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    scores = np.array([0.1, 0.2, 0.4, 0.6, 0.9, math.nan])
    labels = np.array([0, 1, 0, 1, 1, 1])
    calibration = choose(scores, labels, "pairs.txt")
    assert (calibration.pairs, calibration.positives, calibration.unscored) == (5, 3, 1)
    assert calibration.candidates == 4  # 0.9 leaves no pair above it
    best = min(distance(*precision_recall(list(scores[:5]), list(labels[:5]), t)) for t in (0.1, 0.2, 0.4, 0.6))
    assert distance(calibration.precision, calibration.recall) == best
    # aiming at (1, 1): ST > 0.1 gives (0.5, 1) and ST > 0.4 gives (1, 0.5), both at distance 0.5; others are farther
    monkeypatch.setattr("metrics.calibration.TARGET_PRECISION", 1.0)
    monkeypatch.setattr("metrics.calibration.TARGET_RECALL", 1.0)
    tie = choose(np.array([0.1, 0.2, 0.3, 0.4, 0.5]), np.array([0, 1, 0, 0, 1]), "tie.txt")
    assert (tie.threshold, tie.precision, tie.recall) == (0.4, 1.0, 0.5)


def test_reported_value_is_the_shortest_decimal_selecting_the_same_pairs() -> None:
    assert shortest_between(0.853369, 0.855313) == 0.854
    assert shortest_between(0.7549, 0.7551) == 0.755
    assert shortest_between(0.71, 0.7100001) == 0.71
    assert shortest_between(0.123456789, 0.1234568) == 0.12345679


def test_threshold_errors_come_before_any_scoring(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["--corpus", f"tapaco={TAPACO}", "--threshold", "msrpc", "--output", str(out)]) == 2
    error = capsys.readouterr().err
    assert "--threshold msrpc chooses the threshold on the labels of the MSRPC release" in error
    assert "--corpus msrpc=PATH or --threshold PATH" in error
    assert not (out / "cache").exists()  # nothing was scored
    assert main(["--corpus", "msrpc", "--threshold", "msrpc", "--output", str(out)]) == 2
    assert "msrpc is compared from its Hub copy, whose test labels are hidden" in capsys.readouterr().err
    for bad in ("1.5", "-1", "nan", "inf", "high", str(tmp_path / "missing")):
        with pytest.raises(SystemExit) as stopped:
            main(["--corpus", f"tapaco={TAPACO}", "--threshold", bad, "--output", str(out)])
        assert stopped.value.code == 2
        assert f"argument --threshold: {bad!r} is not a number in (−1, 1], 'msrpc'" in capsys.readouterr().err


def test_threshold_from_config_and_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "corpora.json"
    config.write_text(f'{{"corpora": {{"tapaco": "{TAPACO}"}}, "threshold": 0.5}}', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["--config", str(config), "--output", str(out)]) == 0
    assert "| TaPaCo | H | st>0.5 |" in (out / "table.md").read_text(encoding="utf-8")
    assert "|subset:st>0.5`" in (out / "table.md").read_text(encoding="utf-8")  # no precision/recall: not calibrated
    assert main(["--config", str(config), "--threshold", "0.9", "--output", str(out)]) == 0  # the command line wins
    with open(out / "table.csv", encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    assert (row["subset"], row["threshold"], row["threshold_precision"]) == ("st>0.9", "0.9", "nan")
    # a path in the config is read from the config file's folder
    relative = os.path.relpath(MSRPC / "msr_paraphrase_test.txt", tmp_path)
    config.write_text(f'{{"corpora": {{"tapaco": "{TAPACO}"}}, "threshold": "{relative}"}}', encoding="utf-8")
    assert main(["--config", str(config), "--output", str(out)]) == 0
    assert "on 40 labelled MSRPC pairs (26 paraphrases)" in capsys.readouterr().out
    for value in ('"high"', "true", '"missing/msr_paraphrase_train.txt"', "2"):
        config.write_text(f'{{"corpora": {{"tapaco": "{TAPACO}"}}, "threshold": {value}}}', encoding="utf-8")
        assert main(["--config", str(config), "--output", str(out)]) == 2
        assert f"{config}: threshold" in capsys.readouterr().err


def test_profile_defaults(tmp_path: Path) -> None:
    paper = resolve_threshold(argparse.Namespace(profile="paper", threshold=None), None, tmp_path)
    assert (paper.value, paper.precision, paper.recall) == (0.8, 0.82, 0.77)
    assert paper.provenance.startswith("profile paper's default, the paper's threshold")
    minilm = resolve_threshold(argparse.Namespace(profile="minilm", threshold=None), None, tmp_path)
    assert (minilm.value, minilm.precision, minilm.recall) == (0.755, 0.79, 0.77)
    assert "measured on the MSRPC release's labelled pairs with all-MiniLM-L6-v2" in minilm.provenance


def test_labels_without_a_paraphrase_are_an_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = tmp_path / "msr_paraphrase_train.txt"
    lines = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
    for number, (a, b) in enumerate(itertools.pairwise(["A dog runs.", "A cat sleeps.", "Rain fell all day."])):
        lines.append(f"0\t{number}\t{number + 100}\t{a}\t{b}")
    release.write_bytes(("\ufeff" + "\r\n".join(lines) + "\r\n").encode("utf-8"))
    assert main(["--corpus", f"msrpc={release}", "--threshold", "msrpc", "--output", str(tmp_path / "out")]) == 2
    assert f"{release}: no paraphrase (quality 1) among the 2 scored labelled pairs" in capsys.readouterr().err
    with pytest.raises(CorpusError, match=r"same\.txt: no ST threshold reaches any recall"):
        choose(np.array([0.5, 0.5]), np.array([1, 0]), "same.txt")


def test_paper_profile_calibration_offline_names_the_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # read at import time
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    arguments = ["--corpus", f"msrpc={MSRPC}", "--profile", "paper", "--threshold", "msrpc"]
    assert main([*arguments, "--output", str(tmp_path / "out")]) == 2
    assert "profile 'paper': cannot load sentence model" in capsys.readouterr().err
    assert not list((tmp_path / "out").glob("cache/*.parquet"))
