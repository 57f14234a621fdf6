"""Peak memory and time of WMS on two long texts: bounded by the cut to ``WMS_WORDS`` distinct words.

Two texts of 10,000 distinct known words each (from MiniLM's vocabulary, stop words left out),
scored with the ``minilm`` profile's WMS alone, after a warm-up that loads the model. The
peak resident memory of the process is read before and after (``getrusage``). Usage::

    python benchmarks/wms_memory.py
"""

from __future__ import annotations

import resource
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics import score_pairs  # noqa: E402
from metrics.profiles import get_profile  # noqa: E402
from metrics.scoring import semantic_scorer  # noqa: E402

WORDS = 10_000


def peak_megabytes() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    scorer = semantic_scorer(get_profile("minilm"))
    mover = scorer.word_mover()
    vocabulary = scorer.encoder().tokenizer.get_vocab()
    words = sorted(
        word
        for word in vocabulary
        if word.isascii() and word.isalpha() and len(word) > 2 and word not in mover.stop_words
    )
    first, second = " ".join(words[:WORDS]), " ".join(words[WORDS : 2 * WORDS])
    score_pairs(["warm up"], ["warm it up"], measures=["wms"])
    before = peak_megabytes()
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = score_pairs([first], [second], measures=["wms"])
    seconds = time.perf_counter() - started
    print(
        f"two texts of {WORDS:,} distinct words: WMS {result['wms'][0]:.4f}, texts cut {result['truncated']}; "
        f"peak memory {before:,.0f} MB before, {peak_megabytes():,.0f} MB after; {seconds:.1f} s"
    )
    for warning in caught:
        print(f"warning: {warning.message}")


if __name__ == "__main__":
    main()
