"""Bronze extraction at the scale of an edit history: speed against its floors, memory, and a projection.

A ``pages-meta-history`` dump is synthesized from real article text (the English
Wikipedia excerpt in the gensim wheel) with edit sequences of a realistic shape, at
three sizes; the largest holds one page of ``--long-page`` (10,000) revisions. For
each size it prints:

* MB/s of XML of bronze extraction (the local engine, ``--workers`` 1 and 2), with its
  peak memory, and the same with every revision parsed from scratch, side by side;
* the ratio to its floors: a plain ``xml.etree.ElementTree.iterparse`` of the XML,
  and the decompression of the ``.bz2`` and ``.7z`` copies with every decoder found
  (Python's ``bz2``, indexed_bzip2 with 2 threads, ``lbzip2``/``bzip2``; py7zr,
  libarchive, ``7z``);
* the projection of the full English Wikipedia history on a Spark cluster of N cores.

Then the same on real histories (``--real``, by default the one shipped with the tests:
the article "Anarchism", 15,180 revisions from 2001 to 2010, decompressed into a temporary
folder), where the edits are those editors made, not synthesized. For each history, synthetic
and real, it says how the revisions were extracted: from an earlier identical text, from the
chunks an edit touched, or parsed whole, and why (a count per reason the fast path refused).

The shape of the synthesized edit sequences (figures taken from published ones, and
flags): revisions per page are
geometric with mean 18 (the paper's bronze bound: 180 references per image are 18
revisions × 10 references; Wikimedia's statistics give about 20 revisions per page for
English Wikipedia); an edit changes a few words (a median of about 30 characters, a
long tail of added sentences); 7 % of edits revert to an earlier revision (identity
reverts, most of them of vandalism that broke markup, as in the revert studies of
Kittur et al. 2007 and Halfaker et al. 2011, which put them at 5–10 %); 3 % rewrite a
caption. The long page follows the issue's real one: 15,180 revisions of one article.

Usage::

    python benchmarks/history.py [--sizes 4 12 30] [--long-page 10000] [--cores 512] [--real FILE ...]
    python benchmarks/history.py --long-page 15000 --against ../earlier-checkout   # a change, side by side
    python benchmarks/history.py --long-page 15000 --check   # every revision as from scratch (about a minute)

``--real`` with no file leaves the real histories out; a history may be plain or compressed
(``.lzma``, ``.xz``, ``.bz2``, ``.gz``: decompressed first, as a plain file is cut for several workers).
The default run takes about three minutes on two cores.
"""

from __future__ import annotations

import argparse
import bz2
import concurrent.futures
import contextlib
import gzip
import importlib.util
import json
import lzma
import multiprocessing
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.extract_speed import gensim_excerpt  # noqa: E402
from builder.data.make_sample import dump_xml, page_xml  # noqa: E402
from builder.extract.incremental import IncrementalStats, RevisionExtractor  # noqa: E402
from builder.extract.wikitext import ExtractionError, ExtractStats, extract_images  # noqa: E402
from builder.sources.xml import DumpReader  # noqa: E402

REVISIONS_PER_PAGE = 18
REVERT_SHARE = 0.07
VANDALISM_SHARE = 0.04
RECAPTION_SHARE = 0.03
SENTENCE_SHARE = 0.15  # edits that add a sentence of the article rather than change a few words
VANDAL_MARKS = ["[[", "{{", "]]", "}}", "<!--", "<ref>", "'''", "LOL "]
MB = 1_000_000
SHIPPED = (
    Path(__file__).resolve().parent.parent / "tests" / "data" / "paraphrases" / "enwiki-anarchism-history.xml.lzma"
)
_CAPTION = re.compile(r"(\[\[(?:File|Image):[^|\]]*\|(?:[^|\]\[]*\|)*)([^|\]\[]+)\]\]")
_SENTENCE = re.compile(r"[^.\n]{20,300}[.\n]")
_WORD = re.compile(r"(?<![<=/\w])[a-z]{4,}\b(?![=>])")  # a word of prose, not a tag's or parameter's name


def articles() -> list[tuple[str, str]]:
    """The real articles of the gensim excerpt, (title, wikitext), those with text only."""
    return [(page.title, page.text) for page in DumpReader(gensim_excerpt()) if len(page.text) > 2000]


def _balanced(text: str) -> bool:
    """A stretch editors replace whole: its links and templates closed, no tag in it."""
    return text.count("[[") == text.count("]]") and text.count("{{") == text.count("}}") and "<" not in text


def edit_history(text: str, revisions: int, chooser: random.Random) -> list[str]:
    """Revisions leading to ``text``: it grows paragraph by paragraph from a third, with word edits,
    added sentences, rewritten captions, vandalism and reverts."""
    paragraphs = text.split("\n\n")
    sentences = [sentence for sentence in _SENTENCE.findall(text) if _balanced(sentence)]
    kept = max(1, len(paragraphs) // 3)
    current = "\n\n".join(paragraphs[:kept])
    history = [current]
    grow_every = max(1, revisions // max(1, len(paragraphs) - kept))
    while len(history) < revisions:
        roll = chooser.random()
        place = chooser.randrange(len(current) + 1)
        if roll < VANDALISM_SHARE and len(history) + 1 < revisions:  # vandalism, reverted by the next edit
            history.append(current[:place] + chooser.choice(VANDAL_MARKS) + current[place + chooser.randrange(40) :])
            history.append(current)
            continue
        if roll < REVERT_SHARE:  # a revert of an edit that stays reverted
            current = history[-chooser.randrange(1, min(len(history), 3) + 1)]
        elif roll < REVERT_SHARE + RECAPTION_SHARE:
            caption = _CAPTION.search(current)
            if caption is not None:
                words = " ".join(chooser.sample(_WORD.findall(text), 6))
                current = current[: caption.start(2)] + words + current[caption.end(2) :]
        elif roll < REVERT_SHARE + RECAPTION_SHARE + SENTENCE_SHARE and sentences:  # a sentence rewritten
            old = _SENTENCE.search(current, place)
            if old is not None and _balanced(old.group()):
                current = current[: old.start()] + chooser.choice(sentences) + current[old.end() :]
        else:  # a word or a few replaced: a median of about 30 characters changed
            word = _WORD.search(current, place)
            if word is not None:
                replacement = " ".join(chooser.sample(_WORD.findall(text), chooser.randrange(1, 4)))
                current = current[: word.start()] + replacement + current[word.end() :]
        if len(history) % grow_every == 0 and kept < len(paragraphs):
            current += "\n\n" + paragraphs[kept]
            kept += 1
        history.append(current)
    return history[:revisions]


def synthesize(folder: Path, megabytes: float, long_page: int, seed: int) -> Path:
    """A history dump of about ``megabytes`` MB of XML; ``long_page`` > 0 adds one page of that many revisions."""
    chooser = random.Random(seed)
    sources = articles()
    path = folder / f"enwiki-20240101-pages-meta-history-{megabytes:g}MB.xml"
    head, _, tail = dump_xml([]).partition("</mediawiki>")
    with open(path, "w", encoding="utf-8") as out:
        out.write(head)
        page_id = 1
        if long_page:
            title, text = min(sources, key=lambda source: abs(len(source[1]) - 6000))
            out.write(page_xml(f"{title} (long history)", edit_history(text, long_page, chooser), page_id))
        while out.tell() < megabytes * MB:
            page_id += 1
            title, text = chooser.choice(sources)
            revisions = max(1, min(400, int(chooser.expovariate(1 / REVISIONS_PER_PAGE)) + 1))
            out.write(page_xml(f"{title} {page_id}", edit_history(text, revisions, chooser), page_id))
        out.write("</mediawiki>" + tail)
    return path


def compressed_copies(path: Path) -> dict[str, Path]:
    """The dump as ``.bz2`` (one stream, as Wikimedia's history files) and ``.7z``, by the fastest tools at hand."""
    copies = {"bz2": path.with_name(path.name + ".bz2"), "7z": path.with_name(path.name + ".7z")}
    if shutil.which("lbzip2"):
        with open(copies["bz2"], "wb") as target:
            subprocess.run(["lbzip2", "-c", "-n", "2", str(path)], stdout=target, check=True)
    else:
        copies["bz2"].write_bytes(bz2.compress(path.read_bytes()))
    seven = shutil.which("7zz") or shutil.which("7z")
    if seven:
        subprocess.run(
            [seven, "a", "-bd", "-mx=1", "-mmt=2", str(copies["7z"]), str(path)], check=True, stdout=subprocess.DEVNULL
        )
    elif importlib.util.find_spec("py7zr"):
        import py7zr

        with py7zr.SevenZipFile(copies["7z"], "w") as archive:
            archive.write(path, path.name)
    else:
        del copies["7z"]
    return copies


def _timed(function: Callable[..., object], *arguments: object) -> tuple[float, float, object]:
    """Seconds, peak memory (MB) and result of ``function`` run alone in a fresh process."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as executor:
        return executor.submit(_measure, function, *arguments).result()


def _measure(function: Callable[..., object], *arguments: object) -> tuple[float, float, object]:
    """In the fresh process: its own peak (VmHWM: ru_maxrss would keep the parent's, inherited through exec)
    and its children's (the decoding commands, the engine's workers)."""
    started = time.perf_counter()
    result = function(*arguments)
    seconds = time.perf_counter() - started
    status = Path("/proc/self/status").read_text()
    own = int(re.search(r"VmHWM:\s*(\d+)", status).group(1))  # type: ignore[union-attr]
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(own, children) / 1000, result


def iterparse(path: Path) -> int:
    """The floor: expat through ElementTree, every element dropped once read."""
    pages = 0
    for _, element in ElementTree.iterparse(path, events=("end",)):
        if element.tag.endswith("page"):
            pages += 1
        if element.tag.endswith(("page", "revision")):
            element.clear()
    return pages


def decode_python_bz2(path: Path) -> int:
    with bz2.open(path) as stream:
        return sum(len(chunk) for chunk in iter(lambda: stream.read(1 << 20), b""))


def decode_indexed_bzip2(path: Path) -> int:
    import indexed_bzip2

    with indexed_bzip2.open(str(path), parallelization=2) as stream:
        return sum(len(chunk) for chunk in iter(lambda: stream.read(1 << 20), b""))


def decode_command(command: list[str]) -> int:
    return subprocess.run(command, stdout=subprocess.DEVNULL, check=True).returncode


def decode_py7zr(path: Path) -> int:
    from builder.sources.compression import _sevenzip_chunks

    return sum(len(block) for block in _sevenzip_chunks(path))


def decode_libarchive(path: Path) -> int:
    import libarchive

    size = 0
    with libarchive.file_reader(str(path)) as archive:
        for entry in archive:
            size += sum(len(block) for block in entry.get_blocks())
    return size


def decoders(copies: dict[str, Path]) -> dict[str, tuple[Callable[..., object], tuple]]:
    """Every decoder found for the copies, as (function, arguments)."""
    found: dict[str, tuple[Callable[..., object], tuple]] = {"bz2: Python bz2": (decode_python_bz2, (copies["bz2"],))}
    if importlib.util.find_spec("indexed_bzip2"):
        found["bz2: indexed_bzip2, 2 threads"] = (decode_indexed_bzip2, (copies["bz2"],))
    for tool, flags in (("lbzip2", ["-dc", "-n", "2"]), ("bzip2", ["-dc"])):
        if shutil.which(tool):
            found[f"bz2: {tool} command"] = (decode_command, ([tool, *flags, str(copies["bz2"])],))
    if "7z" in copies:
        if importlib.util.find_spec("py7zr"):
            found["7z: py7zr (dump.py's reader)"] = (decode_py7zr, (copies["7z"],))
        if importlib.util.find_spec("libarchive"):
            found["7z: libarchive-c"] = (decode_libarchive, (copies["7z"],))
        for tool in ("7zz", "7z"):
            if shutil.which(tool):
                found[f"7z: {tool} command"] = (decode_command, ([tool, "x", "-so", str(copies["7z"])],))
                break
    return found


def read_only(path: Path) -> int:
    """The revisions as the extraction reads them, none parsed: the cost of our XML reading."""
    return sum(1 for _ in DumpReader(path))


def from_scratch(path: Path) -> int:
    """Every revision parsed on its own: the reference path."""
    stats = ExtractStats()
    found = 0
    for page in DumpReader(path):
        with contextlib.suppress(ExtractionError):
            found += len(extract_images(page.text, page.title, ("File", "Image"), stats))
    return found


def incremental(path: Path) -> int:
    """The same revisions through :class:`~builder.extract.incremental.RevisionExtractor`, as the tasks read them."""
    stats = ExtractStats()
    extractor = RevisionExtractor(("File", "Image"))
    found = 0
    for page in DumpReader(path):
        with contextlib.suppress(ExtractionError):
            found += len(extractor.extract(page.page_id, page.text, page.title, stats))
    return found


def how_extracted(path: Path) -> tuple[IncrementalStats, int, int]:
    """How each revision was extracted, and why those parsed whole were; the revisions and their characters."""
    stats = ExtractStats()
    extractor = RevisionExtractor(("File", "Image"))
    revisions = characters = 0
    for page in DumpReader(path):
        revisions += 1
        characters += len(page.text)
        with contextlib.suppress(ExtractionError):
            extractor.extract(page.page_id, page.text, page.title, stats)
    return extractor.stats, revisions, characters


def print_extracted(path: Path) -> None:
    """The counts of :func:`how_extracted`, and the reasons for the revisions parsed whole."""
    stats, revisions, characters = _timed(how_extracted, path)[2]  # type: ignore[misc]
    print(
        f"\n{revisions:,} revisions: {stats.repeated:,} with a text seen before in the page, {stats.reparsed:,} from "
        f"the chunks their edit touched ({stats.stretches:,} stretches parsed alone, {stats.widened:,} of them "
        f"widened; {stats.moved:,} chunks only moved), {stats.parsed:,} parsed whole; "
        f"{stats.characters / max(1, characters):.1%} of the characters parsed\n"
    )
    print("| parsed whole because | revisions |")
    print("|---|---:|")
    for reason, count in sorted(stats.whole.items(), key=lambda item: -item[1]):
        print(f"| {reason} | {count:,} |")


def plain_copy(source: Path, folder: Path) -> Path:
    """The history as a plain ``.xml`` (a compressed one decompressed into ``folder``): a build cuts such a file
    for its workers, and the floor is measured on the same bytes."""
    opener = {".lzma": lzma.open, ".xz": lzma.open, ".bz2": bz2.open, ".gz": gzip.open}.get(source.suffix)
    if opener is None:
        return source
    target = folder / source.name[: -len(source.suffix)]
    if not target.name.endswith(".xml"):
        target = target.with_name(target.name + ".xml")
    with opener(source) as stream, open(target, "wb") as out:  # type: ignore[operator]
        shutil.copyfileobj(stream, out, 1 << 22)
    return target


def real_history(source: Path, folder: Path) -> None:
    """A real history against its floor: our reading, every revision from scratch, incremental extraction, and the
    local engine's extraction with 1 and 2 workers (a build's extraction stage); then how it was extracted."""
    path = plain_copy(source, folder)
    size = path.stat().st_size / MB
    print(f"\n## {source.name}: a real history, {size:,.0f} MB of XML\n")
    floor, floor_memory, _ = _timed(iterparse, path)
    print("| run | seconds | MB/s of XML | × iterparse | peak MB |")
    print("|---|---:|---:|---:|---:|")
    print(f"| iterparse (floor) | {floor:.2f} | {size / floor:.0f} | 1.00 | {floor_memory:.0f} |")
    rows = [("reader alone (DumpReader, 1 core)", read_only, (path,))]
    rows += [("bronze, from scratch (1 core)", from_scratch, (path,))]
    rows += [("bronze, incremental (1 core)", incremental, (path,))]
    rows += [(f"bronze, engine, {workers} worker(s)", engine, (path, workers, str(folder))) for workers in (1, 2)]
    for name, function, function_arguments in rows:
        seconds, memory, _ = _timed(function, *function_arguments)
        print(f"| {name} | {seconds:.2f} | {size / seconds:.1f} | {seconds / floor:.2f} | {memory:.0f} |")
    print_extracted(path)
    if path != source:
        path.unlink()


def check(path: Path) -> tuple[int, int, int]:
    """Every revision extracted incrementally and from scratch: the revisions, and how many differ (references with
    their positions, the counts added, an error's message), and whose digest differs from the text's."""
    from builder.extract.copies import text_digest

    extractor = RevisionExtractor(("File", "Image"))
    revisions = differ = digests = 0
    for page in DumpReader(path):
        revisions += 1
        ours, theirs = ExtractStats(), ExtractStats()
        try:
            found: object = extractor.extract(page.page_id, page.text, page.title, ours)
        except ExtractionError as error:
            found = str(error)
        else:
            digests += extractor.digest() != text_digest(page.text)
        try:
            expected: object = extract_images(page.text, page.title, ("File", "Image"), theirs)
        except ExtractionError as error:
            expected = str(error)
        differ += (found, ours) != (expected, theirs)
    return revisions, differ, digests


def engine(path: Path, workers: int, folder: str) -> int:
    """Bronze extraction by the local engine, as a build runs it."""
    from builder.engines.local import extract_references

    shards = Path(folder) / f"shards-{workers}"
    shutil.rmtree(shards, ignore_errors=True)
    extraction = extract_references([path], shards, workers=workers, show_progress=False, history=True)
    return extraction.extract.references


_AGAINST_RUN = r"""
import contextlib, json, sys, time
from pathlib import Path
from xml.etree import ElementTree
path, what = Path(sys.argv[1]), sys.argv[2]
started = time.perf_counter()
parsed = None
if what == "iterparse":
    for _, element in ElementTree.iterparse(path, events=("end",)):
        if element.tag.endswith(("page", "revision")):
            element.clear()
else:
    from builder.sources.xml import DumpReader
    if what == "reader":
        sum(1 for _ in DumpReader(path))
    else:
        from builder.extract.incremental import RevisionExtractor
        from builder.extract.wikitext import ExtractionError, ExtractStats
        stats, extractor = ExtractStats(), RevisionExtractor(("File", "Image"))
        for page in DumpReader(path):
            with contextlib.suppress(ExtractionError):
                extractor.extract(page.page_id, page.text, page.title, stats)
        parsed = extractor.stats.parsed
print(json.dumps([time.perf_counter() - started, parsed]))
"""


def against(revisions: int, other: Path, seed: int, real: list[Path], rounds: int = 2) -> None:
    """One long synthesized page, and the real histories, this checkout against ``other``: iterparse, the reader and
    incremental extraction, each in a fresh process importing that checkout's toolkit, alternating, the best of
    ``rounds``; and the revisions each parsed whole."""
    trees = {"this checkout": Path(__file__).resolve().parent.parent, other.name: other.resolve()}
    with tempfile.TemporaryDirectory() as scratch:
        histories = [(f"One page of {revisions:,} revisions", synthesize(Path(scratch), 0, revisions, seed))]
        histories += [(f"{source.name}, a real history", plain_copy(source, Path(scratch))) for source in real]
        for title, path in histories:
            best: dict[tuple[str, str], float] = {}
            parsed: dict[str, int] = {}
            for _ in range(rounds):
                for name, tree in trees.items():
                    for what in ("iterparse", "reader", "incremental"):
                        run = subprocess.run(
                            [sys.executable, "-c", _AGAINST_RUN, str(path), what],
                            capture_output=True,
                            text=True,
                            check=True,
                            cwd=tree,
                            env={**os.environ, "PYTHONPATH": str(tree)},
                        )
                        seconds, whole = json.loads(run.stdout.strip().splitlines()[-1])
                        best[name, what] = min(best.get((name, what), seconds), seconds)
                        if whole is not None:
                            parsed[name] = whole
            size = path.stat().st_size / MB
            print(f"\n## {title}, {size:.0f} MB of XML: best of {rounds}, alternating\n")
            print("| toolkit | iterparse s | reader s | × iterparse | incremental s | × iterparse | parsed whole |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for name in trees:
                floor = best[name, "iterparse"]
                reader, extraction = best[name, "reader"], best[name, "incremental"]
                print(
                    f"| {name} | {floor:.2f} | {reader:.2f} | {reader / floor:.2f} | {extraction:.2f} "
                    f"| {extraction / floor:.2f} | {parsed[name]:,} |"
                )
            path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs=3, default=[4, 12, 30], help="MB of XML of the three dumps")
    parser.add_argument("--long-page", type=int, default=10_000, help="revisions of the long page (largest dump)")
    parser.add_argument("--cores", type=int, default=512, help="cores of the Spark cluster of the projection")
    parser.add_argument("--history-tb", type=float, default=20.0, help="TB of XML of enwiki's full history")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument(
        "--real",
        type=Path,
        nargs="*",
        default=[SHIPPED],
        metavar="FILE",
        help="real histories to measure too (default: the tests' Anarchism history; none if given no file)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check the long page and the real histories: every revision extracted incrementally as from scratch",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="a checkout of another version: only the long page and the real histories, read by both, side by side",
    )
    arguments = parser.parse_args()
    if arguments.check:
        with tempfile.TemporaryDirectory() as scratch:
            paths = [synthesize(Path(scratch), 0, arguments.long_page, arguments.seed)]
            paths += [plain_copy(source, Path(scratch)) for source in arguments.real]
            for path in paths:
                revisions, differ, digests = _timed(check, path)[2]  # type: ignore[misc]
                print(
                    f"{path.name}: {revisions:,} revisions, {differ:,} extracted otherwise than from scratch, "
                    f"{digests:,} digested otherwise than their text"
                )
        return
    if arguments.against is not None:
        against(arguments.long_page, arguments.against, arguments.seed, arguments.real)
        return
    rates: list[float] = []
    sevenzip: list[float] = []  # the fastest .7z decoding, MB/s of XML, per size
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for number, megabytes in enumerate(arguments.sizes):
            long_page = arguments.long_page if number == len(arguments.sizes) - 1 else 0
            path = synthesize(folder, megabytes, long_page, arguments.seed + number)
            size = path.stat().st_size / MB
            copies = compressed_copies(path)
            print(
                f"\n## {path.name}: {size:.1f} MB of XML"
                + (f", one page of {long_page:,} revisions" if long_page else "")
            )
            print(", ".join(f"{kind} {copy.stat().st_size / MB:.1f} MB" for kind, copy in copies.items()) + "\n")
            floor, floor_memory, _ = _timed(iterparse, path)
            print("| run | seconds | MB/s of XML | × iterparse | peak MB |")
            print("|---|---:|---:|---:|---:|")
            print(f"| iterparse (floor) | {floor:.2f} | {size / floor:.0f} | 1.00 | {floor_memory:.0f} |")
            fastest = 0.0
            for name, (function, function_arguments) in decoders(copies).items():
                seconds, memory, _ = _timed(function, *function_arguments)
                if name.startswith("7z"):
                    fastest = max(fastest, size / seconds)
                print(f"| {name} | {seconds:.2f} | {size / seconds:.0f} | {seconds / floor:.2f} | {memory:.0f} |")
            if fastest:
                sevenzip.append(fastest)
            rows = [("reader alone (DumpReader, 1 core)", read_only, (path,))]
            rows += [("bronze, from scratch (1 core)", from_scratch, (path,))]
            rows += [("bronze, incremental (1 core)", incremental, (path,))]
            rows += [(f"bronze, engine, {workers} worker(s)", engine, (path, workers, scratch)) for workers in (1, 2)]
            for name, function, function_arguments in rows:
                seconds, memory, _ = _timed(function, *function_arguments)
                print(f"| {name} | {seconds:.2f} | {size / seconds:.1f} | {seconds / floor:.2f} | {memory:.0f} |")
                if name.endswith("1 worker(s)"):
                    rates.append(size / seconds)
            print_extracted(path)
            for copy in copies.values():
                copy.unlink()
            path.unlink()
        for source in arguments.real:
            real_history(source, folder)
    extract = min(rates)  # MB/s of XML per core, the slowest of the sizes
    decode = min(sevenzip) if sevenzip else float("inf")
    rate = 1 / (1 / extract + 1 / decode)  # one core decodes its .7z and extracts, one after the other
    megabytes = arguments.history_tb * 1e6
    hours = megabytes / (rate * arguments.cores) / 3600
    print(
        f"\n## Projection: enwiki's full history ({arguments.history_tb:g} TB of XML) on {arguments.cores} cores\n\n"
        f"One core extracts {extract:.1f} MB/s of XML (the slowest size, 1 worker) and decodes .7z at {decode:.0f} MB/s"
        f" (the fastest decoder, on the slowest size): 1 / (1/{extract:.1f} + 1/{decode:.0f}) = {rate:.1f}"
        f" MB/s per core. {arguments.history_tb:g} TB = {megabytes:,.0f} MB; {megabytes:,.0f} MB / ({rate:.1f} MB/s ×"
        f" {arguments.cores} cores) = {hours * 3600:,.0f} s = {hours:.1f} h, if every core is kept busy (Wikimedia"
        " ships the history as hundreds of .7z files; a .7z is read by one task, so it needs as many files as cores)."
    )


if __name__ == "__main__":
    main()
