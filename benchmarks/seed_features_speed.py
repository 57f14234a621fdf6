"""How fast Brockett & Dolan's features are (:mod:`metrics.seed_features`): pairs per second on real pairs.

Scores the first ``--pairs`` pairs of MSRPC and PAWS-Wiki (the copies in ``metrics/data/training/``,
cycled when more are asked for) twice: cold (the word lexicon empty, WordNet loaded) and warm, and
prints the seconds and pairs per second::

    python benchmarks/seed_features_speed.py [--pairs 10000]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.corpora import ReadReport, read_msrpc, read_paws  # noqa: E402
from metrics.seed_features import lexicon, seed_features  # noqa: E402

TRAINING = ROOT / "metrics" / "data" / "training"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000, help="how many pairs (default 10,000)")
    arguments = parser.parse_args(argv)
    records = [*read_msrpc(TRAINING / "msrpc", ReadReport()), *read_paws(TRAINING / "paws", ReadReport())]
    chosen = list(itertools.islice(itertools.cycle(records), arguments.pairs))
    first, second = [r.sentence1 for r in chosen], [r.sentence2 for r in chosen]
    start = time.perf_counter()
    lexicon()
    loaded = time.perf_counter() - start
    for run in ("cold", "warm"):
        start = time.perf_counter()
        matrix = seed_features(first, second)
        seconds = time.perf_counter() - start
        print(f"{run}: {len(matrix):,} pairs' features in {seconds:.2f} s ({len(matrix) / seconds:,.0f} pairs/s)")
    print(f"WordNet loaded in {loaded:.2f} s (once per process)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
