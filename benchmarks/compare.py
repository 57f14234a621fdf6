"""The paper's corpus comparison (Table 7, Figure 2) for any set of paraphrase corpora.

Usage::

    python benchmarks/compare.py --corpus msrpc=PATH --corpus wikipedia_ipc=wikipedia_ipc/silver \\
        [--profile minilm|paper] [--sample N] [--seed 0] [--output comparison]
    python benchmarks/compare.py --config corpora.json

Each corpus is read in its released format (see ``benchmarks/corpora.py``), scored with
Δsem,syn, and summarised in ``OUTPUT/table.md`` and ``OUTPUT/table.csv`` (rows for the
pairs with ST > 0.8, as in Table 7, and for all pairs), characteristic maps (a 5×5
heatmap of syntactic vs semantic similarity per corpus, and all of them in one figure)
and syn/sem scatter plots. Scores are cached per corpus under ``OUTPUT/cache``, keyed by
the corpus files, the sample and the metric signature, so adding a corpus later does
not score the others again.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpora import CORPORA, CorpusError, load, sample  # noqa: E402
from metrics.profiles import ModelUnavailable, get_profile  # noqa: E402
from metrics.scoring import score_pairs, signature  # noqa: E402

MEASURES = ("rouge1", "rougeL", "bleu", "syn", "wms", "bert", "st", "sem", "delta")
ST_THRESHOLD = 0.8
CHUNK = 2000
LEVELS = 5


def fingerprint(name: str, path: Path, size: int | None, seed: int, metric: str) -> str:
    """A cache key: the corpus files (name, size, modification time), the sample and the metric."""
    digest = hashlib.sha256(f"{name}|{size}|{seed}|{metric}".encode())
    for file in CORPORA[name].files(path):
        stat = file.stat()
        digest.update(f"|{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def scored_corpus(name: str, path: Path, arguments: argparse.Namespace, cache: Path) -> pa.Table:
    """The corpus's pairs with their scores, from the cache when nothing changed."""
    metric = signature(get_profile(arguments.profile))
    target = cache / f"{name}-{fingerprint(name, path, arguments.sample, arguments.seed, metric)}.parquet"
    if target.is_file():
        print(f"{name}: cached scores {target.name}")
        return pq.read_table(target)
    records, report = load(name, path)
    skipped = ", ".join(f"{count:,} {reason}" for reason, count in report.skipped.items()) or "none"
    print(f"{name}: read {report.read:,} records, {len(records):,} pairs (skipped: {skipped})")
    if arguments.sample and len(records) > arguments.sample:
        records = sample(records, arguments.sample, arguments.seed)
        print(f"{name}: sampled {len(records):,} pairs over groups (seed {arguments.seed})")
    if not records:
        raise CorpusError(f"{path}: corpus {name} has no pairs")
    columns: dict[str, list] = {measure: [] for measure in MEASURES}
    for start in tqdm(range(0, len(records), CHUNK), desc=f"scoring {name}", unit=" chunks"):
        chunk = records[start : start + CHUNK]
        results = score_pairs([r.sentence1 for r in chunk], [r.sentence2 for r in chunk], profile=arguments.profile)
        for measure in MEASURES:
            columns[measure].extend(results[measure])  # type: ignore[arg-type]
    table = pa.table(
        {
            "id": [r.id for r in records],
            "group": [r.group for r in records],
            "sentence1": [r.sentence1 for r in records],
            "sentence2": [r.sentence2 for r in records],
            "length": [(len(r.sentence1.split()) + len(r.sentence2.split())) / 2 for r in records],
            **{measure: pa.array(values, type=pa.float64()) for measure, values in columns.items()},
        }
    )
    cache.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, target)
    return table


def summary_rows(name: str, table: pa.Table) -> list[dict[str, object]]:
    """Table 7's statistics for the pairs with ST > 0.8, and for all pairs."""
    columns = {
        column: np.asarray(table.column(column).to_pylist(), dtype=np.float64) for column in ("length", *MEASURES)
    }
    total = len(columns["st"])
    rows = []
    for subset, mask in (("st>0.8", columns["st"] > ST_THRESHOLD), ("all", np.ones(total, dtype=bool))):
        row: dict[str, object] = {
            "corpus": CORPORA[name].title,
            "type": CORPORA[name].type,
            "subset": subset,
            "n": int(mask.sum()),
            "share": float(mask.mean()) if total else 0.0,
        }
        for column in ("length", *MEASURES):
            values = columns[column][mask]
            row[f"{column}_mean"] = float(values.mean()) if len(values) else float("nan")
            row[f"{column}_std"] = float(values.std()) if len(values) else float("nan")
        rows.append(row)
    return rows


def write_tables(rows: list[dict[str, object]], output: Path, metric: str) -> None:
    fields = list(rows[0])
    with open(output / "table.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    header = "| Corpus | Type | Subset | n | f | Length μ (σ) | " + " | ".join(MEASURES) + " |"
    lines = [header, "|" + "---|" * (6 + len(MEASURES))]
    for row in rows:
        cells = [_cell(row, column) for column in ("length", *MEASURES)]
        lines.append(
            f"| {row['corpus']} | {row['type']} | {row['subset']} | {row['n']:,} | {row['share']:.0%} | "
            + " | ".join(cells)
            + " |"
        )
    lines += ["", f"Scores: mean (σ) per pair. Signature: `{metric}`", ""]
    (output / "table.md").write_text("\n".join(lines), encoding="utf-8")


def _cell(row: dict[str, object], column: str) -> str:
    """``mean (σ)``, or a dash for an empty subset."""
    if not row["n"]:
        return "–"
    return f"{row[f'{column}_mean']:.2f} ({row[f'{column}_std']:.2f})"


def characteristic_map(table: pa.Table) -> np.ndarray:
    """Share of pairs per cell of a 5×5 grid: rows semantic level 4…0, columns syntactic level 0…4."""
    syn = np.minimum((np.asarray(table.column("syn").to_pylist()) * LEVELS).astype(int), LEVELS - 1)
    sem = np.minimum((np.asarray(table.column("sem").to_pylist()) * LEVELS).astype(int), LEVELS - 1)
    grid = np.zeros((LEVELS, LEVELS))
    for x, y in zip(syn, sem, strict=True):
        grid[LEVELS - 1 - y, x] += 1
    return grid / max(1, len(syn))


def plot_maps(tables: dict[str, pa.Table], output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    maps = output / "maps"
    maps.mkdir(parents=True, exist_ok=True)
    grids = {name: characteristic_map(table) for name, table in tables.items()}
    columns = min(3, len(grids))
    rows = -(-len(grids) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 3.3 * rows), squeeze=False)
    for axis in axes.flat[len(grids) :]:
        axis.axis("off")
    for axis, (name, grid) in zip(axes.flat, grids.items(), strict=False):
        _draw_map(axis, grid, CORPORA[name].title)
        single, single_axis = plt.subplots(figsize=(3.6, 3.4))
        _draw_map(single_axis, grid, CORPORA[name].title)
        single.tight_layout()
        single.savefig(maps / f"{name}.png", dpi=120)
        plt.close(single)
    figure.tight_layout()
    figure.savefig(maps / "all.png", dpi=120)
    plt.close(figure)
    for name, table in tables.items():
        scatter, axis = plt.subplots(figsize=(3.6, 3.4))
        axis.scatter(table.column("syn").to_pylist(), table.column("sem").to_pylist(), s=4, alpha=0.4)
        axis.set(xlim=(0, 1), ylim=(0, 1), xlabel="syntactic similarity", ylabel="semantic similarity")
        axis.set_title(CORPORA[name].title)
        scatter.tight_layout()
        scatter.savefig(maps / f"{name}-scatter.png", dpi=120)
        plt.close(scatter)


def _draw_map(axis, grid: np.ndarray, title: str) -> None:  # noqa: ANN001 - a matplotlib Axes
    axis.imshow(grid, cmap="Blues", vmin=0, vmax=max(grid.max(), 1e-9))
    for row in range(LEVELS):
        for column in range(LEVELS):
            dark = grid[row, column] > grid.max() / 2
            color = "white" if dark else "black"
            axis.text(column, row, f"{grid[row, column]:.0%}", ha="center", va="center", fontsize=7, color=color)
    axis.set_xticks(range(LEVELS), [f"syn-{level}" for level in range(LEVELS)], fontsize=7)
    axis.set_yticks(range(LEVELS), [f"sem-{LEVELS - 1 - level}" for level in range(LEVELS)], fontsize=7)
    axis.set_title(title, fontsize=9)


def read_config(path: str) -> dict[str, object]:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise CorpusError(f"{path}: cannot read the config ({error})") from None


def corpora_from(arguments: argparse.Namespace) -> dict[str, Path]:
    """``--corpus NAME=PATH`` options and/or a JSON config ``{"corpora": {NAME: PATH}, …}``."""
    chosen: dict[str, Path] = {}
    if arguments.config:
        chosen.update({name: Path(path) for name, path in read_config(arguments.config).get("corpora", {}).items()})
    for option in arguments.corpus or []:
        name, equals, path = option.partition("=")
        if not equals:
            raise CorpusError(f"--corpus {option!r}: expected NAME=PATH")
        chosen[name] = Path(path)
    unknown = [name for name in chosen if name not in CORPORA]
    if unknown:
        raise CorpusError(f"unknown corpus {unknown[0]!r}; choose from {', '.join(CORPORA)}")
    if not chosen:
        raise CorpusError("no corpus given: use --corpus NAME=PATH or --config FILE")
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    config_only = argparse.ArgumentParser(add_help=False)
    config_only.add_argument("--config")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", metavar="NAME=PATH", help=f"one of {', '.join(CORPORA)}")
    parser.add_argument("--config", help="a JSON file with corpora (and optionally profile, sample, seed, output)")
    parser.add_argument("--profile", default="minilm", choices=["minilm", "paper"])
    parser.add_argument("--sample", type=int, default=0, help="score at most N pairs per corpus (seeded, over groups)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=Path("comparison"), help="output folder")
    try:
        config = config_only.parse_known_args(argv)[0].config
        if config:  # the config file gives defaults; options on the command line win
            settings = read_config(config)
            parser.set_defaults(
                **{key: settings[key] for key in ("profile", "sample", "seed", "output") if key in settings}
            )
        arguments = parser.parse_args(argv)
        chosen = corpora_from(arguments)
        output = Path(arguments.output)
        output.mkdir(parents=True, exist_ok=True)
        tables = {name: scored_corpus(name, path, arguments, output / "cache") for name, path in chosen.items()}
    except (CorpusError, ModelUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    rows = [row for name, table in tables.items() for row in summary_rows(name, table)]
    write_tables(rows, output, signature(get_profile(arguments.profile)))
    plot_maps(tables, output)
    print((output / "table.md").read_text(encoding="utf-8"))
    print(f"wrote {output / 'table.md'}, {output / 'table.csv'} and {output / 'maps'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
