"""Δsem,syn throughput: ``score_pairs`` against the per-pair composition the paper's authors ran.

Pairs are built like Wikipedia-IPC's: real Wikipedia sentences of caption length
(6–20 words, from gensim's enwiki excerpt) are grouped into "images" whose sizes
follow the paper's Table 3 (2.3 texts per image), and every pair within a group is
a candidate. ``score_pairs`` encodes each
unique sentence once and shares one MiniLM pass between ST and BERTScore; the naive
composition scores every pair on its own (an ST encode of both texts, a BERTScore
call, a Word Mover's computation). Both run here, in one process, on the same pairs;
the naive one on a subset, whose scores must equal ours. Usage::

    python benchmarks/metric_speed.py [--pairs 10000] [--naive 300] [--repetition table3|high]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics.baseline import wikipedia_sentences  # noqa: E402
from metrics.profiles import MINILM_BASELINE, get_profile, minilm_path  # noqa: E402
from metrics.scoring import score_pairs, semantic_scorer  # noqa: E402
from metrics.syntactic import SyntacticScorer  # noqa: E402

# "table3": references per image after the paper's filters average 2.32 (Table 3, gold); these
# group sizes give 2.36 texts per group, 1.27 unique texts per pair. "high": 2 to 5 texts per
# group, uniformly (0.7 unique texts per pair), as before the bound of 10 references is applied.
GROUP_SIZES = {"table3": {2: 0.75, 3: 0.17, 4: 0.05, 5: 0.03}, "high": {2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0}}


def caption_like_pairs(count: int, seed: int = 0, repetition: str = "table3") -> tuple[list[str], list[str]]:
    """All pairs within random groups of caption-length sentences, until ``count`` pairs."""
    generator = random.Random(seed)
    sentences = [sentence for sentence in wikipedia_sentences() if len(sentence.split()) <= 20]
    generator.shuffle(sentences)
    first: list[str] = []
    second: list[str] = []
    position = 0
    while len(first) < count:
        sizes = GROUP_SIZES[repetition]
        size = generator.choices(list(sizes), weights=list(sizes.values()))[0]
        group = [sentences[(position + k) % len(sentences)] for k in range(size)]
        position += size
        for i in range(size):
            for j in range(i + 1, size):
                first.append(group[i])
                second.append(group[j])
    return first[:count], second[:count]


def naive_scores(first: list[str], second: list[str]) -> dict[str, list[float]]:
    """One pair at a time, each library called as its documentation shows."""
    import bert_score
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(minilm_path(), device="cpu")
    scorer = bert_score.BERTScorer(model_type=minilm_path(), num_layers=6, device="cpu")
    mover = semantic_scorer(get_profile("minilm"), "cpu").word_mover()
    syntactic = SyntacticScorer()
    scores: dict[str, list[float]] = {"st": [], "bert": [], "wms": []}
    for a, b in zip(first, second, strict=True):
        syntactic.score(a, b)
        vectors = model.encode([a, b], normalize_embeddings=True)
        scores["st"].append(max(0.0, min(1.0, float(vectors[0] @ vectors[1]))))
        _, _, f1 = scorer.score([a], [b])
        scores["bert"].append(max(0.0, min(1.0, (f1.item() - MINILM_BASELINE) / (1 - MINILM_BASELINE))))
        scores["wms"].append(mover.similarity(mover.bag(a), mover.bag(b)))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--naive", type=int, default=300, help="pairs scored the naive way (it is slow)")
    parser.add_argument("--repetition", choices=sorted(GROUP_SIZES), default="table3", help="texts per image")
    arguments = parser.parse_args()
    first, second = caption_like_pairs(arguments.pairs, repetition=arguments.repetition)
    unique = len(set(first) | set(second))
    print(f"{len(first):,} pairs over {unique:,} unique sentences\n")
    score_pairs(first[:8], second[:8])  # load the models outside the timings

    started = time.perf_counter()
    ours = score_pairs(first, second, profile="minilm", batch_size=64, device="cpu")
    ours_time = time.perf_counter() - started

    subset = arguments.naive
    started = time.perf_counter()
    naive = naive_scores(first[:subset], second[:subset])
    naive_time = time.perf_counter() - started

    worst = max(abs(naive[m][i] - ours[m][i]) for m in naive for i in range(subset))  # type: ignore[index]
    ours_rate = len(first) / ours_time
    naive_rate = subset / naive_time
    print("| run | pairs | seconds | pairs/s |")
    print("|---|---:|---:|---:|")
    print(f"| naive per-pair composition | {subset:,} | {naive_time:.1f} | {naive_rate:.1f} |")
    print(f"| score_pairs (minilm, all six measures) | {len(first):,} | {ours_time:.1f} | {ours_rate:.1f} |")
    print(f"\nspeed-up: {ours_rate / naive_rate:.1f}×; largest score difference on the shared pairs: {worst:.2e}")


if __name__ == "__main__":
    main()
