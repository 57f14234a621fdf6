"""The hand-labelled caption pairs as a sample: reading and checking the file, the two labellers' agreement
(Cohen's κ, pooled and per source), and the share of paraphrases per group with its Wilson interval.
``benchmarks/paraphrase_study.py`` prints them beside the classifiers' figures."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

RELATIONS = ("equivalence", "entailment", "intersection", "exclusion", "negation")
THESIS = (49, 100)  # the thesis §5.2.2: 49 paraphrases among 100 labelled candidates


class LabelError(ValueError):
    """A malformed labelled file; the message names the file and the line."""


def read_labels(path: Path) -> list[dict[str, str]]:
    """The labelled pairs, each checked: a 0/1 label, a known relation, a second label only with its relation."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for number, row in enumerate(rows, 2):
        for label, relation in (("paraphrase", "relation"), ("paraphrase2", "relation2")):
            if label == "paraphrase2" and not row.get(label):
                if row.get(relation):
                    raise LabelError(f"{path}:{number}: {relation} without {label}")
                continue
            if row.get(label) not in ("0", "1"):
                raise LabelError(f"{path}:{number}: {label} must be 0 or 1, not {row.get(label)!r}")
            if row.get(relation) not in RELATIONS:
                raise LabelError(f"{path}:{number}: {relation} must be one of {RELATIONS}, not {row.get(relation)!r}")
    return rows


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """The Wilson score 95% interval of a share (scipy's)."""
    from scipy.stats import binomtest

    interval = binomtest(successes, trials).proportion_ci(0.95, method="wilson")
    return float(interval.low), float(interval.high)


def agreement(rows: Sequence[dict[str, str]]) -> dict[str, object]:
    """Cohen's κ of the two labellers on the pairs labelled twice, for the label and for the relation."""
    from sklearn.metrics import cohen_kappa_score

    twice = [row for row in rows if row.get("paraphrase2")]
    if not twice:
        return {"pairs": 0, "kappa": math.nan, "agreed": 0, "kappa_relation": math.nan, "agreed_relation": 0}
    first, second = [row["paraphrase"] for row in twice], [row["paraphrase2"] for row in twice]
    relation1, relation2 = [row["relation"] for row in twice], [row["relation2"] for row in twice]
    return {
        "pairs": len(twice),
        "kappa": float(cohen_kappa_score(first, second)),
        "agreed": sum(a == b for a, b in zip(first, second, strict=True)),
        "kappa_relation": float(cohen_kappa_score(relation1, relation2)),
        "agreed_relation": sum(a == b for a, b in zip(relation1, relation2, strict=True)),
    }


def agreement_by_source(rows: Sequence[dict[str, str]]) -> dict[str, dict[str, object]]:
    """:func:`agreement` per source that has pairs labelled twice (a source's own labelling questions)."""
    sources = sorted({row["source"] for row in rows if row.get("paraphrase2")})
    return {source: agreement([row for row in rows if row["source"] == source]) for source in sources}


def kind(row: dict[str, str]) -> str:
    if row["language1"] != row["language2"]:
        return "cross-lingual"
    return "English" if row["language1"] == "en" else "other editions"


def share(name: str, rows: Sequence[dict[str, str]]) -> dict[str, object]:
    """The paraphrases among ``rows``, with the Wilson interval."""
    labels = [int(row["paraphrase"]) for row in rows]
    low, high = wilson(sum(labels), len(labels)) if labels else (math.nan, math.nan)
    return {"group": name, "pairs": len(labels), "paraphrases": sum(labels), "low": low, "high": high}


def shares(rows: Sequence[dict[str, str]]) -> list[dict[str, object]]:
    """Paraphrases per caption rule the pair's captions passed (gold's, silver's, none), per config it reaches,
    and per kind of pair."""
    groups = [
        share("captions pass gold's filters (sentence rule)", [r for r in rows if r["rule"] == "sentence"]),
        share("captions pass silver's filters (verb rule)", [r for r in rows if r["rule"] in ("verb", "sentence")]),
        share("captions pass neither (relaxed filters)", [r for r in rows if r["rule"] == "none"]),
    ]
    for reached in sorted({row["reaches"] for row in rows}):
        groups.append(share(f"reaches {reached}", [row for row in rows if row["reaches"] == reached]))
    for source in sorted({row["source"] for row in rows}):
        groups.append(share(f"from {source}", [row for row in rows if row["source"] == source]))
    for name in ("English", "cross-lingual", "other editions"):
        picked = [row for row in rows if kind(row) == name]
        if picked:
            groups.append(share(name, picked))
    groups.append(share("all", rows))
    return groups
