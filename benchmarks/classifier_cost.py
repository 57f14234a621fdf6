"""What the default classifier costs: Δsem,syn scoring with and without ``paraphrase_probability``, side by side.

Real pairs (STS-B's test split and MSRPC's, 3,104 pairs) are scored, alternating in one process with the models
loaded and warm, by

* the metric alone: ``score_pairs`` (profile ``minilm``), what any Δsem,syn scoring costs;
* the metric and the default classifier's probability (:mod:`metrics.crossencoder`), as ``metrics score`` does, with
  the network in float32 and in bfloat16 (the default where the CPU has native bfloat16).

The best of ``--rounds`` runs of each is compared; the goal is a ratio ≤ 1.5. Then one pair of two 100 KB texts is
scored by ``python -m metrics score`` in a child process, in each precision, whose peak resident memory is read from
the kernel (goal: under 1 GB)::

    python benchmarks/classifier_cost.py [--rounds 3] [--size 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.paraphrase_crossencoder import msrpc, stsb  # noqa: E402
from metrics.crossencoder import PRECISION_VARIABLE, PRECISIONS, load, precision, scored_cosine  # noqa: E402
from metrics.scoring import score_pairs  # noqa: E402


def long_pair(size: int) -> tuple[str, str]:
    """Two texts of ``size`` characters made of MSRPC's real sentences (different ones in each)."""
    first, second, _ = msrpc("train")
    texts = []
    for source in (first, second):
        text, index = [], 0
        while sum(len(t) + 1 for t in text) < size:
            text.append(source[index % len(source)])
            index += 1
        texts.append(" ".join(text)[:size])
    return texts[0], texts[1]


# A child's peak (ru_maxrss) starts from the size of the process it was forked from, before its exec; so the scoring
# is started by a small Python process, which reports the peak of its only child.
_MEASURE = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)


def peak_of_scoring(size: int, kind: str) -> float:
    """Peak resident MB of ``python -m metrics score`` on one pair of two ``size``-character texts, the network in
    ``kind``: that child's own peak, read by a small process that starts it (not this one, whose size a forked child
    would start from)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "long.jsonl"
        first, second = long_pair(size)
        path.write_text(json.dumps({"sentence1": first, "sentence2": second}) + "\n", encoding="utf-8")
        # --no-language-check: the check counts English function words among the distinct words, a share that
        # shrinks as a text grows (9,110 distinct words of MSRPC give 1%), so it refuses 100 KB of English
        command = [sys.executable, "-m", "metrics", "score", str(path), "--no-progress", "--no-language-check"]
        done = subprocess.run([sys.executable, "-c", _MEASURE, *command], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT), PRECISION_VARIABLE: kind})  # fmt: skip
        if done.returncode:
            raise SystemExit(f"scoring the long pair failed: {done.stderr}")
        return int(done.stdout.split()[-1]) / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, alternating (the best counts)")
    parser.add_argument("--size", type=int, default=100_000, help="characters of each text of the long pair")
    options = parser.parse_args(argv)
    parts = [stsb("test"), msrpc("test")]
    first = [text for part in parts for text in part[0]]
    second = [text for part in parts for text in part[1]]
    model = load()
    score_pairs(first[:64], second[:64], profile="minilm")  # models loaded and warm before either is timed
    for kind in PRECISIONS:
        model.probability(first[:64], second[:64], kind=kind)
    timed: dict[str, list[float]] = {"alone": [], **{kind: [] for kind in PRECISIONS}}
    for round_ in range(options.rounds):
        started = time.perf_counter()
        score_pairs(first, second, profile="minilm")
        timed["alone"].append(time.perf_counter() - started)
        for kind in PRECISIONS:
            started = time.perf_counter()
            scores = score_pairs(first, second, profile="minilm")
            # as ``metrics score`` does: a calibration that weighs the cosine takes the scores' own
            model.probability(first, second, kind=kind, cosine=scored_cosine(scores))
            timed[kind].append(time.perf_counter() - started)
        print(f"round {round_ + 1}: " + ", ".join(f"{name} {seconds[-1]:.1f} s" for name, seconds in timed.items()),
              flush=True)  # fmt: skip
    pairs, alone = len(first), min(timed["alone"])
    print(f"this machine scores in {precision()} by default")
    print("| network | pairs | metric alone s | metric + probability s | ratio | pairs/s alone "
          "| pairs/s with probability | peak MB, one pair of two long texts |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in PRECISIONS:
        both = min(timed[kind])
        print(f"| {kind} | {pairs:,} | {alone:.1f} | {both:.1f} | {both / alone:.2f} | {pairs / alone:.0f} | "
              f"{pairs / both:.0f} | {peak_of_scoring(options.size, kind):,.0f} |")  # fmt: skip
    print(f"(the long pair: two texts of {options.size:,} characters)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
