"""The ``paper`` profile without its models: a clear error within seconds, not minutes of retries.

The servers are pointed at a closed local port, so these tests behave the same with or
without internet access. The time bound is a hang guard, not a performance threshold.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from metrics import ModelUnavailable, profiles, score_pairs

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused at once
HANG_GUARD = 20.0  # seconds


@pytest.fixture
def no_servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub.constants
    import nltk

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", CLOSED)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(profiles, "GENSIM_URL", CLOSED)
    monkeypatch.setattr(profiles, "NLTK_URL", CLOSED)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data")])
    profiles.reachable.cache_clear()
    yield
    profiles.reachable.cache_clear()


@pytest.mark.parametrize(
    ("measure", "what"),
    [
        ("st", r"sentence model 'sentence-transformers/paraphrase-mpnet-base-v2' \(not in the local Hugging Face"),
        ("bert", r"BERTScore model 'roberta-large' \(not in the local Hugging Face cache and http://127.0.0.1:9"),
        ("wms", r"word vectors 'fasttext-wiki-news-subwords-300' \(not in .*gensim-data, offline"),
    ],
)
def test_paper_models_unreachable_fail_fast(no_servers: None, measure: str, what: str) -> None:
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match=rf"profile 'paper': cannot load {what}.*Run once with internet"):
        score_pairs(["A rabbit postcard"], ["A bunny card"], profile="paper", measures=[measure])
    assert time.monotonic() - started < HANG_GUARD


def test_paper_stop_words_unreachable_fail_fast(no_servers: None, tmp_path: Path) -> None:
    vectors = tmp_path / "tiny.vec"
    vectors.write_text("2 2\nrabbit 1 0\nbunni 0.8 0.6\n", encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match=r"cannot load NLTK's 'stopwords' corpus \(not in NLTK_DATA, offline\)"):
        score_pairs(["A rabbit"], ["A bunny"], profile="paper", measures=["wms"], word_vectors=str(vectors))
    assert time.monotonic() - started < HANG_GUARD


@pytest.mark.parametrize("measure", ["st", "bert", "wms"])
def test_multilingual_model_unreachable_fails_fast(no_servers: None, measure: str) -> None:
    """The multilingual profile loads its one model from the Hub: offline, the same clear error as the others."""
    started = time.monotonic()
    with pytest.raises(
        ModelUnavailable,
        match=r"profile 'multilingual': cannot load model "
        r"'sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2' "
        r"\(not in the local Hugging Face cache and http://127.0.0.1:9 is unreachable\)\. Run once with internet "
        r"access .* Or pass a local path for it \(for English texts: profile='minilm', offline\)\.",
    ):
        score_pairs(
            ["Une carte postale de Pâques de 1907"],
            ["Le lapin de Pâques sur une carte de 1907"],
            profile="multilingual",
            language="fr",
            measures=[measure],
        )
    assert time.monotonic() - started < HANG_GUARD
