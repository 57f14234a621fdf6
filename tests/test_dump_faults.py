"""Bad dumps through the real extraction engine: the verdict never depends on the worker count.

Every bad dump is written here, small, and read with one worker (the whole file in
one process) and with two (multistream files cut into byte ranges read by worker
processes; single-stream bz2 files decompressed by threads). Failures, problems,
counts and the extracted rows must be identical.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import json
import os
import re
import sys
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import wikipedia_ipc
from builder.config import BRONZE, GOLD
from builder.data.make_sample import HEADER, dump_xml, page_xml
from builder.engines.local import build, extract_references
from builder.extract.tasks import plan_tasks
from builder.sources.files import DumpError, DumpWarning, fingerprint

ARTICLES = "enwiki-20240101-pages-articles-multistream.xml.bz2"


def pages(count: int = 40) -> list[str]:
    return [
        page_xml(f"Page {n}", f"Text.\n[[File:Shared.jpg|thumb|Caption number {n} is written here.]]", n)
        for n in range(1, count + 1)
    ]


def multistream(page_list: list[str], header: str | None = None, closing: str = "</mediawiki>\n") -> bytes:
    """A multistream bz2 dump: the header, then one stream per page, then the closing tag."""
    head = header if header is not None else dump_xml([]).partition("</mediawiki>")[0]
    return b"".join(bz2.compress(part.encode("utf-8")) for part in [head, *page_list, closing])


@dataclasses.dataclass
class Verdict:
    """Everything a build reports about its dumps, and the rows it extracted."""

    failures: list[str]
    problems: list[str]
    read: dict[str, int]
    extract: dict[str, int]
    dumps: list[dict[str, str]]
    rows: list[tuple]
    warned: list[str]


def verdict(dumps: list[Path], workers: int, work: Path, history: bool = False) -> Verdict | str:
    """Extract with ``workers``; an error that stops the whole extraction is its message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            extraction = extract_references(dumps, work, workers, show_progress=False, history=history)
        except (DumpError, OSError, ValueError) as error:
            return f"{type(error).__name__}: {error}"
    rows = sorted(
        (row["image"], row["page"], row["page_id"], row["revision_id"], row["position"], row["caption"])
        for shard in extraction.shards
        for row in pq.read_table(shard).to_pylist()
    )
    return Verdict(
        extraction.failures,
        extraction.problems,
        dataclasses.asdict(extraction.read),
        dataclasses.asdict(extraction.extract),
        extraction.dumps,
        rows,
        [str(warning.message) for warning in caught if issubclass(warning.category, DumpWarning)],
    )


def same_verdict(dumps: list[Path], tmp_path: Path, history: bool = False) -> Verdict | str:
    one = verdict(dumps, 1, tmp_path / "one", history)
    two = verdict(dumps, 2, tmp_path / "two", history)
    assert one == two
    return one


def cut_into_ranges(path: Path) -> None:
    """The two-worker run must really read the file in several ranges, or the test proves nothing."""
    tasks, _ = plan_tasks([path], 2, (0,), path.parent / "plan", False)
    assert len(tasks) > 1 and all(task.byte_range is not None for task in tasks)


def good_dump(tmp_path: Path) -> Path:
    path = tmp_path / "enwiki-20240101-pages-articles1.xml"
    path.write_text(dump_xml(pages(5)), encoding="utf-8")
    return path


def test_truncated_multistream_fails_whole_with_the_same_message(tmp_path: Path) -> None:
    data = multistream(pages())
    end = len(data) * 2 // 3
    starts = [len(multistream(pages()[:count], closing="")) - len(bz2.compress(b"")) for count in range(41)]
    path = tmp_path / ARTICLES
    path.write_bytes(data[:end])
    cut_into_ranges(path)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    last_stream = max(start for start in starts if start < end)
    assert result.failures == [
        f"{path}: truncated bz2 data: the data ends at byte {end} inside the bz2 stream at byte {last_stream}"
    ]
    assert result.read["pages"] == 5  # only the good dump's pages count
    assert {row[1] for row in result.rows} == {f"Page {n}" for n in range(1, 6)}


def test_truncated_single_stream_gives_the_byte_offset_with_threads(tmp_path: Path) -> None:
    data = bz2.compress(dump_xml(pages()).encode("utf-8"))
    path = tmp_path / "enwiki-20240101-pages-articles.xml.bz2"
    path.write_bytes(data[:-30])
    result = same_verdict([path], tmp_path)
    assert result == (
        f"DumpError: no dump could be read: {path}: truncated bz2 data: the data ends at byte {len(data) - 30}"
        " inside the bz2 stream at byte 0"
    )


@pytest.mark.parametrize("layout", ["single", "multi"])
def test_trailing_garbage_is_refused_the_same_way(tmp_path: Path, layout: str) -> None:
    data = bz2.compress(dump_xml(pages()).encode("utf-8")) if layout == "single" else multistream(pages())
    path = tmp_path / ARTICLES
    path.write_bytes(data + b"<html>Not found</html>\n")
    if layout == "multi":
        cut_into_ranges(path)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == [
        f"{path}: 23 bytes after the end of the last bz2 stream (from byte {len(data)} on) are not bz2 data"
    ]


def test_garbage_between_streams_names_its_offset(tmp_path: Path) -> None:
    parts = [bz2.compress(part.encode()) for part in [dump_xml([]).partition("</mediawiki>")[0], *pages()]]
    offset = sum(len(part) for part in parts[:20])
    data = b"".join(parts[:20]) + b"JUNK" + b"".join(parts[20:]) + bz2.compress(b"</mediawiki>\n")
    path = tmp_path / ARTICLES
    path.write_bytes(data)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == [
        f"{path}: the data at byte {offset} follows the end of a bz2 stream but is not bz2"
        " (appended data, or a damaged stream header)"
    ]


def test_multistream_missing_its_closing_stream_is_malformed_either_way(tmp_path: Path) -> None:
    path = tmp_path / ARTICLES
    path.write_bytes(multistream(pages(), closing=""))
    cut_into_ranges(path)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    assert len(result.failures) == 1
    assert (
        "malformed XML at line" in result.failures[0]
        and "no element found (last good page: 'Page 40')" in (result.failures[0])
    )


def test_corrupt_stream_is_named_by_its_offset(tmp_path: Path) -> None:
    parts = [bz2.compress(part.encode()) for part in [dump_xml([]).partition("</mediawiki>")[0], *pages()]]
    parts.append(bz2.compress(b"</mediawiki>\n"))
    offset = sum(len(part) for part in parts[:25])
    damaged = bytearray(parts[25])
    damaged[len(damaged) // 2] ^= 0xFF
    parts[25] = bytes(damaged)
    path = tmp_path / ARTICLES
    path.write_bytes(b"".join(parts))
    cut_into_ranges(path)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == [
        f"{path}: corrupt bz2 data in the bz2 stream at byte {offset}:"
        f" the bz2 block that starts in byte {offset + 4} is damaged"  # the stream's only block, after "BZh9"
    ]


def block_starts(data: bytes) -> list[int]:
    """Bit offsets of the bz2 block start markers in ``data``, found the slow, obvious way."""
    bits = bin(int.from_bytes(b"\x01" + data, "big"))[3:]
    marker = bin(0x314159265359)[2:].zfill(48)
    found = []
    position = bits.find(marker)
    while position >= 0:
        found.append(position)
        position = bits.find(marker, position + 1)
    return found


@pytest.mark.parametrize("where", [129, 0.4, 0.8])  # at byte 129 indexed_bzip2 raises ValueError, not RuntimeError
def test_corrupt_single_stream_names_the_damaged_block_and_page(tmp_path: Path, where: float) -> None:
    """One worker decompresses with the bz2 module, two with indexed_bzip2 threads: the same place either way."""
    text = dump_xml([page_xml(f"Page {n}", " ".join(f"w{n * k % 997}" for k in range(900)), n) for n in range(1, 200)])
    data = bz2.compress(text.encode("utf-8"), 1)  # blocks of 100 kB: several blocks, one stream
    damaged_byte = int(where if where > 1 else len(data) * where)
    starts = block_starts(data)
    assert len(starts) > 5
    block = max(start for start in starts if start < damaged_byte * 8 - 80)  # the block holding the damaged byte
    before = bz2.BZ2Decompressor().decompress(data[: block // 8 + 10])  # out once the next block's header is in
    titles = re.findall(r"<title>([^<]*)</title>", before.decode("utf-8"))
    page = f" (the page being read: {titles[-1]!r})" if titles else ""
    damaged = bytearray(data)
    damaged[damaged_byte] ^= 0x55
    path = tmp_path / "enwiki-20240101-pages-articles.xml.bz2"
    path.write_bytes(bytes(damaged))
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == [
        f"{path}: corrupt bz2 data in the bz2 stream at byte 0: the bz2 block that starts in byte {block // 8}"
        f" is damaged{page}"
    ]


def test_long_garbage_after_the_last_stream_is_not_called_truncated(tmp_path: Path) -> None:
    data = bz2.compress(dump_xml(pages()).encode("utf-8"))
    path = tmp_path / "enwiki-20240101-pages-articles.xml.bz2"
    garbage = b"<html>Not found</html>\n" * 1_000_000  # 24 MB: more than the tail the first check looks at
    path.write_bytes(data + garbage)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == [
        f"{path}: {len(garbage):,} bytes after the end of the last bz2 stream"
        f" (from byte {len(data)} on) are not bz2 data"
    ]


def test_streams_that_cut_pages_apart_are_not_cut_points(tmp_path: Path) -> None:
    """Block-wise compressors (pbzip2) write streams that end anywhere, even inside a page."""
    data = dump_xml(pages()).encode("utf-8")
    path = tmp_path / ARTICLES
    path.write_bytes(b"".join(bz2.compress(data[start : start + 700]) for start in range(0, len(data), 700)))
    result = same_verdict([path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == [] and result.problems == [] and len(result.rows) == 40


def test_gzip_named_bz2_is_read_as_gzip(tmp_path: Path) -> None:
    path = tmp_path / "enwiki-20240101-pages-articles.xml.bz2"
    path.write_bytes(gzip.compress(dump_xml(pages()).encode("utf-8")))
    result = same_verdict([path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == [] and result.read["pages"] == 40
    truncated = tmp_path / "enwiki-20240101-pages-articles2.xml.bz2"
    truncated.write_bytes(path.read_bytes()[:-100])
    result = same_verdict([path, truncated], tmp_path / "truncated")
    assert isinstance(result, Verdict)
    assert len(result.failures) == 1 and "articles2.xml.bz2: truncated or corrupt gzip data" in result.failures[0]


def test_non_numeric_ids_skip_the_page_and_the_build_goes_on(tmp_path: Path) -> None:
    bad = pages()
    for number in (1, 12, 30):  # the 12th and 30th pages start ranges or sit inside them
        bad[number - 1] = bad[number - 1].replace(f"<id>{number}</id>", "<id>abc</id>")
    bad[20] = bad[20].replace("<id>2100</id>", "<id>12x</id>")  # a revision id
    path = tmp_path / ARTICLES
    path.write_bytes(multistream(bad))
    cut_into_ranges(path)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == []
    assert (result.read["malformed_pages"], result.read["malformed_revisions"]) == (3, 1)
    assert result.read["pages"] == 45
    assert len(result.rows) == 5 + 40 - 4
    assert result.problems[0] == (
        f"{path}: page at line 1 of the bz2 stream at byte {len(multistream([], closing='')) - 14} ('Page 1') skipped:"
        " its <id> 'abc' is not a number (before any good page)"
    )
    assert "('Page 12') skipped: its <id> 'abc' is not a number (last good page: 'Page 11')" in result.problems[1]
    assert "a revision of page 'Page 21' (the page at line 1 of the bz2 stream at byte" in result.problems[2]
    assert result.problems[2].endswith(
        "; <timestamp> 2024-01-01T00:00:00Z) skipped: its <id> '12x' is not a number (last good page: 'Page 20')"
    )
    assert result.warned == result.problems


def test_pages_without_title_are_counted_with_the_last_good_title(tmp_path: Path) -> None:
    bad = pages()
    for number in (8, 9, 25):
        bad[number - 1] = bad[number - 1].replace(f"<title>Page {number}</title>", "<title> </title>")
    bad[30] = bad[30].replace("    <title>Page 31</title>\n", "")
    path = tmp_path / ARTICLES
    path.write_bytes(multistream(bad))
    cut_into_ranges(path)
    result = same_verdict([path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.read["malformed_pages"] == 4
    assert [problem.rpartition("(")[2] for problem in result.problems] == [
        "last good page: 'Page 7')",
        "last good page: 'Page 7')",
        "last good page: 'Page 24')",
        "last good page: 'Page 30')",
    ]
    assert all("skipped: it has no title" in problem for problem in result.problems)


def test_wrong_root_and_text_outside_pages_are_counted(tmp_path: Path) -> None:
    stray = pages()
    stray[4] += "some stray text\n"
    stray[19] = "more stray text\n" + stray[19]
    stray[33] += "  <notapage>x</notapage>\n"
    header = HEADER.replace("{file_namespace}", "File").replace("<mediawiki ", "<wiki ")
    path = tmp_path / "enwiki-20240101-pages-articles-multistream.xml.bz2"
    path.write_bytes(multistream(stray, header, "</wiki>\n"))
    cut_into_ranges(path)
    result = same_verdict([path], tmp_path)
    assert isinstance(result, Verdict)
    assert result.failures == []
    assert (result.read["wrong_root_element"], result.read["content_outside_pages"]) == (1, 3)
    assert result.problems[0] == f"{path}: the root element is <wiki>, not <mediawiki> (line 1) (before any good page)"
    page_5_stream = len(multistream(stray[:4], header, "")) - len(bz2.compress(b""))
    assert f"text outside the pages after line 18 of the bz2 stream at byte {page_5_stream} " in result.problems[1]
    assert result.problems[1].endswith("(last good page: 'Page 5')")
    assert "element <notapage> outside the pages at line" in result.problems[3]
    assert len(result.rows) == 40


def test_entities_expat_leaves_out_are_counted_with_their_place(tmp_path: Path) -> None:
    """Behind a DTD, an undefined entity is not an error for expat, and external ones are never loaded."""
    doctype = '<!DOCTYPE mediawiki SYSTEM "export.dtd" [<!ENTITY secret SYSTEM "/etc/hostname">]>\n'
    entities = pages()
    entities[4] = entities[4].replace("Text.", "Text &secret;.")
    entities[21] = entities[21].replace("Caption number 22", "Caption &foo; number 22")
    header = doctype + dump_xml([]).partition("</mediawiki>")[0]
    path = tmp_path / ARTICLES
    path.write_bytes(multistream(entities, header))
    cut_into_ranges(path)
    result = same_verdict([path], tmp_path)
    assert isinstance(result, Verdict)
    starts = [len(multistream(entities[:count], header, closing="")) - len(bz2.compress(b"")) for count in (4, 21)]
    lines = [
        text.partition(entity)[0].count("\n") + 1
        for text, entity in ((entities[4], "&secret;"), (entities[21], "&foo;"))
    ]
    assert result.problems == [
        f"{path}: the external DTD part 'export.dtd' at line 1 is not loaded: what it defines is left out"
        " (before any good page)",
        f"{path}: external entity &secret; ('/etc/hostname') at line {lines[0]} of the bz2 stream at byte {starts[0]},"
        " in page 'Page 5' (id 5): not loaded, left out (last good page: 'Page 4')",
        f"{path}: entity &foo; at line {lines[1]} of the bz2 stream at byte {starts[1]}, in page 'Page 22' (id 22):"
        " not defined, left out (last good page: 'Page 21')",
    ]
    assert result.warned == result.problems
    assert result.read["entities_left_out"] == 3
    captions = {row[1]: row[5] for row in result.rows}
    assert captions["Page 22"] == "Caption number 22 is written here."  # what expat gave: the entity left out


def test_an_undefined_entity_without_a_dtd_fails_the_dump_at_its_place(tmp_path: Path) -> None:
    undefined = pages()
    undefined[21] = undefined[21].replace("Caption number 22", "Caption &foo; number 22")
    path = tmp_path / ARTICLES
    path.write_bytes(multistream(undefined))
    cut_into_ranges(path)
    result = same_verdict([good_dump(tmp_path), path], tmp_path)
    assert isinstance(result, Verdict)
    start = len(multistream(undefined[:21], closing="")) - len(bz2.compress(b""))
    before, _, _ = undefined[21].partition("&foo;")
    line, column = before.count("\n") + 1, len(before.rpartition("\n")[2])
    assert result.failures == [
        f"{path}: malformed XML at line {line}, column {column} of the bz2 stream at byte {start}: undefined entity"
        " (last good page: 'Page 21')"
    ]


def test_a_directory_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "dumps"
    folder.mkdir()
    assert same_verdict([folder], tmp_path) == f"IsADirectoryError: {folder} is a directory, not a dump file"
    assert wikipedia_ipc.main(["build", str(folder), "--output", str(tmp_path / "out"), "--quiet"]) == 2
    assert f"error: {folder} is a directory, not a dump file" in capsys.readouterr().err


def test_bad_page_beside_a_good_dump_builds_both(tmp_path: Path, perceptron_available: None) -> None:
    bad = tmp_path / "enwiki-20240101-pages-articles2.xml.bz2"
    bad.write_bytes(multistream([page.replace("<id>3</id>", "<id>abc</id>") for page in pages()]))
    records = []
    for workers in (1, 2):
        out = tmp_path / f"out{workers}"
        with pytest.warns(DumpWarning, match=r"articles2\.xml\.bz2: page at .* \('Page 3'\) skipped"):
            build([good_dump(tmp_path), bad], [GOLD], out, tagger="perceptron", workers=workers, show_progress=False)
        record = json.loads((out / "gold" / "funnel.json").read_text())
        records.append({key: record[key] for key in ("failures", "problems", "pages", "skipped", "funnel", "dumps")})
    assert records[0] == records[1]
    assert records[0]["skipped"]["malformed_pages"] == 1 and records[0]["failures"] == []
    assert records[0]["pages"] == 45
    assert [dump["kind"] for dump in records[0]["dumps"]] == ["articles", "articles"]
    assert "dump date 20240101, kind: articles" in (tmp_path / "out1" / "README.md").read_text()


def invalid_utf8_pages() -> list[bytes]:
    """Pages with bytes that are not UTF-8: in a caption (3), an alt text (12) and page text (25)."""
    encoded = [page.encode("utf-8") for page in pages()]
    encoded[2] = encoded[2].replace(b"number 3 is", b"number 3 \xff\xfe is")
    encoded[11] = encoded[11].replace(b"|thumb|", b"|thumb|alt=An \xc3 alt|")
    encoded[24] = encoded[24].replace(b"Text.", b"Text \x80.")
    return encoded


def test_invalid_utf8_is_placed_and_its_captions_dropped(tmp_path: Path) -> None:
    encoded = invalid_utf8_pages()
    parts = [bz2.compress(dump_xml([]).partition("</mediawiki>")[0].encode("utf-8"))]
    parts += [bz2.compress(page) for page in encoded] + [bz2.compress(b"</mediawiki>\n")]
    path = tmp_path / ARTICLES
    path.write_bytes(b"".join(parts))
    cut_into_ranges(path)
    result = same_verdict([path], tmp_path)
    assert isinstance(result, Verdict)
    streams = [sum(len(part) for part in parts[:number]) for number in range(len(parts))]
    at = [encoded[2].index(b"\xff"), encoded[11].index(b"\xc3"), encoded[24].index(b"\x80")]
    assert result.problems == [
        f"{path}: 2 invalid UTF-8 bytes at decompressed byte {at[0]} of the bz2 stream"
        f" at byte {streams[3]}, in page 'Page 3' (id 3): replaced by U+FFFD (last good page: 'Page 2')",
        f"{path}: 1 invalid UTF-8 byte at decompressed byte {at[1]} of the bz2 stream"
        f" at byte {streams[12]}, in page 'Page 12' (id 12): replaced by U+FFFD (last good page: 'Page 11')",
        f"{path}: 1 invalid UTF-8 byte at decompressed byte {at[2]} of the bz2 stream"
        f" at byte {streams[25]}, in page 'Page 25' (id 25): replaced by U+FFFD (last good page: 'Page 24')",
    ]
    assert result.warned == result.problems
    assert result.read["invalid_utf8_bytes"] == 4
    assert result.extract["invalid_utf8_captions"] == 2  # the caption of page 3 and the alt text of page 12
    captions = {row[1]: row[5] for row in result.rows}
    assert captions["Page 3"] == "" and captions["Page 12"] == "Caption number 12 is written here."
    assert captions["Page 25"] == "Caption number 25 is written here."
    assert not any("\ufffd" in row[5] for row in result.rows)


def test_resume_rereads_a_dump_edited_to_the_same_size(tmp_path: Path) -> None:
    path = tmp_path / "enwiki-20240101-pages-articles.xml"
    path.write_text(dump_xml(pages(3)), encoding="utf-8")
    old_fingerprint = fingerprint(path)
    first = extract_references([path], tmp_path / "work", show_progress=False)
    captions = {row["caption"] for row in pq.read_table(first.shards).to_pylist()}
    assert "Caption number 2 is written here." in captions
    before = path.stat()
    path.write_text(dump_xml(pages(3)).replace("number 2 is", "number 2 IS"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same time: only the content differs
    assert fingerprint(path) != old_fingerprint
    assert path.stat().st_size == before.st_size
    second = extract_references([path], tmp_path / "work", show_progress=False)
    captions = {row["caption"] for row in pq.read_table(second.shards).to_pylist()}
    assert "Caption number 2 IS written here." in captions and "Caption number 2 is written here." not in captions


def history_pages() -> list[str]:
    return [page_xml(f"Page {n}", [f"first {n}", f"second {n}"], n) for n in range(1, 4)]


def test_bronze_from_a_pages_articles_dump_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "enwiki-20240101-pages-articles.xml"
    path.write_text(dump_xml(history_pages()), encoding="utf-8")
    with pytest.raises(ValueError, match=r"pages-articles\.xml: the file name says it holds the latest revisions"):
        build([path], [BRONZE], tmp_path / "out", tagger="perceptron", show_progress=False)
    history = tmp_path / "enwiki-20240101-pages-meta-history1.xml"
    history.write_text(dump_xml(history_pages()), encoding="utf-8")
    with pytest.raises(ValueError, match=r"history1\.xml: the file name says it holds the full edit history"):
        build([history], [GOLD], tmp_path / "out", tagger="perceptron", show_progress=False)


@pytest.mark.parametrize("history", [False, True])
def test_a_dump_whose_name_does_not_tell_gets_its_kind_from_its_content(tmp_path: Path, history: bool) -> None:
    several = tmp_path / "several.xml"
    several.write_text(dump_xml(history_pages()), encoding="utf-8")
    single = tmp_path / "single.xml"
    single.write_text(dump_xml(pages(6)[3:]), encoding="utf-8")  # pages 4–6: ids of their own, not copies
    result = same_verdict([several, single], tmp_path, history)
    assert isinstance(result, Verdict)
    assert [dump["kind"] for dump in result.dumps] == ["history", "articles"]
    if history:
        assert result.warned == [f"{single}: no page has more than one revision: this is not an edit history, "
                                 "so bronze from it holds no caption rewrites"]  # fmt: skip
    else:
        assert result.warned == [f"{several}: 3 pages have several revisions: this is an edit history "
                                 "(pages-meta-history), and every revision was read as a page"]  # fmt: skip


def test_spark_local_workers_run_the_drivers_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_shared_spark: None
) -> None:
    # the engine's own session, made here (the run's shared one is stopped first, and made again after)
    from builder.engines.spark import build_spark
    from builder.engines.spark.session import LOCAL_JVM_OPTIONS, PYTHON_WORKER_MEMORY, spark_session

    monkeypatch.setenv("PYSPARK_PYTHON", "unset below")  # so that the test's end restores the environment
    monkeypatch.delenv("PYSPARK_PYTHON")
    session = spark_session(2)
    try:
        executables = session.sparkContext.parallelize(range(4), 2).map(lambda _: sys.executable).collect()
        # a local session's shuffles get the master's cores, and its workers room for a tagging model
        conf = session.sparkContext.getConf()
        assert conf.get("spark.default.parallelism") == conf.get("spark.sql.shuffle.partitions") == "2"
        assert conf.get("spark.python.worker.memory") == PYTHON_WORKER_MEMORY
        # and its JVM (the executors') compiles with the first JIT tier only: the option reached the JVM's start
        runtime = session.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()  # noqa: SLF001
        assert LOCAL_JVM_OPTIONS in list(runtime.getInputArguments())
        grouped = session.sparkContext.parallelize(range(8), 8).map(lambda n: (n % 3, n)).groupByKey()
        assert grouped.getNumPartitions() == 2
        dump = good_dump(tmp_path)
        report = build_spark([dump], [GOLD], tmp_path / "out", tagger="perceptron", workers=2, spark=session)
    finally:
        session.stop()
    assert set(executables) == {sys.executable}
    assert report.extraction.seconds > 0  # measured, not a placeholder


def test_a_local_master_s_cores_are_read_from_its_name() -> None:
    from builder.engines.spark.session import _local_cores

    assert [_local_cores(master, 2) for master in ("local", "local[3]", "local[4,2]")] == [1, 3, 4]
    assert _local_cores("local[*]", 2) == (os.cpu_count() or 2)


def index_lines(page_list: list[str]) -> list[bytes]:
    """A correct multistream index for :func:`multistream`: one stream per page, ``offset:page_id:title``."""
    parts = [bz2.compress(part.encode("utf-8")) for part in [dump_xml([]).partition("</mediawiki>")[0], *page_list]]
    offsets = [sum(len(part) for part in parts[:number]) for number in range(1, len(parts))]
    return [f"{offset}:{number}:Page {number}\n".encode() for number, offset in enumerate(offsets, 1)]


def bad_index(kind: str, lines: list[bytes], size: int) -> tuple[bytes, str]:
    """An index damaged in one way, and what the warning must say about it."""
    good = bz2.compress(b"".join(lines))
    if kind == "truncated":
        return good[:-20], "truncated bz2 data after line"
    if kind == "not bz2":
        return gzip.compress(b"".join(lines)), "not bz2 data from its first byte (Invalid data stream)"
    if kind == "empty":
        return b"", "the index file is empty"
    if kind == "no lines":
        return bz2.compress(b""), "the index lists no bz2 stream"
    if kind == "garbage line":
        return bz2.compress(b"".join(lines[:7]) + b"<html>\n" + b"".join(lines[7:])), (
            ":8: expected 'offset:page_id:title', got '<html>'"
        )
    offset = int(lines[10].partition(b":")[0])
    if kind == "out of order":
        lines[10], lines[11] = lines[11], lines[10]
        return bz2.compress(b"".join(lines)), f":12: offset {offset} comes after offset"
    if kind == "out of range":
        lines[10] = f"{size + 5}:11:Page 11\n".encode()
        return bz2.compress(b"".join(lines)), f":11: offset {size + 5} is beyond the end of"
    assert kind == "not a stream start"
    lines[10] = f"{offset + 3}:11:Page 11\n".encode()
    return bz2.compress(b"".join(lines)), f":11: offset {offset + 3} is not the start of a bz2 stream in"


@pytest.mark.parametrize(
    "kind",
    ["truncated", "not bz2", "empty", "no lines", "garbage line", "out of order", "out of range", "not a stream start"],
)
def test_a_bad_index_file_is_ignored_with_a_warning(tmp_path: Path, kind: str) -> None:
    path = tmp_path / ARTICLES
    path.write_bytes(multistream(pages()))
    index = tmp_path / ARTICLES.replace("multistream", "multistream-index").replace(".xml.bz2", ".txt.bz2")
    index.write_bytes(bz2.compress(b"".join(index_lines(pages()))))
    good = [verdict([path], workers, tmp_path / f"good{workers}") for workers in (1, 2, 3)]
    assert all(isinstance(result, Verdict) and result.warned == [] for result in good)
    assert len(good[0].rows) == 40  # type: ignore[union-attr]
    cut_into_ranges(path)
    data, what = bad_index(kind, index_lines(pages()), path.stat().st_size)
    index.write_bytes(data)
    for workers, expected in zip((1, 2, 3), good, strict=True):
        result = verdict([path], workers, tmp_path / f"bad{workers}")
        assert isinstance(result, Verdict) and isinstance(expected, Verdict)
        assert (result.failures, result.problems, result.read, result.extract, result.rows) == (
            expected.failures,
            expected.problems,
            expected.read,
            expected.extract,
            expected.rows,
        )
        if workers > 1:  # one worker reads the file whole and never needs the index
            assert len(result.warned) == 1 and result.warned[0].startswith(str(index))
            assert what in result.warned[0]
            assert result.warned[0].endswith("; the bz2 streams are found by scanning the dump instead")
    cut_into_ranges(path)


def test_resume_reads_a_part_again_when_its_counts_were_cut_short(tmp_path: Path) -> None:
    path = good_dump(tmp_path)
    first = extract_references([path], tmp_path / "work", show_progress=False)
    (counts,) = (tmp_path / "work").glob("*.json")
    counts.write_text(counts.read_text()[:20])  # as if killed while writing it
    second = extract_references([path], tmp_path / "work", show_progress=False)
    assert second.read == first.read and second.extract == first.extract
    assert json.loads(counts.read_text())["read"]["pages"] == 5


def test_a_killed_worker_ends_the_build_with_an_error(tmp_path: Path) -> None:
    import multiprocessing
    import signal
    import threading

    path = tmp_path / ARTICLES
    long_text = "Words and more words. " * 2000
    path.write_bytes(multistream([page_xml(f"Page {n}", long_text, n) for n in range(1, 400)]))
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            extract_references([path], tmp_path / "work", 2, show_progress=False)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the test thread
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    while thread.is_alive() and not multiprocessing.active_children():
        thread.join(0.01)
    for child in multiprocessing.active_children():
        os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
    thread.join()
    assert isinstance(outcome[0], DumpError) and "a worker process ended abruptly" in str(outcome[0])
