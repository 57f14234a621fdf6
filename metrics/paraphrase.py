"""Which pairs are paraphrases: the features of a pair and the shipped classifier's probability.

The corpus is built by rules; a pair of captions of one image may be a paraphrase or two
captions that merely share a subject (the thesis found 49 of 100, §5.2.2). This module turns
a pair into the features the thesis's future work asks for (§7.1): its Δsem,syn measures and
meta-information the build has, and gives the probability that it is a paraphrase under a
logistic regression trained on the hand-labelled pairs of ``tests/data/paraphrases/``
(``python benchmarks/paraphrase_study.py`` trains and evaluates it).

The model is plain data (``metrics/data/paraphrase_classifier.json``: the feature list, the
standardization, the weights, its cross-validated figures), so scoring needs numpy only and
no pickle is ever loaded.
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

MODEL_PATH = Path(__file__).parent / "data" / "paraphrase_classifier.json"
MEASURES = ("rouge1", "rougeL", "bleu", "wms", "bert", "st")
META = ("same_page", "rule", "words_min", "words_ratio", "names_title", "title_identity", "references", "template")
FEATURES = MEASURES + META
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


@dataclasses.dataclass(frozen=True)
class Classifier:
    """A logistic regression over standardized features, as plain numbers.

    ``profile`` is the metric profile whose scores it was trained on: the measures of
    another profile lie elsewhere, so its probabilities would mean nothing there.
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

    def __post_init__(self) -> None:
        sizes = {len(self.features), len(self.mean), len(self.scale), len(self.coefficients)}
        if len(sizes) != 1:
            raise ValueError(f"classifier {self.version}: features, mean, scale and coefficients differ in length")

    def probability(self, matrix: np.ndarray) -> np.ndarray:
        """P(paraphrase) per row; NaN where a feature is NaN (a measure that could not be computed)."""
        if matrix.ndim != 2 or matrix.shape[1] != len(self.features):
            raise ValueError(f"classifier {self.version} takes {len(self.features)} features, not {matrix.shape[-1]}")
        z = (matrix - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coefficients) + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "classifier") -> Classifier:
        try:
            data = json.loads(text)
            data["features"] = tuple(data["features"])
            for name in ("mean", "scale", "coefficients"):
                data[name] = tuple(float(value) for value in data[name])
            return cls(**data)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{where}: not a paraphrase classifier ({error})") from None


def load_classifier(path: str | Path | None = None) -> Classifier:
    """The shipped classifier (or one at ``path``), checked to take the features this module computes."""
    source = Path(path) if path is not None else MODEL_PATH
    model = Classifier.from_json(source.read_text(encoding="utf-8"), str(source))
    if model.features != FEATURES:
        raise ValueError(
            f"{source}: the classifier takes the features {list(model.features)}; this version computes "
            f"{list(FEATURES)}"
        )
    return model
