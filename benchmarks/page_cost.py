"""Time per MB of one HTML page's reading (the nesting scan, Lexbor's parse, the captions) at several sizes.

Issue 45, item 5: a page's cost must grow as its size does, however it is shaped. Each shape is built at every
size of ``--sizes`` (MB) and read once by ``builder.extract.html.extract_references`` (best of ``--repeat``); the
table gives, side by side, the seconds, the seconds per MB and the work counted (``Work``: tags the scan read, tree
nodes Python visited), so that a shape whose time per MB climbs with the size shows at a glance. Usage::

    python benchmarks/page_cost.py [--sizes 1 2 4 8] [--repeat 1] [--only SHAPE ...]

The shapes: the issue's 50,000-image page (images side by side just under the nesting bound, which walked each
image to the root), ``<div>`` siblings as deep (Lexbor's own cost grows with the depth it works at, so this is the
bound's price), stacks of captions nested 400 deep in captions (each caption's text once held all below it), the
issue's ``<svg><title>`` page (refused by the scan, never parsed) and a plain article-like page for scale.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.extract.html import MAX_DEPTH, HtmlStats, TooDeep, Work, extract_references  # noqa: E402

MB = 10**6
DEPTH = MAX_DEPTH - 96  # under the bound: the page is parsed


def _fill(head: str, unit: str, tail: str, size: int) -> str:
    return head + unit * max(0, (size - len(head) - len(tail)) // len(unit)) + tail


SHAPES: dict[str, Callable[[int], str]] = {
    "images deep": lambda size: _fill(
        "<html><body>" + "<div>" * DEPTH, '<img src="a.jpg" alt="a caption">', "</div>" * DEPTH, size
    ),
    "divs deep": lambda size: _fill("<html><body>" + "<div>" * DEPTH, "<div></div>", "</div>" * DEPTH, size),
    "nested captions": lambda size: (
        "<figure><img src=a.jpg><figcaption>word word " * 400 + "</figcaption></figure>" * 400
    )
    * (size // 26_800),
    "svg-hidden nesting": lambda size: _fill("<svg><title>", "<div>", "", size),
    "article": lambda size: _fill(
        "<html><body>",
        "<p>The harbour of the town seen from the hill at dawn, with boats.</p>"
        '<figure><img src="photo.jpg" alt="Boats in the harbour"><figcaption>Boats lie in the harbour at low tide.'
        "</figcaption></figure>",
        "</body></html>",
        size,
    ),
}


def run(shape: str, size: int, repeat: int) -> tuple[float, Work, str]:
    page = SHAPES[shape](size)
    best, work, outcome = float("inf"), Work(), ""
    for _ in range(repeat):
        work, stats = Work(), HtmlStats()
        start = time.perf_counter()
        try:
            references = extract_references(page, "https://example.org/page.html", stats, work).references
            outcome = f"{len(references):,} references"
        except TooDeep:
            outcome = "refused (too deep)"
        best = min(best, time.perf_counter() - start)
    return best, work, outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 2, 4, 8], help="page sizes in MB")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    options = parser.parse_args(argv)
    print("| shape | MB | seconds | s/MB | tags read | nodes visited | outcome |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for shape in options.only:
        for megabytes in options.sizes:
            seconds, work, outcome = run(shape, int(megabytes * MB), options.repeat)
            print(
                f"| {shape} | {megabytes:g} | {seconds:.3f} | {seconds / megabytes:.3f} | {work.tags:,} | "
                f"{work.nodes:,} | {outcome} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
