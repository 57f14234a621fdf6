"""Reading crawls: pages per second and core, against fastwarc's bare iteration over the same file.

A test crawl of ``--pages`` pages (about 20 kB of HTML each, three shared images per page) is written
with warcio (:mod:`benchmarks.web_crawl`), gzip per record as Common Crawl writes it. In one run, best
of ``--repeat``, on one core:

* floor: fastwarc's ``ArchiveIterator`` over the file, every response's HTTP headers parsed and its
  payload read;
* reader: :func:`builder.sources.warc.iter_responses` (our gzip decompression, digests checked, skips counted);
* parse only: the reader and Lexbor's parse of every page, nothing taken from it (the HTML5 parser's own cost);
* extraction: :func:`builder.extract.web.iter_web_rows` (the reader, charsets, Lexbor, the three caption kinds).

Then the peak memory (RSS) of the extraction in a fresh process at ``--pages`` and at four times as
many pages. Usage::

    python benchmarks/warc_speed.py --pages 2000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.web_crawl import write_test_crawl  # noqa: E402
from builder.extract.html import HtmlStats  # noqa: E402
from builder.extract.web import WebResult, WebTask, iter_web_rows  # noqa: E402
from builder.sources.warc import WarcStats, iter_responses  # noqa: E402

FILLER = 150  # paragraphs around each figure: about 20 kB of HTML a page


def floor(path: Path) -> int:
    """fastwarc alone: every response record's HTTP headers and payload."""
    from fastwarc import ArchiveIterator, WarcRecordType

    count = 0
    for record in ArchiveIterator(str(path), record_types=WarcRecordType.response, parse_http=True):
        record.reader.read()
        count += 1
    return count


def reader(path: Path) -> int:
    return sum(1 for _ in iter_responses(str(path), WarcStats()))


def parse_only(path: Path) -> int:
    """The reader, and every HTML page parsed by Lexbor with nothing taken from it: the HTML5 parser's own cost,
    which no extraction with a real parser can go below."""
    from selectolax.lexbor import LexborHTMLParser

    count = 0
    for response in iter_responses(str(path), WarcStats()):
        if response.kind == "html":
            LexborHTMLParser(response.payload.decode("utf-8", "replace"))
            count += 1
    return count


def extraction(path: Path) -> int:
    result = WebResult(WarcStats(), HtmlStats())
    return sum(1 for kind, _ in iter_web_rows(WebTask(str(path), "", ""), result) if kind == "reference")


def best_of(repeat: int, run: Callable[[Path], int], path: Path) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run(path)
        times.append(time.perf_counter() - start)
    return min(times)


def peak_memory(path: Path) -> int:
    """The peak RSS in bytes of a fresh process that extracts ``path``."""
    output = subprocess.run(
        [sys.executable, __file__, "--memory-of", str(path)], check=True, capture_output=True, text=True
    ).stdout
    return int(json.loads(output)["peak"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages of the test crawl")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest counts")
    parser.add_argument("--memory-of", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.memory_of:
        references = extraction(options.memory_of)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"peak": peak, "references": references}))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        path = write_test_crawl(Path(folder) / "crawl.warc.gz", options.pages, filler=FILLER)
        size = path.stat().st_size
        times = {
            name: best_of(options.repeat, run, path)
            for name, run in (
                ("floor", floor),
                ("reader", reader),
                ("parse only", parse_only),
                ("extraction", extraction),
            )
        }
        print(f"test crawl: {options.pages:,} pages, {size / 1e6:.1f} MB gzip; best of {options.repeat}, one core")
        for name, seconds in times.items():
            print(
                f"  {name:<11} {seconds:6.2f} s  {options.pages / seconds:8,.0f} pages/s  "
                f"{seconds / times['floor']:5.1f}× the floor"
            )
        larger = write_test_crawl(Path(folder) / "larger.warc.gz", options.pages * 4, filler=FILLER)
        for pages, crawl in ((options.pages, path), (options.pages * 4, larger)):
            print(f"  peak RSS, extraction of {pages:,} pages: {peak_memory(crawl) / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
