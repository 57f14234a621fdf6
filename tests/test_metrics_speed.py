"""The faster paths of Δsem,syn give the same scores: ONNX Runtime, length-sorted batches, progress bars."""

from __future__ import annotations

import math

import pytest

from metrics import score_pairs

PAIRS = [
    ("An Easter postcard from 1907 depicting a rabbit.", "A 1907 postcard featuring the Easter Bunny."),
    ("Twelfth century illustration of a man digging.", "An English serf at work digging, c. 1170."),
    ("北京是中华人民共和国的首都", "北京是中国的首都"),
    (" ".join(["river"] * 900), " ".join(["mountain"] * 900)),  # cut to the model's limit
    ("Troops clearing rubble after the May air raid on Belfast.", "🎉"),
]


@pytest.fixture(scope="module")
def onnxruntime_available() -> None:
    """An optional extra; the test extra (CI) installs it, so under CI its absence is a failure."""
    from conftest import import_or_skip

    import_or_skip("onnxruntime")


def test_onnx_runtime_gives_torch_scores(onnxruntime_available: None, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first, second = [a for a, _ in PAIRS], [b for _, b in PAIRS]
    with pytest.warns(UserWarning):
        torch_scores = score_pairs(first, second, device="cpu", runtime="torch")
    with pytest.warns(UserWarning):  # a batch size of its own: a new scorer, exported into tmp_path
        onnx_scores = score_pairs(first, second, device="cpu", runtime="onnx", batch_size=32)
    assert list(tmp_path.glob("wikipedia-ipc/onnx/*/model.onnx"))  # exported once, kept
    assert "|runtime:torch|" in torch_scores["signature"] and "|runtime:onnx|" in onnx_scores["signature"]
    assert onnx_scores["truncated"] == torch_scores["truncated"] == 2
    for measure in ("wms", "bert", "st", "delta"):
        for ours, reference in zip(onnx_scores[measure], torch_scores[measure], strict=True):
            assert (math.isnan(ours) and math.isnan(reference)) or abs(ours - reference) < 1e-5, measure
    with pytest.raises(ValueError, match="runtime='onnx' runs on the CPU"):
        score_pairs(first, second, device="cuda", runtime="onnx", measures=["st"])
    # ONNX Runtime holds the model: the scorer keeps only the word-piece matrix WMS reads, no copy in torch
    from metrics.scoring import _SCORERS

    (encoder,) = [scorer._encoder for key, scorer in _SCORERS.items() if key[2] == 32 and key[5] == "onnx"]
    assert encoder.model is None and encoder.word_piece_matrix().shape == (30522, 384)


def test_progress_bars_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    # a batch size of its own: a new scorer, so the model is loaded inside this test
    score_pairs([a for a, _ in PAIRS[:2]], [b for _, b in PAIRS[:2]], device="cpu", batch_size=16, progress=True)
    captured = capsys.readouterr()
    assert "encoding" in captured.err and "ROUGE, BLEU" in captured.err and "WMS" in captured.err
    assert "Loading weights" not in captured.err and captured.out == ""


def test_onnx_runtime_is_for_the_shared_transformer_only() -> None:
    with pytest.raises(ValueError, match="serves the shared transformer of the 'minilm' and 'multilingual' profiles"):
        score_pairs(["A rabbit postcard"], ["A bunny card"], profile="paper", runtime="onnx", measures=["st"])


def test_runtime_auto_is_the_fastest_exact_one_installed(onnxruntime_available: None) -> None:
    """The default runs ONNX Runtime on the CPU where it is installed, and the signature names what ran."""
    first, second = [a for a, _ in PAIRS[:2]], [b for _, b in PAIRS[:2]]
    default = score_pairs(first, second, device="cpu")
    assert "|runtime:onnx|" in default["signature"] and "runtime:auto" not in default["signature"]
    explicit = score_pairs(first, second, device="cpu", runtime="onnx")
    assert default["delta"] == explicit["delta"]
    torch_scores = score_pairs(first, second, device="cpu", runtime="torch")
    assert all(abs(x - y) < 1e-5 for x, y in zip(default["delta"], torch_scores["delta"], strict=True))
    # where ONNX Runtime does not serve: the paper profile's separate models (no download: syntactic measures only)
    paper = score_pairs(first, second, profile="paper", measures=["rouge1", "bleu"])
    assert "|runtime:torch|" in paper["signature"]
    with pytest.raises(ValueError, match=r"unknown runtime 'fast'; choose from \['auto', 'torch', 'onnx'\]"):
        score_pairs(first, second, runtime="fast")
