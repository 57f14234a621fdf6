"""Choose Table 7's ST threshold for a sentence model the way the paper chose 0.8: on MSRPC's labels.

The paper (section 4, "Quantitative Similarity Analysis") kept the pairs with ST > 0.8,
the threshold at which ST "correctly classifies" MSRPC's paraphrases with precision 0.82
and recall 0.77. Another sentence model gives other cosines, so the same subset needs
another threshold: the one whose precision and recall on MSRPC come closest to 0.82/0.77.
Usage::

    python benchmarks/calibration.py PATH [--profile minilm|paper] [--cache DIR]

PATH is the MSRPC release: ``msr_paraphrase_train.txt``, ``msr_paraphrase_test.txt`` or
their folder (then both are read: 5,801 labelled pairs).

Where the paper is silent (the authors' published scorers hold no threshold code), we chose:

* **Data**: every labelled pair of the files given; with the folder, train and test, as
  Table 7's MSRPC row (3,720 pairs = 64% of 5,801) shows the authors scored both.
* **ST**: the cosine of the two sentence embeddings, clipped to [0, 1] as every measure is
  (as the authors' scorer did); a pair without an ST score (NaN) is counted and left out.
* **Classifier**: "paraphrase" when ST > t, as "ST > 0.8" reads; precision and recall are
  those of the paraphrase label (quality 1).
* **Candidates**: the distinct ST scores of the pairs, all evaluated in one sorted sweep; a
  candidate that predicts no pair has no precision and is not a candidate.
* **Closest**: the smallest Euclidean distance of (precision, recall) to (0.82, 0.77); of
  equally close candidates the highest threshold (the smaller, more similar subset).
* **Value**: any t from the chosen score up to (not including) the next higher score selects
  the same pairs; the shortest decimal in that range is reported, so that the label
  ``st>t`` is exactly the threshold applied.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import sys
from decimal import ROUND_CEILING, ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from metrics.corpora import CORPORA, CorpusError, load
from metrics.profiles import ModelUnavailable, Profile, StThreshold, get_profile

TARGET_PRECISION = 0.82  # the paper's precision and recall of ST > 0.8 on MSRPC (section 4)
TARGET_RECALL = 0.77
TIE = 1e-12  # distances closer than this are a tie (rounding noise), broken toward the higher threshold


@dataclasses.dataclass(frozen=True)
class Calibration:
    """The chosen threshold, its precision and recall on MSRPC, and what it was chosen on."""

    threshold: float
    precision: float
    recall: float
    source: str
    pairs: int  # labelled pairs with an ST score: the ones the sweep saw
    positives: int
    unscored: int  # labelled pairs whose ST is NaN, left out
    candidates: int

    def describe(self) -> str:
        return (
            f"ST threshold {written(self.threshold)}: precision {self.precision:.3f}, recall {self.recall:.3f} on "
            f"{self.pairs:,} labelled MSRPC pairs ({self.positives:,} paraphrases) of {self.source}; "
            f"{self.unscored:,} pairs without an ST score left out; {self.candidates:,} candidate thresholds"
        )

    def as_threshold(self) -> StThreshold:
        where = f"chosen in this run on the {self.pairs:,} labelled pairs of {self.source}"
        return StThreshold(self.threshold, self.precision, self.recall, where)


def sweep(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every distinct score as threshold t (paraphrase when score > t): t, precision, recall, in one sorted pass.

    Precision is NaN where no pair scores above t; ``labels`` are 1 (paraphrase) or 0.
    """
    order = np.argsort(scores, kind="stable")
    ordered = scores[order]
    # positives among the k lowest-scored pairs, for k = 0 … n
    positives_below = np.concatenate(([0], np.cumsum(labels[order])))
    thresholds = np.unique(ordered)
    at_or_below = np.searchsorted(ordered, thresholds, side="right")
    predicted = len(ordered) - at_or_below
    true_positives = positives_below[-1] - positives_below[at_or_below]
    precision = np.full(len(thresholds), np.nan)
    np.divide(true_positives, predicted, out=precision, where=predicted > 0)
    recall = true_positives / positives_below[-1]
    return thresholds, precision, recall


def shortest_between(low: float, high: float) -> float:
    """The number with the fewest decimals in [low, high): it selects exactly the pairs ``> low`` selects."""
    for places in range(1, 18):
        step = Decimal(1).scaleb(-places)
        # the nearest decimal may be the float ``low`` itself (0.4 is stored a little above 0.4)
        for rounding in (ROUND_HALF_EVEN, ROUND_CEILING):
            candidate = float(Decimal(low).quantize(step, rounding=rounding))
            if low <= candidate < high:
                return candidate
    return low


def choose(scores: np.ndarray, labels: np.ndarray, source: str) -> Calibration:
    """The threshold whose (precision, recall) is closest to the paper's (0.82, 0.77); see the module notes."""
    scored = ~np.isnan(scores)
    positives = int(labels[scored].sum())
    if not positives:
        raise CorpusError(f"{source}: no paraphrase (quality 1) among the {int(scored.sum()):,} scored labelled pairs")
    thresholds, precision, recall = sweep(scores[scored], labels[scored])
    usable = ~np.isnan(precision)
    if not usable.any() or recall[usable].max() == 0:
        raise CorpusError(f"{source}: no ST threshold reaches any recall (no paraphrase scores above the lowest ST)")
    distance = np.hypot(precision - TARGET_PRECISION, recall - TARGET_RECALL)
    distance[~usable] = np.inf
    best = int(np.flatnonzero(distance <= distance.min() + TIE)[-1])  # thresholds ascend: the highest of a tie
    return Calibration(
        threshold=shortest_between(float(thresholds[best]), float(thresholds[best + 1])),
        precision=float(precision[best]),
        recall=float(recall[best]),
        source=source,
        pairs=int(scored.sum()),
        positives=positives,
        unscored=int((~scored).sum()),
        candidates=int(usable.sum()),
    )


def written(threshold: float) -> str:
    """The threshold as the shortest decimal that reads back as exactly the value applied."""
    return repr(float(threshold))


def _cache_key(files: list[Path], metric: str) -> str:
    """The MSRPC files (path, size, modification time) and the metric signature."""
    digest = hashlib.sha256(f"msrpc-calibration|{metric}".encode())
    for file in files:
        stat = file.stat()
        digest.update(f"|{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def labelled_st(path: Path, profile: Profile, cache: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """ST scores and labels (1 paraphrase, 0 not) of every pair of the MSRPC release at ``path``, cached."""
    from metrics.scoring import score_pairs, signature  # torch loads here, not when the module is imported

    target = None
    if cache is not None:
        target = cache / f"msrpc-calibration-{_cache_key(CORPORA['msrpc'].files(path), signature(profile))}.parquet"
        if target.is_file():
            print(f"msrpc calibration: cached ST scores {target.name}")
            table = pq.read_table(target)
            return table.column("st").to_numpy(), table.column("label").to_numpy()
    records, report = load("msrpc", path)
    if not records:
        raise CorpusError(f"{path}: no MSRPC pairs to calibrate the ST threshold on")
    print(f"msrpc calibration: scoring ST of {report.read:,} labelled pairs of {path}")
    result = score_pairs(
        [r.sentence1 for r in records], [r.sentence2 for r in records], profile=profile, measures=["st"], progress=True
    )
    scores = np.asarray(result["st"], dtype=np.float64)
    labels = np.asarray([r.label for r in records], dtype=np.int64)  # the release labels every pair 0 or 1
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"st": scores, "label": labels}), target)
    return scores, labels


def calibrate(path: Path, profile: Profile, cache: Path | None = None) -> Calibration:
    """Score ST on the MSRPC release at ``path`` and choose the threshold."""
    scores, labels = labelled_st(path, profile, cache)
    return choose(scores, labels, os.path.normpath(path))  # a config's "folder/../corpus" read as "corpus"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="msr_paraphrase_train.txt, msr_paraphrase_test.txt or their folder")
    parser.add_argument(
        "--profile", default="minilm", choices=("minilm", "paper"), help="whose sentence model scores ST"
    )
    parser.add_argument("--cache", type=Path, metavar="DIR", help="keep the ST scores here for the next run")
    arguments = parser.parse_args(argv)
    profile = get_profile(arguments.profile)
    try:
        calibration = calibrate(arguments.path, profile, arguments.cache)
    except (CorpusError, ModelUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(calibration.describe())
    default = profile.st_threshold
    print(
        f"profile {profile.name}'s default: {written(default.value)} (precision {default.precision:.2f}, "
        f"recall {default.recall:.2f}; {default.provenance})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
