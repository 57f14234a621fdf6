"""Déjà §2 on real captions: sentences analysed per second, and the share of the time the tagger takes.

Usage::

    python benchmarks/deja_text.py CAPTIONS.parquet [--column TEXT] [--limit 10000] [--tagger perceptron]

The figure in docs/deja.md was measured on img2dataset's ``tests/test_files/test_10000.parquet``
(10,000 real web alt texts, LAION's metadata; https://github.com/rom1504/img2dataset, MIT) with
NLTK's perceptron. Prints ratios and rates; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.filters.deja import analyse_texts  # noqa: E402
from builder.filters.tagging import SentenceSplitter, get_tagger  # noqa: E402
from builder.lang.wordnet import load_wordnet  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captions", type=Path, help="a Parquet file with a caption column")
    parser.add_argument("--column", default="TEXT")
    parser.add_argument("--limit", type=int, default=10_000)
    parser.add_argument("--tagger", default="perceptron")
    args = parser.parse_args()
    import pyarrow.parquet as pq

    texts = [text or "" for text in pq.read_table(args.captions, columns=[args.column]).column(0).to_pylist()]
    texts = texts[: args.limit]
    start = time.perf_counter()
    wordnet = load_wordnet()
    loaded = time.perf_counter() - start
    tagger = get_tagger(args.tagger, "en")
    start = time.perf_counter()
    analysed = analyse_texts(texts, tagger, wordnet)
    elapsed = time.perf_counter() - start
    splitter = SentenceSplitter()
    sentences = [sentence.strip() for text in texts for sentence in splitter.split(text) if sentence.strip()]
    start = time.perf_counter()
    tagger.tag(sentences)
    tagging = time.perf_counter() - start
    flat = [sentence for sentences in analysed for sentence in sentences]
    print(f"WordNet {wordnet.signature()} loaded in {loaded:.1f} s; tagger {tagger.signature()}")
    print(
        f"{len(texts):,} captions, {len(flat):,} sentences in {elapsed:.1f} s: {len(flat) / elapsed:,.0f} sentences/s"
    )
    print(f"tagging alone: {tagging:.1f} s ({tagging / elapsed:.0%} of the analysis)")
    print("verdicts:", dict(collections.Counter(sentence.verdict for sentence in flat)))
    print("kinds kept:", dict(collections.Counter(sentence.kind for sentence in flat if sentence.verdict == "kept")))


if __name__ == "__main__":
    main()
