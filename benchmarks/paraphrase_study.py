"""Which pairs are paraphrases: the labelled study, measured.

Reads the hand-labelled real pairs (``tests/data/paraphrases/labelled_pairs.tsv``) and prints

1. the agreement of the two labellers on the double-labelled fifth (Cohen's κ, paraphrase and relation);
2. the share of paraphrases per config a pair reaches (gold, silver, ...) and per kind of pair,
   with a Wilson 95% interval, beside the thesis's 49 of 100 (§5.2.2);
3. the paraphrase classifier (:mod:`metrics.paraphrase`: a logistic regression over the Δsem,syn
   measures and meta-information), cross-validated on the English pairs (stratified 5-fold keeping
   each image's pairs together, repeated), against three baselines on the same folds: every pair
   positive, the paper's ST > 0.8 and the calibrated ST threshold of ``benchmarks/compare.py``.

``--write-model`` trains the classifier on every English pair and writes it where the package
ships it (``metrics/data/paraphrase_classifier.json``) with the figures printed here::

    python benchmarks/paraphrase_study.py [--labels FILE] [--write-model] [--json FILE]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.paraphrase import FEATURES, MODEL_PATH, Classifier, features  # noqa: E402
from metrics.profiles import MINILM_ST_THRESHOLD, PAPER_ST_THRESHOLD  # noqa: E402

LABELS = ROOT / "tests" / "data" / "paraphrases" / "labelled_pairs.tsv"
RELATIONS = ("equivalence", "entailment", "intersection", "exclusion", "negation")
THESIS = (49, 100)
SEED = 30
SPLITS, REPEATS = 5, 10
PROFILE = "minilm"
VERSION = "paraphrase-lr-1"
TARGET_RECALL = 0.70  # the goal: precision ≥ 0.80 at recall ≥ 0.70


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


def table_of(rows: Sequence[dict[str, str]]) -> pa.Table:
    """The rows as a build's parquet holds them (the columns :func:`metrics.paraphrase.features` reads)."""
    columns = ("image", "page1", "page2", "sentence1", "sentence2", "identity", "source1", "source2")
    data: dict[str, list[object]] = {column: [row[column] for row in rows] for column in columns}
    data["same_page"] = [row["same_page"] == "True" for row in rows]
    return pa.table(data)


def english_features(rows: Sequence[dict[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """The English pairs' features (Δsem,syn measures by the offline profile, and meta) and labels."""
    from metrics.scoring import score_pairs

    table = table_of(rows)
    scores = score_pairs(
        table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist(), profile=PROFILE, progress=False
    )
    rules = [row["rule"] for row in rows]
    matrix = features(table, scores, rules, [int(row["references"]) for row in rows])  # type: ignore[arg-type]
    return matrix, np.array([int(row["paraphrase"]) for row in rows])


def operating_threshold(matrix: np.ndarray, labels: np.ndarray, groups: Sequence[str]) -> float:
    """The probability cut with the best precision at recall ≥ :data:`TARGET_RECALL`, chosen on out-of-fold
    probabilities of the given pairs only (grouped by image), so that a test fold never chooses its own cut."""
    from sklearn.metrics import precision_recall_curve
    from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict

    folds = StratifiedGroupKFold(n_splits=4)
    model = _model("logistic regression")
    probability = cross_val_predict(model, matrix, labels, cv=folds, groups=groups, method="predict_proba")[:, 1]  # type: ignore[arg-type]
    precision, recall, cuts = precision_recall_curve(labels, probability)
    reached = np.flatnonzero(recall[:-1] >= TARGET_RECALL)  # the curve's last point has no cut
    return float(cuts[reached[np.argmax(precision[reached])]]) if reached.size else 0.5


def _precision_recall(truth: np.ndarray, predicted: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import precision_score, recall_score

    return (
        float(precision_score(truth, predicted, zero_division=np.nan)),
        float(recall_score(truth, predicted, zero_division=np.nan)),
    )


def _model(kind_: str) -> object:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind_ == "logistic regression":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    return HistGradientBoostingClassifier(max_depth=3, max_iter=100, learning_rate=0.05, random_state=SEED)


def cross_validate(matrix: np.ndarray, labels: np.ndarray, groups: Sequence[str]) -> dict[str, dict[str, float]]:
    """Precision and recall at 0.5 of each model and baseline, pooled per repetition, mean and σ over repetitions.

    The folds keep each image's pairs together (stratified group k-fold): a caption reworded many times
    makes many pairs of one image, and a model tested on pairs whose captions it was trained on would
    look better than it is.
    """
    from sklearn.model_selection import StratifiedGroupKFold

    st = matrix[:, FEATURES.index("st")]
    truth = labels.astype(bool)
    operating = f"logistic regression, cut for recall ≥ {TARGET_RECALL:.2f} chosen in the training folds"
    predictions: dict[str, list[np.ndarray]] = {"logistic regression": [], operating: [], "gradient boosting": []}
    group_array = np.asarray(groups)
    for repeat in range(REPEATS):
        folds = StratifiedGroupKFold(n_splits=SPLITS, shuffle=True, random_state=SEED + repeat)
        current = {name: np.zeros(len(labels), dtype=bool) for name in predictions}
        for train, test in folds.split(matrix, labels, groups):
            for name in ("logistic regression", "gradient boosting"):
                model = _model(name)
                model.fit(matrix[train], labels[train])  # type: ignore[attr-defined]
                probability = model.predict_proba(matrix[test])[:, 1]  # type: ignore[attr-defined]
                current[name][test] = probability > 0.5
                if name == "logistic regression":
                    cut = operating_threshold(matrix[train], labels[train], list(group_array[train]))
                    current[operating][test] = probability >= cut
        for name in predictions:
            predictions[name].append(current[name])
    fixed = {
        "every pair positive": np.ones(len(labels), dtype=bool),
        f"ST > {PAPER_ST_THRESHOLD.value:g} (the paper's)": st > PAPER_ST_THRESHOLD.value,
        f"ST > {MINILM_ST_THRESHOLD.value:g} (calibrated on MSRPC)": st > MINILM_ST_THRESHOLD.value,
    }
    results: dict[str, dict[str, float]] = {}
    for name, runs in predictions.items():
        figures = np.array([_precision_recall(truth, run) for run in runs])
        results[name] = {
            "precision": float(np.nanmean(figures[:, 0])),
            "precision_std": float(np.nanstd(figures[:, 0])),
            "recall": float(figures[:, 1].mean()),
            "recall_std": float(figures[:, 1].std()),
        }
    for name, predicted in fixed.items():  # no training: the same on every fold
        precision, recall = _precision_recall(truth, predicted)
        results[name] = {"precision": precision, "precision_std": 0.0, "recall": recall, "recall_std": 0.0}
    return results


def _mean(values: np.ndarray) -> float:
    """The mean of the figures that exist (NaN: no positive to count), NaN if none does."""
    present = values[~np.isnan(values)]
    return float(present.mean()) if present.size else math.nan


def by_source(
    matrix: np.ndarray, labels: np.ndarray, groups: Sequence[str], sources: Sequence[str]
) -> dict[str, dict[str, dict[str, float]]]:
    """Per source of the pairs: precision and recall at 0.5 of the logistic regression's out-of-fold predictions
    (the folds of :func:`cross_validate`, pooled per repetition, mean over repetitions) and of the ST rules.

    A pooled figure hides that kinds of pairs differ: one page's rewordings, two crowd workers' captions.
    """
    from sklearn.model_selection import StratifiedGroupKFold

    truth, source_array = labels.astype(bool), np.asarray(sources)
    runs = []
    for repeat in range(REPEATS):
        folds = StratifiedGroupKFold(n_splits=SPLITS, shuffle=True, random_state=SEED + repeat)
        current = np.zeros(len(labels), dtype=bool)
        for train, test in folds.split(matrix, labels, groups):
            model = _model("logistic regression")
            model.fit(matrix[train], labels[train])  # type: ignore[attr-defined]
            current[test] = model.predict_proba(matrix[test])[:, 1] > 0.5  # type: ignore[attr-defined]
        runs.append(current)
    st = matrix[:, FEATURES.index("st")]
    fixed = {
        f"ST > {PAPER_ST_THRESHOLD.value:g}": st > PAPER_ST_THRESHOLD.value,
        f"ST > {MINILM_ST_THRESHOLD.value:g}": st > MINILM_ST_THRESHOLD.value,
    }
    results: dict[str, dict[str, dict[str, float]]] = {}
    for source in sorted(set(sources)):
        picked = source_array == source
        figures = np.array([_precision_recall(truth[picked], run[picked]) for run in runs])
        entry = {
            "logistic regression": {
                "precision": _mean(figures[:, 0]),
                "recall": _mean(figures[:, 1]),
            }
        }
        for name, predicted in fixed.items():
            precision, recall = _precision_recall(truth[picked], predicted[picked])
            entry[name] = {"precision": precision, "recall": recall}
        results[source] = {"pairs": {"pairs": float(picked.sum()), "paraphrases": float(truth[picked].sum())}, **entry}
    return results


Weights = tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], float]


def train(matrix: np.ndarray, labels: np.ndarray) -> Weights:
    """The logistic regression on every labelled English pair, as plain numbers (mean, scale, weights, intercept)."""
    model = _model("logistic regression")
    model.fit(matrix, labels)  # type: ignore[attr-defined]
    scaler, regression = model[0], model[1]  # type: ignore[index]
    return (
        tuple(float(v) for v in scaler.mean_),
        tuple(float(v) for v in scaler.scale_),
        tuple(float(v) for v in regression.coef_[0]),
        float(regression.intercept_[0]),
    )


def _interval(entry: dict[str, object]) -> str:
    share = int(entry["paraphrases"]) / int(entry["pairs"])  # type: ignore[call-overload]
    return f"{share:.0%} [{entry['low']:.0%}, {entry['high']:.0%}]"


def report(results: dict[str, object]) -> str:
    """The figures as the markdown tables docs/paraphrases.md shows."""
    kappa = results["agreement"]
    languages: Counter[str] = Counter()
    for pair, count in results["languages"].items():  # type: ignore[union-attr]
        for language in pair.split("-"):
            languages[language] += count
    lines = [
        f"Labelled pairs: {results['pairs']} ({results['english']} English)",
        "",
        "| source | pairs |",
        "|---|---:|",
        *(f"| {source} | {count} |" for source, count in sorted(results["sources"].items())),  # type: ignore[union-attr]
        "",
        "Captions per language (a cross-lingual pair counts once for each of its two): "
        + ", ".join(
            f"{language} {count}" for language, count in sorted(languages.items(), key=lambda i: (-i[1], i[0]))
        ),
        "",
        f"Agreement on the {kappa['pairs']} pairs labelled twice: paraphrase κ = {kappa['kappa']:.2f} "  # type: ignore[index]
        f"({kappa['agreed']} agree), relation κ = {kappa['kappa_relation']:.2f} ({kappa['agreed_relation']} agree)",  # type: ignore[index]
        "",
        "Per source: "
        + "; ".join(
            f"{source} κ = {entry['kappa']:.2f} ({entry['agreed']} of {entry['pairs']} agree)"
            for source, entry in results["agreement_by_source"].items()  # type: ignore[union-attr]
        ),
        "",
        "| pairs | labelled | paraphrases | share [95% CI] |",
        "|---|---:|---:|---|",
    ]
    for entry in results["shares"]:  # type: ignore[union-attr]
        lines.append(f"| {entry['group']} | {entry['pairs']} | {entry['paraphrases']} | {_interval(entry)} |")
    low, high = wilson(*THESIS)
    lines.append(f"| the thesis (§5.2.2) | {THESIS[1]} | {THESIS[0]} | 49% [{low:.0%}, {high:.0%}] |")
    lines += [
        "",
        f"Classifier, {SPLITS}-fold cross-validation repeated {REPEATS}× on the {results['english']} English pairs, "
        f"each image's pairs in one fold ({results['images']} images), at 0.5 unless a row says otherwise:",
        "",
        "| model | precision | recall |",
        "|---|---:|---:|",
    ]
    for name, figures in results["cross_validation"].items():  # type: ignore[union-attr]
        lines.append(
            f"| {name} | {figures['precision']:.2f} ± {figures['precision_std']:.2f} | "
            f"{figures['recall']:.2f} ± {figures['recall_std']:.2f} |"
        )
    lines += [
        "",
        "Per source, on the same folds (logistic regression at 0.5, mean over the repetitions; the rules untrained):",
        "",
        "| source | pairs | paraphrases | logistic regression P / R | ST > 0.8 P / R | ST > 0.755 P / R |",
        "|---|---:|---:|---|---|---|",
    ]
    for source, entry in results["by_source"].items():  # type: ignore[union-attr]
        cells = [  # a figure without a positive (predicted or labelled) to count is none: "–"
            " / ".join(
                "–" if math.isnan(entry[name][measure]) else f"{entry[name][measure]:.2f}"
                for measure in ("precision", "recall")
            )
            for name in list(entry)[1:]
        ]
        lines.append(
            f"| {source} | {entry['pairs']['pairs']:.0f} | {entry['pairs']['paraphrases']:.0f} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def training_note(matrix: np.ndarray) -> str:
    """What the training pairs are, said where the classifier is described: what it has not seen."""
    same = int(matrix[:, FEATURES.index("same_page")].sum())
    constant = [name for index, name in enumerate(FEATURES) if np.ptp(matrix[:, index]) == 0]
    text = (
        f"{same} of its {len(matrix)} training pairs are a caption and an earlier wording of it on the same page "
        "(real English pairs of two pages are scarce in public excerpts), so it has seldom seen two pages' captions"
    )
    if constant:
        text += f"; {', '.join(f'`{name}`' for name in constant)} never varied in them and carry no weight"
    return text + "."


def english_rows(rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The pairs of two English captions: the ones the offline profile scores, and the classifier's training set."""
    return [row for row in rows if row["language1"] == "en" and row["language2"] == "en"]


def study(path: Path) -> tuple[dict[str, object], np.ndarray, np.ndarray]:
    rows = read_labels(path)
    english = english_rows(rows)
    matrix, labels = english_features(english)
    usable = ~np.isnan(matrix).any(axis=1)
    results: dict[str, object] = {
        "pairs": len(rows),
        "english": len(english),
        "unscored": int((~usable).sum()),
        "sources": dict(Counter(row["source"] for row in rows)),
        "languages": dict(Counter(f"{row['language1']}-{row['language2']}" for row in rows)),
        "agreement": agreement(rows),
        "agreement_by_source": agreement_by_source(rows),
        "shares": shares(rows),
        "images": len({row["image"] for row in english}),
        "cross_validation": cross_validate(
            matrix[usable], labels[usable], [row["image"] for row, kept in zip(english, usable, strict=True) if kept]
        ),
        "by_source": by_source(
            matrix[usable],
            labels[usable],
            [row["image"] for row, kept in zip(english, usable, strict=True) if kept],
            [row["source"] for row, kept in zip(english, usable, strict=True) if kept],
        ),
    }
    return results, matrix[usable], labels[usable]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labelled pairs (default: the shipped file)")
    parser.add_argument("--write-model", action="store_true", help=f"train on every English pair, write {MODEL_PATH}")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    arguments = parser.parse_args(argv)
    try:
        results, matrix, labels = study(arguments.labels)
    except (LabelError, OSError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report(results))
    if arguments.json:
        arguments.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if arguments.write_model:
        mean, scale, coefficients, intercept = train(matrix, labels)
        figures: dict[str, dict[str, float]] = results["cross_validation"]  # type: ignore[assignment]
        chosen = figures["logistic regression"]
        at_cut = next(value for name, value in figures.items() if name.startswith("logistic regression, cut"))
        groups = [row["image"] for row in english_rows(read_labels(arguments.labels))]
        cut = operating_threshold(matrix, labels, groups)
        baselines = {
            name: {"precision": round(f["precision"], 4), "recall": round(f["recall"], 4)}
            for name, f in results["cross_validation"].items()  # type: ignore[union-attr]
            if not name.startswith(("logistic regression", "gradient boosting"))
        }
        model = Classifier(
            version=VERSION,
            profile=PROFILE,
            features=FEATURES,
            mean=mean,
            scale=scale,
            coefficients=coefficients,
            intercept=intercept,
            evaluation={
                "model": "a logistic regression (scikit-learn, standardized features)",
                "folds": f"{SPLITS}-fold by image, repeated {REPEATS}×, seed {SEED}",
                "precision": round(chosen["precision"], 4),
                "recall": round(chosen["recall"], 4),
                "threshold": round(cut, 4),
                "threshold_rule": f"the best precision at recall ≥ {TARGET_RECALL:.2f}, on out-of-fold probabilities",
                "precision_at_threshold": round(at_cut["precision"], 4),
                "recall_at_threshold": round(at_cut["recall"], 4),
                "baselines": baselines,
            },
            trained_on={
                "note": training_note(matrix),
                "file": "tests/data/paraphrases/labelled_pairs.tsv",
                "sha256": hashlib.sha256(arguments.labels.read_bytes()).hexdigest(),
                "pairs": int(len(labels)),
                "paraphrases": int(labels.sum()),
            },
        )
        MODEL_PATH.parent.mkdir(parents=True, exist_ok=True)
        MODEL_PATH.write_text(model.to_json(), encoding="utf-8")
        print(f"\nwrote {MODEL_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
