"""Which pairs are paraphrases: the features of a pair and the shipped classifiers' probability.

The corpus is built by rules; a pair of captions of one image may be a paraphrase or two
captions that merely share a subject (the thesis found 49 of 100, §5.2.2). This module gives
the probability that a pair is a paraphrase under one of the shipped models (:data:`MODELS`;
docs/paraphrases.md compares them on pairs that people labelled):

- ``crossencoder`` (the default): all-MiniLM-L6-v2 fine-tuned as a cross-encoder on the train
  and dev splits of STS-B, MSRPC and PAWS-Wiki (:mod:`metrics.crossencoder`;
  ``python benchmarks/paraphrase_crossencoder.py`` trains and measures it);
- ``seed``: Brockett & Dolan's (2005) linear SVM over their string, morphological, WordNet and
  composite features (:mod:`metrics.seed_features`), trained on MSRPC's training split and
  Platt-calibrated there, as the seed trained it (``msrpc`` is its former name);
- ``measures``: a logistic regression over the six Δsem,syn measures and the build's
  meta-information (the thesis's future work, §7.1), trained on the project's labelled pairs.

The linear models are plain data (``metrics/data/paraphrase_*.json``: the feature list, the
standardization, the weights, the calibration, the training corpora and the figures), so they
need numpy only; the cross-encoder's weights are safetensors. No pickle is ever loaded.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from builder.config import CAPTION_RULES
from metrics.crossencoder import CrossEncoderClassifier, scored_cosine
from metrics.seed_features import SEED_FEATURES, seed_features

DATA = Path(__file__).parent / "data"
MODEL_PATH = DATA / "paraphrase_classifier.json"  # the ``measures`` model
MODELS = {
    "crossencoder": DATA / "paraphrase_crossencoder.json",
    "seed": DATA / "paraphrase_msrpc.json",
    "measures": MODEL_PATH,
}
DEFAULT_MODEL = "crossencoder"
ALIASES = {"msrpc": "seed"}  # the seed's SVM was called after its corpus
RETIRED = {
    "caption": "the seed's SVM calibrated on the project's own labelled pairs was retired: its probability hardly "
    "moved (p > 0.5 for every STS-B caption pair) and its labels were the project's own; use 'crossencoder' (the "
    "default) or 'seed'",
}
MEASURES = ("rouge1", "rougeL", "bleu", "wms", "bert", "st")
META = ("same_page", "rule", "words_min", "words_ratio", "names_title", "title_identity", "references", "template")
FEATURES = MEASURES + META  # the ``measures`` model's
KNOWN_FEATURES = frozenset(FEATURES) | frozenset(SEED_FEATURES)
# What meta_features reads of a table beyond the two texts.
META_COLUMNS = ("image", "page1", "page2")
# The caption rule the pair's captions passed, as a number: the stricter, the higher (CAPTION_RULES lists the
# rules strictest first).
RULE_LEVELS = {rule: level for level, rule in enumerate(reversed(CAPTION_RULES))}
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)$")


def pair_key(row: Mapping[str, object]) -> tuple[object, ...]:
    """One pair whatever its order or config: the image and its two (page, caption) references."""
    first, second = (row["page1"], row["sentence1"]), (row["page2"], row["sentence2"])
    return (row["image"], *sorted((first, second), key=repr))


def caption_rule_of(parameters: Mapping[str, object]) -> str:
    """The caption rule of a config from its parameters (``funnel.json``), ``none`` when it names none."""
    rule = str(parameters.get("caption_rule", "none"))
    return rule if rule in RULE_LEVELS else "none"


def image_references(table: pa.Table) -> list[int]:
    """Per row: how many references (page, caption) of its image the config holds.

    Counted from the config's own rows, so a scored folder and the labelled sample count alike:
    an image whose captions pair with each other on many pages is a widely reused one (a map,
    a portrait), whose captions tend to share a subject more than a message.
    """
    images = table.column("image").to_pylist()
    references: dict[str, set[tuple[str, str]]] = {}
    for image, page1, page2, text1, text2 in zip(
        images,
        table.column("page1").to_pylist(),
        table.column("page2").to_pylist(),
        table.column("sentence1").to_pylist(),
        table.column("sentence2").to_pylist(),
        strict=True,
    ):
        held = references.setdefault(image, set())
        held.add((page1, text1))
        held.add((page2, text2))
    return [len(references[image]) for image in images]


def names_title(text: str, title: str) -> bool:
    """Whether a caption names its page's title (without a disambiguation such as `` (band)``)."""
    name = _DISAMBIGUATION.sub("", title or "").strip().casefold()
    return bool(name) and name in text.casefold()


def _words(text: str) -> int:
    return max(1, len(text.split()))


def meta_features(table: pa.Table, rule: str | Sequence[str], references: Sequence[int] | None = None) -> np.ndarray:
    """The meta-information features of every row (columns in the order of :data:`META`).

    ``rule`` is the caption rule both captions passed: the config's, or the strictest per row
    (a silver pair that gold holds too passed the sentence rule); ``references`` the image's
    references per row (default: :func:`image_references` of ``table``).
    """
    rows = table.num_rows
    rules = [rule] * rows if isinstance(rule, str) else list(rule)
    unknown = sorted(set(rules) - set(RULE_LEVELS))
    if unknown or len(rules) != rows:
        raise ValueError(f"caption rules must be one per row, each of {list(RULE_LEVELS)}; got {unknown or len(rules)}")
    counts = list(references) if references is not None else image_references(table)
    if len(counts) != rows:
        raise ValueError(f"{len(counts)} reference counts for {rows} rows")
    columns = set(table.column_names)
    first, second = table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist()
    page1, page2 = table.column("page1").to_pylist(), table.column("page2").to_pylist()
    same = (
        table.column("same_page").to_pylist()
        if "same_page" in columns
        else [a == b for a, b in zip(page1, page2, strict=True)]
    )
    identity = table.column("identity").to_pylist() if "identity" in columns else ["title"] * rows
    source1 = table.column("source1").to_pylist() if "source1" in columns else [""] * rows
    source2 = table.column("source2").to_pylist() if "source2" in columns else [""] * rows
    out = np.zeros((rows, len(META)), dtype=np.float64)
    for row in range(rows):
        shorter, longer = sorted((_words(first[row]), _words(second[row])))
        out[row] = (
            float(bool(same[row])),
            RULE_LEVELS[rules[row]],
            math.log(shorter),
            shorter / longer,
            names_title(first[row], page1[row]) + names_title(second[row], page2[row]),
            float(identity[row] in ("title", "url")),
            math.log(max(1, counts[row])),
            float("template" in (source1[row], source2[row])),
        )
    return out


def features(
    table: pa.Table,
    scores: Mapping[str, Sequence[float]],
    rule: str | Sequence[str],
    references: Sequence[int] | None = None,
) -> np.ndarray:
    """Every row's features (:data:`FEATURES`): its Δsem,syn measures, then its meta-information."""
    measures = np.column_stack([np.asarray(scores[name], dtype=np.float64) for name in MEASURES])
    return np.hstack([measures, meta_features(table, rule, references)])


def model_features(
    names: Sequence[str],
    table: pa.Table,
    scores: Mapping[str, Sequence[float]] | None = None,
    rule: str | Sequence[str] | None = None,
    references: Sequence[int] | None = None,
) -> np.ndarray:
    """The features ``names`` of every row of ``table``, in that order.

    Brockett & Dolan's features need the two texts only; the Δsem,syn measures need ``scores``;
    the meta-information needs the build's columns and ``rule`` (see :func:`meta_features`).
    """
    columns: dict[str, np.ndarray] = {}
    if any(name in SEED_FEATURES for name in names):
        matrix = seed_features(table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist())
        columns.update((name, matrix[:, index]) for index, name in enumerate(SEED_FEATURES))
    if any(name in MEASURES for name in names):
        if scores is None:
            raise ValueError("this classifier takes the Δsem,syn measures; score the pairs first")
        columns.update((name, np.asarray(scores[name], dtype=np.float64)) for name in MEASURES)
    if any(name in META for name in names):
        missing = [column for column in META_COLUMNS if column not in table.column_names]
        if missing or rule is None:
            raise ValueError(
                f"this classifier takes the build's meta-information: the pairs lack {', '.join(missing) or 'a rule'}"
            )
        matrix = meta_features(table, rule, references)
        columns.update((name, matrix[:, index]) for index, name in enumerate(META))
    return np.column_stack([columns[name] for name in names]) if names else np.zeros((table.num_rows, 0))


@dataclasses.dataclass(frozen=True)
class Classifier:
    """A linear model over standardized features, as plain numbers.

    The margin ``z·w + b`` becomes a probability through the logistic function, after Platt's
    calibration ``a·margin + c`` where ``calibration`` holds ``a`` and ``c`` (an SVM's margin
    is no probability; a logistic regression's needs none). ``profile`` is the metric profile
    whose scores it was trained on, or empty when it takes none of the Δsem,syn measures: the
    measures of another profile lie elsewhere, so its probabilities would mean nothing there.
    ``labelled`` is the labelled caption sample the cut by precision is chosen on: each pair's
    out-of-fold probability, label and source (:func:`cut_for_precision`).
    """

    version: str
    profile: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coefficients: tuple[float, ...]
    intercept: float
    evaluation: Mapping[str, object]
    trained_on: Mapping[str, object]
    calibration: Mapping[str, float] = dataclasses.field(default_factory=dict)
    labelled: Mapping[str, list] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        sizes = {len(self.features), len(self.mean), len(self.scale), len(self.coefficients)}
        if len(sizes) != 1:
            raise ValueError(f"classifier {self.version}: features, mean, scale and coefficients differ in length")
        if self.calibration and set(self.calibration) != {"a", "c"}:
            raise ValueError(f"classifier {self.version}: a calibration holds a and c, not {sorted(self.calibration)}")

    @property
    def takes_measures(self) -> bool:
        """Whether it needs the Δsem,syn measures (and so a profile's scores)."""
        return any(name in MEASURES for name in self.features)

    def margin(self, matrix: np.ndarray) -> np.ndarray:
        """The linear model's signed distance per row, before any calibration."""
        if matrix.ndim != 2 or matrix.shape[1] != len(self.features):
            raise ValueError(f"classifier {self.version} takes {len(self.features)} features, not {matrix.shape[-1]}")
        z = (matrix - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coefficients) + self.intercept

    def probability(self, matrix: np.ndarray) -> np.ndarray:
        """P(paraphrase) per row; NaN where a feature is NaN (a measure that could not be computed)."""
        logits = self.margin(matrix)
        if self.calibration:
            logits = self.calibration["a"] * logits + self.calibration["c"]
        return 1.0 / (1.0 + np.exp(-logits))

    def labelled_probability(self) -> list[float]:
        """The labelled sample's probabilities a cut by precision is chosen on."""
        return list(self.labelled.get("probability", []))

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "classifier") -> Classifier:
        try:
            data = json.loads(text)
            data["features"] = tuple(data["features"])
            for name in ("mean", "scale", "coefficients"):
                data[name] = tuple(float(value) for value in data[name])
            data["calibration"] = {key: float(value) for key, value in data.get("calibration", {}).items()}
            return cls(**data)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"{where}: not a paraphrase classifier ({error})") from None


AnyClassifier = Classifier | CrossEncoderClassifier


def classifier_name(name: str) -> str:
    """A shipped classifier's name as given on a command line: a former name maps to today's, a retired one says why
    (an ``argparse`` type: its ValueError becomes the usage error)."""
    name = ALIASES.get(name, name)
    if name in RETIRED:
        raise ValueError(f"classifier {name!r}: {RETIRED[name]}")
    if name not in MODELS:
        raise ValueError(f"no classifier {name!r}; the shipped ones are {', '.join(MODELS)}")
    return name


def load_classifier(source: str | Path | None = None) -> AnyClassifier:
    """A shipped classifier by name (:data:`MODELS`, default :data:`DEFAULT_MODEL`) or one at a path, checked to
    take features this module computes."""
    if source is None or (isinstance(source, str) and "/" not in source and not source.endswith(".json")):
        path = MODELS[classifier_name(source or DEFAULT_MODEL)]
    else:
        path = Path(source)
    text = path.read_text(encoding="utf-8")
    try:
        kind = json.loads(text).get("kind")
    except (json.JSONDecodeError, AttributeError):
        kind = None
    if kind == "cross-encoder":
        return CrossEncoderClassifier.from_json(text, str(path))
    model = Classifier.from_json(text, str(path))
    unknown = [name for name in model.features if name not in KNOWN_FEATURES]
    if unknown:
        raise ValueError(
            f"{path}: the classifier takes the features {list(model.features)}; this version computes "
            f"{sorted(KNOWN_FEATURES)}, not {unknown}"
        )
    return model


@dataclasses.dataclass(frozen=True)
class Cut:
    """A probability cut chosen by precision on the labelled sample, with what it keeps there."""

    threshold: float
    precision: float
    low: float  # Wilson 95% interval of the precision
    high: float
    recall: float
    kept: int  # labelled pairs at or above the cut
    paraphrases: int  # of them, labelled paraphrases
    labelled: int  # labelled pairs in all
    positives: int  # labelled paraphrases in all


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score 95% interval of a share (numpy only, so scoring needs no scipy)."""
    if trials == 0:
        return math.nan, math.nan
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def pair_probability(
    model: AnyClassifier,
    table: pa.Table,
    scores: Mapping[str, Sequence[float]] | None = None,
    rule: str | Sequence[str] | None = None,
    references: Sequence[int] | None = None,
) -> np.ndarray:
    """P(paraphrase) of every row of ``table`` under ``model``: the cross-encoder reads the two texts, a linear model
    its features (:func:`model_features`)."""
    if isinstance(model, CrossEncoderClassifier):
        first, second = table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist()
        return model.probability(first, second, cosine=scored_cosine(scores))
    return model.probability(model_features(model.features, table, scores, rule, references))


def cut_for_precision(model: AnyClassifier, min_precision: float) -> Cut:
    """The lowest cut whose kept labelled pairs reach ``min_precision`` (the most recall at that precision).

    The labelled sample's probabilities are out-of-fold where the model was trained on it, but
    the cut is chosen on the same sample its precision is estimated on, so the estimate leans
    high; the Wilson interval says how far the sample's size lets it move.
    """
    if not 0 < min_precision <= 1:
        raise ValueError(f"--min-precision must be in (0, 1], not {min_precision}")
    probabilities = np.asarray(model.labelled_probability(), dtype=np.float64)  # as this machine's scoring computes
    labels = np.asarray(model.labelled.get("label", []), dtype=np.int64)
    if not len(probabilities):
        raise ValueError(f"classifier {model.version} holds no labelled sample to choose a cut on")
    order = np.argsort(-probabilities, kind="stable")
    ranked, hits = probabilities[order], np.cumsum(labels[order])
    kept = np.arange(1, len(ranked) + 1)
    last = np.r_[ranked[1:] != ranked[:-1], True]  # a cut keeps every pair of equal probability
    precision = hits / kept
    reached = np.flatnonzero(last & (precision >= min_precision))
    if not reached.size:
        best = float(precision[last].max())
        raise ValueError(
            f"no cut of classifier {model.version} reaches precision {min_precision:g} on its labelled sample "
            f"(the best is {best:.3f})"
        )
    index = int(reached[-1])
    low, high = wilson(int(hits[index]), int(kept[index]))
    return Cut(
        threshold=float(ranked[index]),
        precision=float(precision[index]),
        low=low,
        high=high,
        recall=float(hits[index] / max(1, labels.sum())),
        kept=int(kept[index]),
        paraphrases=int(hits[index]),
        labelled=len(labels),
        positives=int(labels.sum()),
    )
