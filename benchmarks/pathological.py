"""Time per input size of the markup shapes that made caption cleaning and extraction superlinear.

Each shape is built at 1×, 2× and 4× its base size and timed once per size (best of
``--repeat``); the table gives the seconds and the growth ratio to the previous size.
Linear code doubles its time when the input doubles (a ratio near 2; the target is
at most ~2.2), quadratic code quadruples it. Usage::

    python benchmarks/pathological.py [--scale 1.0] [--repeat 1] [--only clean|extract] [--limit 60]

``--scale`` multiplies every base size; a shape whose run exceeds ``--limit`` seconds
is not run at the next size (the table says so). A function that rejects the input
(``CaptionError``, ``ExtractionError``) is timed all the same and the error is shown.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.extract.cleaning import CaptionError, clean_caption  # noqa: E402
from builder.extract.wikitext import ExtractionError, extract_images  # noqa: E402

TEXT_KB = 1024


def repeated(unit: str) -> Callable[[int], str]:
    """``unit`` written side by side until the text is ``size`` characters long."""

    def build(size: int) -> str:
        return unit * (size // len(unit))

    return build


def after(opening: str) -> Callable[[int], str]:
    """One unclosed ``opening`` followed by ``size`` characters of caption-like text."""

    def build(size: int) -> str:
        return opening + repeated("words of a caption ")(size)

    return build


def deep_braces(size: int) -> str:
    half = size // 4
    return "{{" * half + "x" + "}}" * half


# name, function, build(size) -> text, base size in characters
CLEANING_SHAPES: list[tuple[str, Callable[[int], str], int]] = [
    ("<nowiki> then text", after("<nowiki>"), 256 * TEXT_KB),
    ("unclosed <nowiki> ×N", repeated("<nowiki>"), 256 * TEXT_KB),
    ("unclosed <ref> ×N", repeated("<ref>"), 256 * TEXT_KB),
    ("unclosed <!-- ×N", repeated("<!--"), 256 * TEXT_KB),
    ("unclosed {{ ×N", repeated("{{"), 256 * TEXT_KB),
    ("unclosed [[ ×N", repeated("[["), 256 * TEXT_KB),
    ("''' ×N", repeated("'''"), 256 * TEXT_KB),
    ("''a ×N", repeated("''a"), 256 * TEXT_KB),
    ("unclosed <span> ×N", repeated("<span>"), 256 * TEXT_KB),
    ("unclosed {{a| ×N", repeated("{{a|"), 256 * TEXT_KB),
    ("deep {{…}} nesting", deep_braces, 256 * TEXT_KB),
    ("& ×N", repeated("&"), 256 * TEXT_KB),
    ("&amp; ×N", repeated("&amp;"), 256 * TEXT_KB),
    ("unclosed [http://a ×N", repeated("[http://a "), 256 * TEXT_KB),
    ("<br> ×N", repeated("<br>"), 256 * TEXT_KB),
    ("list lines ×N", repeated("x\n* "), 256 * TEXT_KB),
]


def caption_with_unclosed_templates(size: int) -> str:
    return "[[File:X.jpg|thumb|" + "{{a|" * (size // 4) + "]]"


def gallery_line_with_unclosed_templates(size: int) -> str:
    return "<gallery>\nX.jpg|" + "{{a|" * (size // 4) + "\n</gallery>"


EXTRACTION_SHAPES: list[tuple[str, Callable[[int], str], int]] = [
    ("[[File:…|{{a| ×N]]", caption_with_unclosed_templates, 20 * TEXT_KB),
    ("gallery line {{a| ×N", gallery_line_with_unclosed_templates, 32 * TEXT_KB),
    ("unclosed <gallery> ×N", repeated("<gallery>\nX.jpg|a caption\n"), 256 * TEXT_KB),
    ("unclosed [[File: ×N", repeated("[[File:"), 256 * TEXT_KB),
]


def time_once(function: Callable[[str], object], text: str, repeat: int) -> tuple[float, str]:
    """Best time of ``repeat`` calls, and the rejection the function raised, if any."""
    best = float("inf")
    outcome = ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            function(text)
        except (CaptionError, ExtractionError) as error:
            outcome = type(error).__name__
        best = min(best, time.perf_counter() - start)
    return best, outcome


def run(
    label: str,
    function: Callable[[str], object],
    shapes: list[tuple[str, Callable[[int], str], int]],
    scale: float,
    repeat: int,
    limit: float,
) -> None:
    print(f"\n## {label}\n")
    print("| shape | size (chars) | seconds | × previous | note |")
    print("|---|---:|---:|---:|---|")
    for name, build, base in shapes:
        previous = None
        for factor in (1, 2, 4):
            size = int(base * scale * factor)
            if previous is not None and previous > limit:
                print(f"| {name} | {size:,} | – | – | not run: the previous size took over {limit:g} s |")
                continue
            seconds, outcome = time_once(function, build(size), repeat)
            ratio = f"{seconds / previous:.2f}" if previous else "–"
            print(f"| {name} | {size:,} | {seconds:.3f} | {ratio} | {outcome} |", flush=True)
            previous = max(seconds, 1e-6)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every base size")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs per size")
    parser.add_argument("--only", choices=("clean", "extract"), help="run one function's shapes only")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds after which larger sizes are skipped")
    args = parser.parse_args(argv)
    if args.only in (None, "clean"):
        run("clean_caption", clean_caption, CLEANING_SHAPES, args.scale, args.repeat, args.limit)
    if args.only in (None, "extract"):
        run("extract_images", extract_images, EXTRACTION_SHAPES, args.scale, args.repeat, args.limit)


if __name__ == "__main__":
    main()
