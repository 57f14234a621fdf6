"""The paper's corpus comparison (Table 7, Figure 2) for any set of paraphrase corpora.

Usage::

    python benchmarks/compare.py        # ./wikipedia_ipc (if built) against every corpus with a Hub copy
    python benchmarks/compare.py --corpus msrpc=PATH --corpus wikipedia_ipc=wikipedia_ipc/ \\
        [--profile minilm|paper|multilingual] [--language en] [--threshold T|msrpc|PATH] [--sample N] [--seed 0]
        [--output comparison]
    python benchmarks/compare.py --corpus paws --corpus tapaco      # their Hugging Face Hub copies
    python benchmarks/compare.py --default-corpora --corpus paranmt=PATH   # the default run, and ParaNMT
    python benchmarks/compare.py --corpus msrpc=PATH --corpus mine=my_pairs.tsv [--columns text1,text2]
    python benchmarks/compare.py --config benchmarks/fixtures.json  # the test fixtures, offline

Each corpus is read in its released format or from its Hub copy (see :mod:`metrics.corpora`);
a NAME that is no known corpus names a user's file of pairs (TSV, CSV or JSONL with two text
columns, see :func:`metrics.corpora.read_pairs_file`), which lands in the table beside them, and a
build's folder gives one corpus per config (``wikipedia_ipc/gold``, ...). Every corpus is read and
checked before the first is scored (:mod:`metrics.compare_inputs`). The corpora are scored with
Δsem,syn in their ``--language`` (English by default; another language needs ``--profile
multilingual``, and texts given as English that are mostly not are refused), and summarised in
``OUTPUT/table.md`` and ``OUTPUT/table.csv`` (rows for the pairs with ST > t, as Table 7's ST > 0.8,
and for all pairs), characteristic maps (a 5×5 grid of syntactic vs semantic
similarity per corpus, all on one colour scale, and all of them in one figure) and syn/sem scatter
plots (with the line syn = sem, from which Δ is the distance, and the pairs with ST > t marked).
The threshold t is the profile's default, chosen on MSRPC's labels as the paper chose 0.8 for its
sentence model (0.8 for ``paper``), a number given with ``--threshold``, or chosen in this run on
the MSRPC release (``--threshold msrpc``, see :mod:`metrics.calibration`). Scores are cached
per corpus under ``OUTPUT/cache``, keyed by the corpus files, the sample and the metric signature
(the threshold applies to the cached scores), so adding a corpus later does not score the others again.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import math
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from builder.progress import progress_bar
from metrics.calibration import written
from metrics.compare_inputs import (
    CONFIG_KEYS,
    Prepared,
    Source,
    file_stem,
    prepare_all,
    read_config,
    select,
)
from metrics.corpora import CORPORA, HUB_COPIES, PAIR_COLUMNS, CorpusError
from metrics.language import LanguageMismatch
from metrics.profiles import (
    MINILM_ST_THRESHOLD,
    PAPER_ST_THRESHOLD,
    PROFILES,
    ModelUnavailable,
    StThreshold,
    check_profile_language,
    get_profile,
)

# The scorer (torch, sentence-transformers, ...) is imported when a corpus is scored, not before the
# arguments are read: ``--help`` and a refused argument answer at once.
if TYPE_CHECKING:  # matplotlib itself is imported only when the maps are drawn
    from matplotlib.axes import Axes
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage

MEASURES = ("rouge1", "rougeL", "bleu", "syn", "wms", "bert", "st", "sem", "delta")
CHUNK = 2000
LEVELS = 5
TYPE_LEGEND = (
    "Type (as in the paper's Table 7): C = image captions, G = automatically generated, "
    "H = human-written (e.g. crowdsourced)."
)
USER_TYPE = "U"  # a user's file of pairs: its acquisition is not known here
USER_LEGEND = " U = a user's file of pairs (--corpus NAME=PATH)."


def title_and_type(name: str) -> tuple[str, str]:
    """A corpus's title and Table 7 type; a build's config ``wikipedia_ipc/gold`` is "Wikipedia-IPC gold",
    a user's file of pairs is titled by its name, of type U."""
    corpus, _, config = name.partition("/")
    if corpus in CORPORA:
        return " ".join(filter(None, (CORPORA[corpus].title, config))), CORPORA[corpus].type
    return name, USER_TYPE


def metric_signature(arguments: argparse.Namespace) -> str:
    """The signature of the scores this run gives: its profile and language, and the runtime ``auto`` picks."""
    from metrics.scoring import resolve_device, signature
    from metrics.semantic import resolve_runtime

    profile = get_profile(arguments.profile)
    runtime = resolve_runtime("auto", profile.shared, resolve_device(None), False)
    return signature(profile, language=arguments.language, runtime=runtime)


def scored_corpus(prepared: Prepared, arguments: argparse.Namespace) -> pa.Table:
    """A prepared corpus's pairs with their scores: read from its cache, or scored now and cached."""
    from metrics.scoring import score_pairs

    name, target, records = prepared.source.name, prepared.target, prepared.records
    if records is None:
        return pq.read_table(target)
    columns: dict[str, list] = {measure: [] for measure in MEASURES}
    truncated: list[bool] = []
    with progress_bar(total=len(records), desc=f"scoring {name}", unit=" pairs", file=sys.stderr) as progress:
        for start in range(0, len(records), CHUNK):
            chunk = records[start : start + CHUNK]
            results = score_pairs(
                [r.sentence1 for r in chunk],
                [r.sentence2 for r in chunk],
                profile=arguments.profile,
                language=arguments.language,
                check_language=False,  # checked when it was prepared, on the whole corpus
            )
            for measure in MEASURES:
                columns[measure].extend(results[measure])  # type: ignore[arg-type]
            # per pair: a text of it was cut to a measure's limit (the models' length, WMS's distinct words)
            truncated.extend(count > 0 for count in results["truncated_pairs"])  # type: ignore[union-attr]
            progress.update(len(chunk))
    table = pa.table(
        {
            "id": [r.id for r in records],
            "group": [r.group for r in records],
            "sentence1": [r.sentence1 for r in records],
            "sentence2": [r.sentence2 for r in records],
            "length": [(len(r.sentence1.split()) + len(r.sentence2.split())) / 2 for r in records],
            **{measure: pa.array(values, type=pa.float64()) for measure, values in columns.items()},
            "truncated": pa.array(truncated, type=pa.bool_()),
        }
    )
    unscored = sum(any(math.isnan(columns[measure][row]) for measure in MEASURES) for row in range(len(records)))
    if unscored:
        print(f"{name}: {unscored:,} pairs could not be scored (NaN); counted as unscored, left out of the means")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")  # a run killed while it writes leaves no cache file
    pq.write_table(table, partial)
    partial.replace(target)
    return table


def _statistics(values: np.ndarray) -> tuple[float, float]:
    """Mean and σ of the scored values; NaN (a pair the scorer could not score) is left out, never averaged."""
    finite = values[~np.isnan(values)]
    if not len(finite):
        return float("nan"), float("nan")
    return float(finite.mean()), float(finite.std())


def _share(part: int, whole: int) -> float:
    return part / whole if whole else float("nan")


def subset_label(threshold: StThreshold) -> str:
    """The name of Table 7's subset, with the threshold applied: ``st>0.755``."""
    return f"st>{written(threshold.value)}"


def above(table: pa.Table, threshold: StThreshold) -> tuple[int, int]:
    """How many pairs have ST above the threshold, and how many have an ST score at all (f's denominator)."""
    st = np.asarray(table.column("st").to_pylist(), dtype=np.float64)
    return int((st > threshold.value).sum()), int((~np.isnan(st)).sum())  # NaN is never above


def summary_rows(name: str, table: pa.Table, threshold: StThreshold) -> list[dict[str, object]]:
    """Table 7's statistics for the pairs with ST above the threshold, and for all pairs, unscored pairs counted."""
    columns = {
        column: np.asarray(table.column(column).to_pylist(), dtype=np.float64) for column in ("length", *MEASURES)
    }
    unscored = np.isnan(np.column_stack([columns[measure] for measure in MEASURES])).any(axis=1)
    with_st = int((~np.isnan(columns["st"])).sum())
    similar = columns["st"] > threshold.value  # False for NaN
    truncated = np.asarray(table.column("truncated").to_pylist(), dtype=bool)
    label = subset_label(threshold)
    title, kind = title_and_type(name)
    rows = []
    for subset, mask in ((label, similar), ("all", np.ones(len(similar), dtype=bool))):
        n = int(mask.sum())
        row: dict[str, object] = {
            "corpus": title,
            "type": kind,
            "subset": subset,
            "threshold": threshold.value,
            "threshold_precision": threshold.precision,
            "threshold_recall": threshold.recall,
            "n": n,
            "share": _share(n, with_st if subset == label else len(similar)),
            "unscored": int(unscored[mask].sum()),
            "truncated": int(truncated[mask].sum()),
        }
        for column in ("length", *MEASURES):
            row[f"{column}_mean"], row[f"{column}_std"] = _statistics(columns[column][mask])
        rows.append(row)
    return rows


def threshold_note(threshold: StThreshold) -> str:
    """Where the threshold comes from, with its MSRPC precision and recall where they are known."""
    if math.isnan(threshold.precision):
        return threshold.provenance
    return (
        f"{threshold.provenance}; precision {threshold.precision:.2f}, recall {threshold.recall:.2f} on MSRPC's "
        "paraphrase labels (the paper's ST > 0.8: 0.82, 0.77)"
    )


def run_signature(metric: str, threshold: StThreshold) -> str:
    """The metric signature and the subset's threshold, with its MSRPC precision/recall where known."""
    known = "" if math.isnan(threshold.precision) else f",msrpc-P:{threshold.precision:.3f},R:{threshold.recall:.3f}"
    return f"{metric}|subset:{subset_label(threshold)}{known}"


def write_tables(
    rows: list[dict[str, object]], output: Path, metric: str, threshold: StThreshold, left_out: Sequence[str] = ()
) -> None:
    """``table.csv`` (every statistic) and ``table.md`` (mean (σ) per measure, with the legend, and the
    corpora a default run left out, with the option that adds each)."""
    fields = list(rows[0])
    with open(output / "table.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    header = "| Corpus | Type | Subset | n | unscored | f | Length μ (σ) | " + " | ".join(MEASURES) + " |"
    lines = [header, "|---|---|---|" + "---:|" * (4 + len(MEASURES))]
    for row in rows:
        cells = [_cell(row, column) for column in ("length", *MEASURES)]
        share = "–" if np.isnan(row["share"]) else f"{row['share']:.0%}"  # type: ignore[arg-type]
        lines.append(
            f"| {row['corpus']} | {row['type']} | {row['subset']} | {row['n']:,} | {row['unscored']:,} | {share} | "
            + " | ".join(cells)
            + " |"
        )
    truncated = sum(int(row["truncated"]) for row in rows if row["subset"] == "all")  # type: ignore[call-overload]
    label = subset_label(threshold)
    legend = [
        TYPE_LEGEND + (USER_LEGEND if any(row["type"] == USER_TYPE for row in rows) else ""),
        f"Subset {label}: the pairs whose sentence-embedding cosine (ST) exceeds {written(threshold.value)}, as "
        f"Table 7's ST > 0.8 with the paper's sentence model. Threshold: {threshold_note(threshold)}. f is their share "
        "of the pairs with an ST score. Scores: mean (σ) per pair; pairs the scorer could not score (NaN, e.g. an "
        "empty text) are counted under unscored and left out of the means.",
    ]
    if truncated:
        legend.append(f"{truncated:,} pairs had a text cut to the sentence models' input length.")
    if left_out:
        legend.append("Not compared: " + "; ".join(left_out) + ".")
    legend.append(f"Signature: `{run_signature(metric, threshold)}`")
    # each legend line a Markdown paragraph of its own
    text = "\n".join(lines) + "\n\n" + "\n\n".join(legend) + "\n"
    (output / "table.md").write_text(text, encoding="utf-8")


def _cell(row: dict[str, object], column: str) -> str:
    """``mean (σ)``, or a dash where no pair has a score."""
    mean, std = row[f"{column}_mean"], row[f"{column}_std"]
    if np.isnan(mean):  # type: ignore[arg-type]
        return "–"
    return f"{mean:.2f} ({std:.2f})"


BIN_LABELS = [f"{level / LEVELS:.1f}–{(level + 1) / LEVELS:.1f}" for level in range(LEVELS)]


def map_legend(threshold: StThreshold) -> str:
    """The maps' legend: what a cell is, and which threshold the titles' share f is of (wrapped to fit a map)."""
    subset = textwrap.fill(
        f"Title: f = share of the pairs with ST > {written(threshold.value)}, the subset of table.md; threshold: "
        f"{threshold_note(threshold)}.",
        width=90,
    )
    return (
        "Cell: share of a corpus's scored pairs (all pairs) whose syn and sem fall in its ranges.\n"
        "syn: mean of ROUGE-1, ROUGE-L, BLEU; sem: mean of WMS, BERTScore, ST.\n"
        "Ranges include their lower bound (the last one also 1.0); empty cell: no pair. One colour scale for all "
        f"corpora.\n{subset}"
    )


def characteristic_map(table: pa.Table) -> tuple[np.ndarray, int]:
    """Shares of the scored pairs per cell of a 5×5 grid, indexed [sem level, syn level], and the unscored count."""
    syn = np.asarray(table.column("syn").to_pylist(), dtype=np.float64)
    sem = np.asarray(table.column("sem").to_pylist(), dtype=np.float64)
    scored = ~(np.isnan(syn) | np.isnan(sem))
    edges = np.linspace(0.0, 1.0, LEVELS + 1)
    counts, _, _ = np.histogram2d(np.clip(sem[scored], 0, 1), np.clip(syn[scored], 0, 1), bins=(edges, edges))
    return counts / max(1, int(scored.sum())), int((~scored).sum())


def above_threshold(table: pa.Table, threshold: StThreshold) -> pa.Table:
    """The pairs of Table 7's subset: ST above the threshold applied (NaN never is)."""
    st = np.asarray(table.column("st").to_pylist(), dtype=np.float64)
    return table.filter(pa.array(st > threshold.value))


def plot_maps(tables: dict[str, pa.Table], output: Path, threshold: StThreshold) -> None:
    """The maps of all pairs (``maps/all.png``, ``maps/<corpus>.png``, ``maps/<corpus>-scatter.png``; a build's
    config ``wikipedia_ipc/gold`` is ``wikipedia_ipc-gold``) and of Table 7's subset (``maps/subset.png``: each
    corpus's pairs with ST above the threshold applied)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    maps = output / "maps"
    maps.mkdir(parents=True, exist_ok=True)
    grids = {name: characteristic_map(table) for name, table in tables.items()}
    titles = {name: _panel_title(name, tables[name], grids[name][1], threshold) for name in tables}
    scale = _map_figure(
        grids,
        titles,
        "share of a corpus's pairs",
        "Characteristic maps (Figure 2)\n" + map_legend(threshold),
        maps / "all.png",
    )
    for name, (grid, _) in grids.items():
        _save_single_map(grid, titles[name], scale, maps / f"{file_stem(name)}.png", legend=map_legend(threshold))
    for name, table in tables.items():
        scatter = scatter_figure(table, titles[name], threshold)
        scatter.savefig(maps / f"{file_stem(name)}-scatter.png", dpi=120)
        plt.close(scatter)
    subsets = {name: above_threshold(table, threshold) for name, table in tables.items()}
    subset_grids = {name: characteristic_map(table) for name, table in subsets.items()}
    label = subset_label(threshold)
    legend = textwrap.fill(
        f"Cell: share of a corpus's pairs with ST > {written(threshold.value)} (Table 7's subset; threshold: "
        f"{threshold_note(threshold)}) whose syn and sem fall in its ranges.",
        width=90,
    )
    _map_figure(
        subset_grids,
        {
            name: f"{title_and_type(name)[0]} ({label}: n = {subsets[name].num_rows - grid[1]:,})"
            for name, grid in subset_grids.items()
        },
        "share of a corpus's subset",
        f"Characteristic maps of the subset {label}\n{legend}",
        maps / "subset.png",
    )


def colour_limits(grids: Iterable[np.ndarray]) -> tuple[float, float]:
    """The one colour scale of a set of maps, as (lowest, highest) share: 0 to the largest cell of any of them.

    Every set of maps drawn together takes its scale here (``all.png`` and each corpus's map, ``subset.png``,
    a scored folder's maps), so equal shares look equal across corpora and configs.
    """
    return 0.0, max(max((float(grid.max()) for grid in grids), default=0.0), 1e-9)


SCALE_KEY = "Colour scale"  # the PNG text field naming the limits a map was drawn with


def _png_metadata(scale: Normalize) -> dict[str, str | None]:
    """A map's PNG text fields: its colour limits (exact, ``lowest highest``), no software version."""
    return {"Software": None, SCALE_KEY: f"{float(scale.vmin)!r} {float(scale.vmax)!r}"}


def titled_map(table: pa.Table, title: str) -> tuple[np.ndarray, str]:
    """A corpus's characteristic map, and its title with the pairs counted (scored, unscored)."""
    grid, unscored = characteristic_map(table)
    counted = f"n = {table.num_rows - unscored:,}" + (f", {unscored:,} unscored" if unscored else "")
    return grid, f"{title} ({counted})"


def save_maps(maps: Mapping[Path, tuple[np.ndarray, str]], legend: str | None = None) -> tuple[float, float]:
    """Each (grid, title) as a PNG at its path, all on one colour scale (:func:`colour_limits`); the limits.

    A scored folder's card shows its configs' maps this way, so gold's and bronze's can be compared by eye.
    """
    from matplotlib.colors import Normalize

    limits = colour_limits(grid for grid, _ in maps.values())
    scale = Normalize(*limits)
    for path, (grid, title) in maps.items():
        _save_single_map(grid, title, scale, path, legend=legend)
    return limits


def _save_single_map(grid: np.ndarray, title: str, scale: Normalize, path: Path, legend: str | None = None) -> None:
    """One map with its colour bar (and the legend above it, if given), saved as a PNG naming its colour limits."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    figure, axis = plt.subplots(figsize=(5.0, 4.8), layout="constrained")
    image = _draw_map(axis, grid, title, scale)
    figure.colorbar(image, ax=axis, format=PercentFormatter(1.0), label="share of the pairs")
    if legend:
        figure.suptitle(legend, fontsize=6)
    figure.savefig(path, dpi=120, format="png", metadata=_png_metadata(scale))
    plt.close(figure)


def scatter_figure(table: pa.Table, title: str, threshold: StThreshold) -> Figure:
    """syn against sem per pair, with the line syn = sem (Δ = sem − syn is the height above it) and the
    pairs of Table 7's subset (ST above the threshold) drawn apart."""
    import matplotlib.pyplot as plt

    syn, sem, st = (np.asarray(table.column(column).to_pylist(), dtype=np.float64) for column in ("syn", "sem", "st"))
    similar = st > threshold.value  # NaN never is
    figure, axis = plt.subplots(figsize=(3.8, 3.8), layout="constrained")
    axis.plot([0, 1], [0, 1], color="0.4", linestyle="--", linewidth=0.8, label="syn = sem (Δ = 0; above: Δ > 0)")
    others = f"ST ≤ {written(threshold.value)} or none"
    axis.scatter(syn[~similar], sem[~similar], s=4, alpha=0.4, color="tab:blue", marker="o", label=others)
    axis.scatter(
        syn[similar],
        sem[similar],
        s=10,
        alpha=0.7,
        color="tab:orange",
        marker="^",
        label=f"{subset_label(threshold)} (table.md's subset)",
    )
    axis.set(xlim=(0, 1), ylim=(0, 1), aspect="equal")
    axis.set_xlabel("syntactic similarity (syn)", fontsize=8)
    axis.set_ylabel("semantic similarity (sem)", fontsize=8)
    axis.legend(loc="lower right", fontsize=6, framealpha=0.9)
    axis.set_title(title, fontsize=9)
    return figure


def _map_figure(
    grids: dict[str, tuple[np.ndarray, int]], titles: dict[str, str], colour_label: str, heading: str, path: Path
) -> Normalize:
    """All corpora's maps in one figure (:func:`map_panels`), saved; the colour scale, for reuse."""
    import matplotlib.pyplot as plt

    figure, scale = map_panels(grids, titles, colour_label, heading)
    figure.savefig(path, dpi=120, metadata={SCALE_KEY: _png_metadata(scale)[SCALE_KEY]})
    plt.close(figure)
    return scale


def map_panels(
    grids: dict[str, tuple[np.ndarray, int]], titles: dict[str, str], colour_label: str, heading: str
) -> tuple[Figure, Normalize]:
    """All corpora's maps in one figure on one colour scale (equal shares look equal), three to a row."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize
    from matplotlib.ticker import PercentFormatter

    scale = Normalize(*colour_limits(grid for grid, _ in grids.values()))
    columns = min(3, len(grids))
    rows = -(-len(grids) // columns)
    # Rows tall enough, and padded, that a panel's axis label does not run into the two-line title of the
    # panel below (at 3.5 inches a row, with 3 pt of padding, they overlapped).
    figure, axes = plt.subplots(
        rows, columns, figsize=(3.6 * columns + 1.2, 3.9 * rows + 1.4), squeeze=False, layout="constrained"
    )
    figure.get_layout_engine().set(h_pad=0.15, hspace=0.04)  # type: ignore[union-attr]
    for axis in axes.flat[len(grids) :]:
        axis.axis("off")
    for axis, (name, (grid, _)) in zip(axes.flat, grids.items(), strict=False):
        image = _draw_map(axis, grid, titles[name], scale)
    figure.colorbar(image, ax=axes, format=PercentFormatter(1.0), label=colour_label, shrink=0.6)
    figure.suptitle(heading, fontsize=8)
    return figure, scale


def _panel_title(name: str, table: pa.Table, unscored: int, threshold: StThreshold) -> str:
    """Corpus, scored pairs (and unscored ones), and the share f above the threshold applied."""
    similar, with_st = above(table, threshold)
    share = f"{_share(similar, with_st):.0%}" if with_st else "–"
    title = f"{title_and_type(name)[0]} (n = {table.num_rows - unscored:,}"
    title += f", {unscored:,} unscored)" if unscored else ")"
    return f"{title}\n{subset_label(threshold)}: f = {share}"


def _draw_map(axis: Axes, grid: np.ndarray, title: str, scale: Normalize) -> AxesImage:
    """One map: sem levels bottom to top, syn levels left to right, each cell's share written in it."""
    image = axis.imshow(grid, cmap="Blues", norm=scale, origin="lower")
    for row in range(LEVELS):
        for column in range(LEVELS):
            share = grid[row, column]
            if share:
                color = "white" if share > scale.vmax / 2 else "black"
                text = f"{share:.0%}" if share >= 0.005 else "<1%"
                axis.text(column, row, text, ha="center", va="center", fontsize=7, color=color)
    if not grid.any():
        axis.text((LEVELS - 1) / 2, (LEVELS - 1) / 2, "no scored pair", ha="center", va="center", fontsize=9)
    axis.set_xticks(range(LEVELS), BIN_LABELS, fontsize=7)
    axis.set_yticks(range(LEVELS), BIN_LABELS, fontsize=7)
    axis.set_xlabel("syntactic similarity (syn)", fontsize=8)
    axis.set_ylabel("semantic similarity (sem)", fontsize=8)
    axis.set_title(title, fontsize=9)
    return image


THRESHOLD_HELP = "a number in (−1, 1], 'msrpc' or the path of the MSRPC release"


def columns_option(text: str) -> tuple[str, str]:
    """``--columns FIRST,SECOND``: two column names."""
    names = tuple(name.strip() for name in text.split(","))
    if len(names) != 2 or not all(names):
        raise argparse.ArgumentTypeError(f"{text!r}: expected two column names, FIRST,SECOND (e.g. text1,text2)")
    return names  # type: ignore[return-value]


def threshold_option(text: str, base: Path | None = None) -> float | str | Path:
    """``--threshold``: a number in (−1, 1], ``msrpc``, or an existing path (relative to ``base`` if given)."""
    if text == "msrpc":
        return text
    try:
        number = float(text)
    except ValueError:
        path = Path(text) if base is None else base / text
        if path.exists():
            return path
        raise argparse.ArgumentTypeError(f"{text!r} is not {THRESHOLD_HELP} (no such file or folder)") from None
    if not -1 < number <= 1:  # also rejects nan
        raise argparse.ArgumentTypeError(f"{text!r} is not {THRESHOLD_HELP}: ST lies in [0, 1]")
    return number


def config_threshold(value: object, config: Path) -> float | str | Path:
    """A config file's ``threshold``: a JSON number or a string as on the command line, paths from its folder."""
    try:
        if isinstance(value, str):
            return threshold_option(value, config.parent)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return threshold_option(repr(value))
    except argparse.ArgumentTypeError as error:
        raise CorpusError(f"{config}: threshold {error}") from None
    raise CorpusError(f"{config}: threshold must be {THRESHOLD_HELP}, not {value!r}")


def calibration_release(arguments: argparse.Namespace, sources: Sequence[Source]) -> Path | None:
    """The MSRPC release the threshold is chosen on, if any; checked before any corpus is read."""
    given = arguments.threshold
    if given != "msrpc":
        return given if isinstance(given, Path) else None
    release = next((source.path for source in sources if source.name == "msrpc"), None)
    if release is None:  # not compared, or from its Hub copy
        hub = (
            " (msrpc is compared from its Hub copy, whose test labels are hidden)"
            if any(source.name == "msrpc" for source in sources)
            else ""
        )
        raise CorpusError(
            f"--threshold msrpc chooses the threshold on the labels of the MSRPC release{hub}: "
            "give its path with --corpus msrpc=PATH or --threshold PATH"
        )
    return release


def resolve_threshold(arguments: argparse.Namespace, release: Path | None, cache: Path) -> StThreshold:
    """The threshold of the subset: the profile's default, the number given, or one chosen now on MSRPC's labels."""
    from metrics.calibration import calibrate

    profile = get_profile(arguments.profile)
    given = arguments.threshold
    if isinstance(given, float):
        return StThreshold(given, math.nan, math.nan, "given as a number, not calibrated")
    if release is None:
        default = profile.st_threshold
        return dataclasses.replace(default, provenance=f"profile {profile.name}'s default, {default.provenance}")
    calibration = calibrate(release, profile, cache)
    print(calibration.describe())
    return calibration.as_threshold()


def check_settings(arguments: argparse.Namespace, config: str | None) -> None:
    """Values from a config file skip argparse's checks: check them all here."""
    where = f"{config}: " if config else ""
    if arguments.profile not in PROFILES:
        raise CorpusError(f"{where}unknown profile {arguments.profile!r}; choose from {', '.join(PROFILES)}")
    try:
        check_profile_language(get_profile(arguments.profile), arguments.language)
    except ValueError as error:
        raise CorpusError(f"{where}{error}") from None
    for key in ("sample", "seed"):
        value = getattr(arguments, key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CorpusError(f"{where}{key} must be a whole number ≥ 0, not {value!r}")


def parser() -> argparse.ArgumentParser:
    hub = ", ".join(f"{name} ({copy.dataset})" for name, copy in HUB_COPIES.items())
    result = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    result.add_argument(
        "--corpus",
        action="append",
        metavar="NAME[=PATH]",
        help=f"a corpus to compare (repeatable): NAME one of {', '.join(CORPORA)}; PATH its release file or folder. "
        f"Without PATH the corpus is loaded from its Hugging Face Hub copy: {hub}. Any other NAME with a PATH "
        "ending .tsv, .csv or .jsonl is a file of pairs of yours, one pair a row under a header line (TSV fields "
        "verbatim, CSV quoted as spreadsheets write it), titled NAME in the table. wikipedia_ipc=FOLDER of a "
        "build: each config a row (wikipedia_ipc/gold, ...). With no --corpus and no config corpora: the build in "
        "./wikipedia_ipc (if any) against every corpus with a Hub copy",
    )
    result.add_argument(
        "--default-corpora",
        action="store_true",
        help="compare the corpora a run without --corpus compares (the build in ./wikipedia_ipc, every corpus with "
        "a Hub copy) as well as those named with --corpus or the config; a corpus named replaces its default copy",
    )
    result.add_argument(
        "--columns",
        type=columns_option,
        metavar="FIRST,SECOND",
        help="the two text columns of your files of pairs (header names, JSONL keys). Default: the first pair "
        f"found of {', '.join(f'{a}/{b}' for a, b in PAIR_COLUMNS)} (any case)",
    )
    result.add_argument(
        "--config",
        metavar="FILE",
        help='a JSON file {"corpora": {NAME: PATH or null}, "profile", "threshold", "sample", "seed", "output", '
        '"language"}; '
        "relative paths are read from the file's folder; options given on the command line win",
    )
    result.add_argument(
        "--profile",
        default="minilm",
        choices=PROFILES,
        help="the Δsem,syn models: minilm (offline, all-MiniLM-L6-v2) or paper (the paper's models, downloaded), "
        "both English only, or multilingual (paraphrase-multilingual-MiniLM-L12-v2, downloaded)",
    )
    result.add_argument(
        "--language",
        default="en",
        metavar="CODE",
        help="the corpora's ISO 639 code: en (default), fr, zh, ...; another language needs --profile multilingual",
    )
    result.add_argument(
        "--language-check",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="refuse a corpus given as English whose texts are mostly not (mostly non-Latin script, too few English "
        "function words); --no-language-check scores it anyway (default on)",
    )
    result.add_argument(
        "--threshold",
        type=threshold_option,
        metavar="T|msrpc|PATH",
        help="the subset of Table 7 is the pairs with ST > T. Default: the profile's threshold, chosen on MSRPC's "
        f"labels as the paper chose 0.8 (paper: {written(PAPER_ST_THRESHOLD.value)}; minilm: "
        f"{written(MINILM_ST_THRESHOLD.value)}). msrpc: choose it now on the MSRPC release "
        "given with --corpus msrpc=PATH, PATH: on that MSRPC release (the threshold whose precision/recall of "
        "MSRPC's paraphrases is closest to the paper's 0.82/0.77)",
    )
    result.add_argument(
        "--sample", type=int, default=0, metavar="N", help="score at most N pairs per corpus (seeded, over groups)"
    )
    result.add_argument("--seed", type=int, default=0, metavar="N", help="the seed of --sample (default 0)")
    result.add_argument(
        "--output", type=Path, default=Path("comparison"), metavar="DIR", help="output folder (default: comparison)"
    )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    config_only = argparse.ArgumentParser(add_help=False)
    config_only.add_argument("--config")
    options = parser()
    try:
        config = config_only.parse_known_args(argv)[0].config
        if config:  # the config file gives defaults; options on the command line win
            settings = read_config(Path(config))
            if "threshold" in settings:
                settings["threshold"] = config_threshold(settings["threshold"], Path(config))
            options.set_defaults(**{key: settings[key] for key in CONFIG_KEYS[1:] if key in settings})
        arguments = options.parse_args(argv)
        check_settings(arguments, config)
        selection = select(arguments)
        release = calibration_release(arguments, selection.sources)
        output = Path(arguments.output)  # made when the first file is written: a refused run leaves none
        metric = functools.cache(lambda: metric_signature(arguments))  # loads the scorer: asked for after the Hub
        prepared = prepare_all(selection, arguments, output / "cache", metric)  # every corpus read before any scoring
        for note in selection.left_out:
            print(f"not compared: {note}")
        threshold = resolve_threshold(arguments, release, output / "cache")
        print(f"subset {subset_label(threshold)}: {threshold_note(threshold)}")
        tables = {item.source.name: scored_corpus(item, arguments) for item in prepared}
    except (CorpusError, ModelUnavailable, LanguageMismatch) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    rows = [row for name, table in tables.items() for row in summary_rows(name, table, threshold)]
    output.mkdir(parents=True, exist_ok=True)
    write_tables(rows, output, metric(), threshold, selection.left_out)
    plot_maps(tables, output, threshold)
    print((output / "table.md").read_text(encoding="utf-8"))
    print(f"wrote {output / 'table.md'}, {output / 'table.csv'} and {output / 'maps'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
