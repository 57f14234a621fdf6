"""Estimate a BERTScore rescale baseline for a model that bert_score has none for.

bert_score's baselines are the mean F1 of random, unrelated sentence pairs; rescaling
``(F - b) / (1 - b)`` then spreads the scores of related pairs over [0, 1]. We do the
same on real English Wikipedia sentences: those of the dump excerpt in gensim's test
data. Usage::

    python -m metrics.baseline [--pairs 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from metrics.profiles import get_profile
from metrics.semantic import SharedEncoder, greedy_f1


def wikipedia_sentences(limit: int = 20_000) -> list[str]:
    """Plain sentences of 6 to 40 words from the articles of gensim's enwiki excerpt."""
    import gensim
    import mwparserfromhell
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from builder.sources.xml import iter_pages

    folder = Path(gensim.__file__).parent / "test" / "test_data"
    dump = folder / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    splitter = PunktSentenceTokenizer()
    sentences = []
    for page in iter_pages(dump):
        text = mwparserfromhell.parse(page.text).strip_code()
        for paragraph in text.split("\n"):
            for sentence in splitter.tokenize(paragraph):
                if 6 <= len(sentence.split()) <= 40:
                    sentences.append(" ".join(sentence.split()))
    return sentences[:limit]


def estimate_baseline(pairs: int = 2000, seed: int = 0, progress: bool = False) -> float:
    """Mean BERTScore F1 (MiniLM, no rescaling) of ``pairs`` random pairs of unrelated sentences."""
    profile = get_profile("minilm")
    sentences = wikipedia_sentences()
    generator = random.Random(seed)
    chosen = [tuple(generator.sample(range(len(sentences)), 2)) for _ in range(pairs)]
    needed = sorted({index for pair in chosen for index in pair})
    encoder = SharedEncoder(profile.bert_model, profile.bert_layer, "cpu", 64)
    encoded, _ = encoder.encode([sentences[i] for i in needed], progress)
    encodings = dict(zip(needed, encoded, strict=True))
    return sum(greedy_f1(encodings[a], encodings[b]) for a, b in chosen) / pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000, help="random sentence pairs to average (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the pair sampling (default 0)")
    arguments = parser.parse_args()
    print(f"{estimate_baseline(arguments.pairs, arguments.seed, progress=True):.4f}")


if __name__ == "__main__":
    main()
