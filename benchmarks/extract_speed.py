"""Reference extraction speed, side by side with its floor and a naive peer.

* floor: ``bzcat`` of the dump (decompression alone);
* naive peer: mwxml over the dump and ``mwparserfromhell.parse`` of every whole page,
  then its file links;
* ours: :class:`builder.sources.xml.DumpReader` + :func:`builder.extract.wikitext.extract_images`
  in one process, whose bz2 data a thread decompresses ahead of the parser; the local
  engine's extraction with 1 and 2 workers on the dump itself (one bz2 stream: the second
  worker decompresses) and over a multistream copy of it
  (100 pages per bz2 stream, as Wikimedia cuts them: the workers take stream ranges).

All timings are taken in this one run (best of ``--repeat``), so the ratios compare
like with like on a noisy machine. Usage::

    python benchmarks/extract_speed.py [DUMP] [--repeat 3]

Without DUMP it uses the real English Wikipedia excerpt shipped in the gensim wheel.
"""

from __future__ import annotations

import argparse
import bz2
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.engines.local import extract_references  # noqa: E402
from builder.extract.wikitext import extract_images  # noqa: E402
from builder.sources.xml import iter_pages  # noqa: E402

PAGES_PER_STREAM = 100


def gensim_excerpt() -> Path:
    import gensim

    folder = Path(gensim.__file__).parent / "test" / "test_data"
    return folder / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


def best_of(repeat: int, run: Callable[[], object]) -> tuple[float, object]:
    """Fastest wall time of ``repeat`` runs, and the last run's result."""
    times = []
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return min(times), result


def bzcat(path: Path) -> int:
    with open(path, "rb") as source:
        return subprocess.run(["bzcat"], stdin=source, stdout=subprocess.DEVNULL, check=True).returncode


def naive(path: Path) -> int:
    """What most mining scripts do: parse every page in full, then look for file links."""
    import mwparserfromhell
    import mwxml

    found = 0
    with bz2.open(path) as stream:
        for page in mwxml.Dump.from_file(stream):
            if page.namespace != 0 or page.redirect:
                continue
            for revision in page:
                links = mwparserfromhell.parse(revision.text or "").filter_wikilinks()
                found += sum(1 for link in links if str(link.title).strip().lower().startswith(("file:", "image:")))
    return found


def ours(path: Path) -> int:
    return sum(len(extract_images(page.text, page.title)) for page in iter_pages(path))


def split_dump(path: Path) -> tuple[str, list[str]]:
    """The header (up to the first page) and the ``<page>`` elements of a dump."""
    with bz2.open(path, "rt", encoding="utf-8") as stream:
        text = stream.read()
    head, _, rest = text.partition("<page>")
    body = ("<page>" + rest).rpartition("</mediawiki>")[0]
    return head, ["<page>" + page for page in body.split("<page>")[1:]]


def multistream_copy(head: str, pages: list[str], folder: Path) -> Path:
    """Compress a dump as Wikimedia's multistream files are cut: header, then 100 pages per stream."""
    streams = [head] + ["".join(pages[i : i + PAGES_PER_STREAM]) for i in range(0, len(pages), PAGES_PER_STREAM)]
    streams.append("</mediawiki>\n")
    target = folder / "benchmark-pages-articles-multistream.xml.bz2"
    target.write_bytes(b"".join(bz2.compress(stream.encode("utf-8"), 9) for stream in streams))
    return target


def engine(path: Path, workers: int, folder: Path) -> int:
    shards = folder / f"shards-{workers}"
    shutil.rmtree(shards, ignore_errors=True)
    return extract_references([path], shards, workers=workers, show_progress=False).extract.references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", nargs="?", type=Path, help="a .xml.bz2 dump (default: gensim's enwiki excerpt)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=8, help="times the dump is repeated in the multistream copy")
    arguments = parser.parse_args()
    dump = arguments.dump or gensim_excerpt()
    print(f"dump: {dump.name} ({dump.stat().st_size / 1e6:.1f} MB bz2)\n")

    floor, _ = best_of(arguments.repeat, lambda: bzcat(dump))
    naive_time, naive_found = best_of(arguments.repeat, lambda: naive(dump))
    ours_time, ours_found = best_of(arguments.repeat, lambda: ours(dump))
    print("| run | seconds | × bzcat | references |")
    print("|---|---:|---:|---:|")
    print(f"| bzcat (floor) | {floor:.3f} | 1.00 | – |")
    print(f"| naive: mwxml + full parse per page | {naive_time:.3f} | {naive_time / floor:.2f} | {naive_found} |")
    ratio = ours_time / floor
    print(f"| ours: DumpReader + extract_images, one process | {ours_time:.3f} | {ratio:.2f} | {ours_found} |")
    print(f"\nours vs naive: {naive_time / ours_time:.1f}× faster; ours vs bzcat: {ours_time / floor:.2f}×\n")

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        single_one, _ = best_of(arguments.repeat, lambda: engine(dump, 1, folder))
        single_two, _ = best_of(arguments.repeat, lambda: engine(dump, 2, folder))
        print("single-stream file: the engine with 1 worker, and with 2 (decompression threads, indexed_bzip2)\n")
        print("| run | seconds | × bzcat |")
        print("|---|---:|---:|")
        print(f"| engine, 1 worker | {single_one:.3f} | {single_one / floor:.2f} |")
        print(f"| engine, 2 workers | {single_two:.3f} | {single_two / floor:.2f} |")
        print(f"\nspeed-up: {single_one / single_two:.2f}×\n")

        head, pages = split_dump(dump)
        multi = multistream_copy(head, pages * arguments.copies, folder)
        multi_floor, _ = best_of(arguments.repeat, lambda: bzcat(multi))
        one, found_one = best_of(arguments.repeat, lambda: engine(multi, 1, folder))
        two, found_two = best_of(arguments.repeat, lambda: engine(multi, 2, folder))
        assert found_one == found_two, "workers must find the same references"
        print(f"multistream copy: {arguments.copies}× the dump, {multi.stat().st_size / 1e6:.1f} MB bz2\n")
        print("| run | seconds | × bzcat | references |")
        print("|---|---:|---:|---:|")
        print(f"| bzcat (floor) | {multi_floor:.3f} | 1.00 | – |")
        print(f"| engine, 1 worker (writes parquet shards) | {one:.3f} | {one / multi_floor:.2f} | {found_one} |")
        print(f"| engine, 2 workers | {two:.3f} | {two / multi_floor:.2f} | {found_two} |")
        print(f"\nspeed-up with 2 workers: {one / two:.2f}×")


if __name__ == "__main__":
    main()
