"""Time and peak memory of Δsem,syn on one long pair, per measure, against rouge_score's own ROUGE-L.

Two English texts of 100 KB each (real Wikipedia sentences from gensim's enwiki excerpt, about
16,000 tokens apiece, different sentences), scored with the ``minilm`` profile one measure at a
time after a warm-up that loads the models. For each measure the run prints the seconds (wall, and
CPU of all threads: the machine may be shared), the growth of the process's peak resident memory
(Linux's ``VmHWM``, reset before each measure through ``/proc/self/clear_refs``) and the texts the
measure read cut. Then the previous path, side by side: ROUGE-1 and ROUGE-L from rouge_score's
``RougeScorer`` on the same tokens, as ``score_pairs`` ran them before (its ROUGE-L fills a table of
len(a) × len(b) Python integers), with a check that its figures equal ours. The language check is
off: it reads long English texts as too poor in function words (their distinct words, among which
function words are few). Usage::

    python benchmarks/long_pair.py [--size 100000] [--no-before]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rouge_score import rouge_scorer  # noqa: E402

from metrics import score_pairs  # noqa: E402
from metrics.baseline import wikipedia_sentences  # noqa: E402
from metrics.scoring import MEASURES  # noqa: E402
from metrics.syntactic import SyntacticScorer, pair_scheme  # noqa: E402


def long_text(sentences: list[str], size: int) -> str:
    """Sentences joined until ``size`` characters, cut at the last whole sentence."""
    text = ""
    for sentence in sentences:
        if len(text) + len(sentence) + 1 > size:
            break
        text = f"{text} {sentence}" if text else sentence
    return text


def _status(field: str) -> float:
    """A memory figure of this process from /proc/self/status, in MB."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise OSError(f"/proc/self/status has no {field}")


def measured(run: Callable[[], object]) -> tuple[object, str, float]:
    """What ``run`` returns, its wall and CPU seconds, and how far it raised the peak resident memory (MB).

    CPU seconds (all the process's threads) say more than wall seconds on a machine shared with other jobs.
    """
    with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
        handle.write("5")  # the peak (VmHWM) starts again from the current resident memory
    start = _status("VmRSS")
    started, cpu = time.perf_counter(), time.process_time()
    value = run()
    seconds = f"{time.perf_counter() - started:.2f} ({time.process_time() - cpu:.2f})"
    return value, seconds, _status("VmHWM") - start


def main(argv: list[str] | None = None) -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--size", type=int, default=100_000, help="characters per text (default 100,000)")
    options.add_argument("--no-before", action="store_true", help="leave out rouge_score's ROUGE-L (minutes, GBs)")
    arguments = options.parse_args(argv)
    sentences = wikipedia_sentences()
    half = len(sentences) // 2
    first, second = long_text(sentences[:half], arguments.size), long_text(sentences[half:], arguments.size)
    tokens = SyntacticScorer().tokens(first, second)
    print(f"tokens: {pair_scheme(first, second, 'auto')}")
    sizes = f"{len(first):,} and {len(second):,} characters"
    print(f"two texts of {sizes}, {len(tokens[0]):,} and {len(tokens[1]):,} tokens")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score_pairs(["Boats in the harbour at dusk."], ["The harbour of the town, with its boats."])  # models loaded
    print(f"load average before: {os.getloadavg()[0]:.1f}; seconds: wall (CPU)")
    print("| measure | now: seconds | now: peak MB | texts cut | score | before: seconds | before: peak MB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    now: dict[str, float] = {}
    messages: list[str] = []
    for measure in (*MEASURES, "all six"):
        chosen = list(MEASURES) if measure == "all six" else [measure]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result, seconds, peak = measured(
                lambda c=chosen: score_pairs([first], [second], measures=c, check_language=False)
            )
        messages.extend(str(warning.message) for warning in caught)
        score = result["delta" if measure == "all six" else measure][0]  # type: ignore[index]
        cut = result["truncated_pairs"][0]  # type: ignore[index]
        if measure != "all six":
            now[measure] = score
        print(f"| {measure} | {seconds} | {peak:,.0f} | {cut} | {score:.6f} | | |")
    if not arguments.no_before:
        tokenizer = SyntacticScorer()._tokenizer
        tokenizer.scheme = pair_scheme(first, second, "auto")  # the pair's tokens, as score_pairs reads them
        rouge = rouge_scorer.RougeScorer(["rouge1", "rougeL"], tokenizer=tokenizer)
        before, seconds, peak = measured(lambda: rouge.score(first, second))
        same = before["rouge1"].fmeasure == now["rouge1"] and before["rougeL"].fmeasure == now["rougeL"]  # type: ignore[index]
        print(f"| rouge1 + rougeL (rouge_score, as before) | | | | | {seconds} | {peak:,.0f} |")
        print(f"rouge_score's ROUGE-1 and ROUGE-L equal ours exactly: {same}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    for message in dict.fromkeys(messages):
        print(f"warning: {message}")


if __name__ == "__main__":
    main()
