"""What the paraphrase probability and the maps cost: scoring a built config against the metric alone.

A config of about 10,000 pairs is built from a synthetic dump (:mod:`benchmarks.synthetic_dump`: real
page text and captions, references as dense as ``--bytes-per-reference``), then, alternating, in one
process and on the same pairs:

* the metric alone: ``score_pairs`` on the config's two text columns (what any Δsem,syn scoring costs);
* ``python -m metrics score FOLDER`` as a user runs it (:func:`metrics.cli.score_folder`): reading the
  folder, the metric, the meta features and the classifier's probability per pair, the characteristic
  map as a PNG, the scored parquet and card written and published.

The best of ``--rounds`` runs of each is compared; the goal is a ratio ≤ 1.10::

    python benchmarks/paraphrase_scoring.py [--target-mb 230] [--bytes-per-reference 250] [--rounds 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic_dump import write_dump  # noqa: E402
from builder.config import SILVER, BuildOptions  # noqa: E402
from builder.engines.local import build  # noqa: E402
from metrics.cli import parser as score_parser  # noqa: E402
from metrics.cli import score_folder  # noqa: E402
from metrics.scoring import score_pairs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument(
        "--target-mb", type=int, default=230, help="XML MB of the synthetic dump (230: about 10,000 pairs)"
    )
    arguments.add_argument("--bytes-per-reference", type=int, default=250, help="image reference density")
    arguments.add_argument("--rounds", type=int, default=2, help="runs of each, alternating (best counts)")
    arguments.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "wikipedia-ipc-bench")
    options = arguments.parse_args(argv)

    shape = write_dump(options.cache, options.target_mb * 1_000_000, bytes_per_reference=options.bytes_per_reference)
    work = Path(tempfile.mkdtemp(prefix="paraphrase-scoring-"))
    try:
        folder = work / "built"
        config = dataclasses.replace(SILVER, splits=())
        build([str(shape.path)], [config], folder, BuildOptions(workers=2, tagger="perceptron", show_progress=False))
        table = pq.read_table(sorted((folder / "silver").glob("*.parquet")))
        first, second = table.column("sentence1").to_pylist(), table.column("sentence2").to_pylist()
        print(f"config silver of {shape.path.name}: {table.num_rows:,} pairs", flush=True)
        score_pairs(first[:200], second[:200], profile="minilm")  # models loaded and warm before either is timed
        metric, folder_scoring = [], []
        for round_ in range(options.rounds):
            start = time.perf_counter()
            score_pairs(first, second, profile="minilm")
            metric.append(time.perf_counter() - start)
            target = work / f"scored-{round_}"
            start = time.perf_counter()
            score_folder(folder, target, score_parser().parse_args(["score", str(folder), "--no-progress"]))
            folder_scoring.append(time.perf_counter() - start)
            print(f"round {round_ + 1}: metric alone {metric[-1]:.1f} s, score FOLDER {folder_scoring[-1]:.1f} s")
        scored = pq.read_table(sorted((work / "scored-0" / "silver").glob("*.parquet")))
        assert "paraphrase_probability" in scored.column_names and scored.num_rows == table.num_rows
        best_metric, best_folder = min(metric), min(folder_scoring)
        print(
            f"\n| pairs | metric alone s | metrics score FOLDER s | ratio |\n|---:|---:|---:|---:|\n"
            f"| {table.num_rows:,} | {best_metric:.1f} | {best_folder:.1f} | {best_folder / best_metric:.3f} |"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
