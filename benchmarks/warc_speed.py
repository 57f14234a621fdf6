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
many pages.

With ``--real``, the same measures on real archives (by default the WARC and ARC files of ``tests/data/web``:
Common Crawl, ClueWeb09, the Internet Archive, wget, JWAT), file by file and in total, in pages and MB (as
stored) per second and core; with ``--peer`` (or ``--peer-classpath``, see ``benchmarks/warc_peer.py``) the
thesis authors' extractor on the same files in the same run, its whole process and its own time. Usage::

    python benchmarks/warc_speed.py --pages 2000 --repeat 3
    python benchmarks/warc_speed.py --real --repeat 5 [--peer-classpath CLASSPATH]
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
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
            LexborHTMLParser(response.payload.decode(_codec(response.charset) or "utf-8", "replace"))
            count += 1
    return count


def _codec(label: str | None) -> str | None:
    from builder.extract.html import _codec as codec

    return codec(label)


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


REAL = Path(__file__).resolve().parent.parent / "tests" / "data" / "web"


def real_archives(paths: list[Path], repeat: int, peer: list[str] | None) -> list[dict[str, object]]:
    """Each real archive's pages, size and best times: fastwarc's bare iteration (WARC only), the reader, the reader
    and Lexbor's parse, the extraction, and the peer's whole process and own time when a peer is given."""
    from benchmarks.warc_peer import run_peer

    rows = []
    for path in paths:
        pages = parse_only(path)
        row: dict[str, object] = {"file": path.name, "pages": pages, "mb": path.stat().st_size / 1e6}
        arc = path.name.endswith((".arc", ".arc.gz"))
        runs = [("reader", reader), ("parse only", parse_only), ("extraction", extraction)]
        if not arc:
            runs.insert(0, ("floor", floor))
        for name, run in runs:
            row[name] = best_of(repeat, run, path)
        if peer:
            sides = [run_peer(peer, path, 600) for _ in range(repeat)]
            row["peer"] = min(side.seconds for side in sides if side.seconds is not None)
            owns = [side.own_seconds for side in sides if side.own_seconds is not None]
            row["peer own"] = min(owns) if owns else None
        rows.append(row)
    return rows


def print_real(rows: list[dict[str, object]]) -> None:
    names = ["floor", "reader", "parse only", "extraction", "peer", "peer own"]
    shown = [name for name in names if any(name in row for row in rows)]
    print("| file | pages | MB | " + " | ".join(f"{name} s" for name in shown) + " | extraction ÷ parse only |")
    print("|---|---:|---:|" + "---:|" * len(shown) + "---:|")
    for row in rows:
        cells = [f"{row[name]:.4f}" if row.get(name) is not None else "–" for name in shown]
        ratio = row["extraction"] / row["parse only"] if row["parse only"] else 0  # type: ignore[operator]
        print(f"| {row['file']} | {row['pages']:,} | {row['mb']:.2f} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    pages = sum(int(row["pages"]) for row in rows)  # type: ignore[call-overload]
    size = sum(float(row["mb"]) for row in rows)  # type: ignore[arg-type]
    print(f"\nIn total, {pages:,} pages, {size:.1f} MB as stored; per second on one core:")
    for name in shown:
        measured = [row for row in rows if row.get(name) is not None]
        seconds = sum(float(row[name]) for row in measured)  # type: ignore[arg-type]
        covered = sum(int(row["pages"]) for row in measured)  # type: ignore[call-overload]
        mb = sum(float(row["mb"]) for row in measured)  # type: ignore[arg-type]
        if seconds:
            print(f"  {name:<11} {seconds:7.3f} s  {covered / seconds:8,.0f} pages/s  {mb / seconds:6.1f} MB/s")
    parse = sum(float(row["parse only"]) for row in rows)  # type: ignore[arg-type]
    extract = sum(float(row["extraction"]) for row in rows)  # type: ignore[arg-type]
    print(f"  extraction ÷ (reader and parse): {extract / parse:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages of the test crawl")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest counts")
    parser.add_argument("--real", nargs="*", type=Path, help="real archives (default: tests/data/web's)")
    parser.add_argument("--peer", help="with --real: the command that runs the authors' extractor on one file")
    parser.add_argument("--peer-classpath", help="with --real, instead of --peer: the peer's Java classpath")
    parser.add_argument("--memory-of", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.real is not None:
        paths = options.real or sorted(
            path for path in REAL.iterdir() if path.name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz"))
        )
        peer = shlex.split(options.peer) if options.peer else None
        if options.peer_classpath:
            peer = ["java", "-cp", options.peer_classpath, "PeerDriver"]
        print_real(real_archives(paths, options.repeat, peer))
        return 0
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
