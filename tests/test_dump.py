"""Stage 1: reading dumps, including the bad ones."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import pytest

from builder.data.make_sample import page_xml
from builder.sources.files import DumpError, DumpWarning
from builder.sources.multistream import split_ranges, stream_offsets
from builder.sources.xml import DumpReader, iter_pages, read_siteinfo

PAGES = [
    page_xml("Alpha", "Alpha text [[File:A.jpg|thumb|An alpha]]", 1),
    page_xml("Talk:Alpha", "talk", 2, namespace=1),
    page_xml("Beta", "#REDIRECT [[Alpha]]", 3, redirect="Alpha"),
    page_xml("Gamma", "Gamma & <b>bold</b> text", 4),
    page_xml("Delta", "Delta text", 5),
]


def test_reads_articles_and_counts_what_it_skips(write_dump) -> None:
    reader = DumpReader(write_dump(PAGES))
    pages = list(reader)
    assert [page.title for page in pages] == ["Alpha", "Gamma", "Delta"]
    assert pages[1].text == "Gamma & <b>bold</b> text"
    assert (pages[0].page_id, pages[0].revision_id, pages[0].namespace) == (1, 100, 0)
    assert (reader.stats.pages, reader.stats.skipped_namespace, reader.stats.skipped_redirect) == (5, 1, 1)


def test_namespace_choice_and_redirects_on_request(write_dump) -> None:
    path = write_dump(PAGES)
    titles = [page.title for page in iter_pages(path, namespaces=None, skip_redirects=False)]
    assert titles == ["Alpha", "Talk:Alpha", "Beta", "Gamma", "Delta"]


def test_plain_and_gzip_files(write_dump, tmp_path: Path) -> None:
    plain = write_dump(PAGES, name="dump.xml")
    packed = tmp_path / "dump.xml.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert [p.title for p in iter_pages(plain)] == [p.title for p in iter_pages(packed)] == ["Alpha", "Gamma", "Delta"]


def test_history_dump_gives_one_record_per_revision(write_dump) -> None:
    path = write_dump([page_xml("Alpha", "text", 1, revisions=3)])
    assert [page.revision_id for page in iter_pages(path)] == [100, 101, 102]


def test_siteinfo_gives_localized_file_namespace(write_dump) -> None:
    info = read_siteinfo(write_dump(PAGES, file_namespace="Datei"))
    assert info.dbname == "enwiki"
    assert info.namespaces[6] == "Datei"


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.xml.bz2"):
        list(iter_pages(tmp_path / "nope.xml.bz2"))


def test_truncated_bz2_is_refused_before_reading_with_its_byte_offset(write_dump) -> None:
    path = write_dump(PAGES * 40)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    pages = iter_pages(path)
    with pytest.raises(DumpError, match=rf"xml\.bz2: truncated bz2 data: the data ends at byte {len(data) // 2} "):
        next(pages)


def test_malformed_xml_names_line_and_column(write_dump) -> None:
    broken = page_xml("Alpha", "text", 1).replace("</title>", "</titel>")
    with pytest.raises(DumpError, match=r"malformed XML at line 21, column \d+: mismatched tag \(before any good"):
        list(iter_pages(write_dump([broken])))


def test_invalid_utf8_is_replaced_and_counted(write_dump) -> None:
    path = write_dump(PAGES, name="dump.xml")
    path.write_bytes(path.read_bytes().replace(b"Gamma &amp;", b"Gamma \xff\xfe &amp;"))
    reader = DumpReader(path)
    texts = {page.title: page.text for page in reader}
    assert texts["Gamma"].startswith("Gamma \ufffd\ufffd &")
    assert reader.stats.invalid_utf8_bytes == 2


def test_multistream_ranges_give_the_same_pages(write_dump) -> None:
    pages = [page_xml(f"Page {n}", f"text {n}", n) for n in range(1, 30)]
    path = write_dump(pages, multistream=True)
    offsets = stream_offsets(path)
    assert len(offsets) == 31  # header, 29 pages, closing tag
    ranges = split_ranges(path, 4)
    assert len(ranges) > 1 and ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    whole = [page.title for page in iter_pages(path)]
    pieces = [page.title for byte_range in ranges for page in iter_pages(path, byte_range=byte_range)]
    assert pieces == whole == [f"Page {n}" for n in range(1, 30)]


def test_multistream_index_file_is_used(write_dump, tmp_path: Path) -> None:
    pages = [page_xml(f"Page {n}", f"text {n}", n) for n in range(1, 6)]
    path = write_dump(pages, name="enwiki-20240101-pages-articles-multistream.xml.bz2", multistream=True)
    scanned = stream_offsets(path)
    index = tmp_path / "enwiki-20240101-pages-articles-multistream-index.txt.bz2"
    index.write_bytes(bz2.compress("".join(f"{o}:{n}:Page {n}\n" for n, o in enumerate(scanned[1:-1], 1)).encode()))
    assert stream_offsets(path) == scanned[:-1]  # the index lists page streams only
    index.write_bytes(bz2.compress(b"garbage line\n"))
    with pytest.warns(DumpWarning, match=r"index\.txt\.bz2:1: expected 'offset:page_id:title'.*found by scanning"):
        assert stream_offsets(path) == scanned


def test_parallel_decompression_of_a_single_stream_file(write_dump) -> None:
    pages = [page_xml(f"Page {n}", f"text {n} " * 200, n) for n in range(1, 200)]
    path = write_dump(pages)
    assert stream_offsets(path) == [0]
    sequential = [(p.title, p.text) for p in iter_pages(path)]
    assert [(p.title, p.text) for p in DumpReader(path, decompress_threads=2)] == sequential
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    place = r"corrupt bz2 data in the bz2 stream at byte 0: the bz2 block that starts in byte 4 is damaged$"
    with pytest.raises(DumpError, match=place):
        list(DumpReader(path, decompress_threads=2))
    with pytest.raises(DumpError, match=place):
        list(DumpReader(path))


def test_7z_history_dumps_are_streamed(write_dump, tmp_path: Path) -> None:
    import py7zr

    plain = write_dump([page_xml("Alpha", ["first text", "second text"], 1)], name="dump.xml")
    archive = tmp_path / "enwiki-20240101-pages-meta-history1.xml.7z"
    with py7zr.SevenZipFile(archive, "w") as writer:
        writer.write(plain, arcname="enwiki-20240101-pages-meta-history1.xml")
    assert [(p.revision_id, p.text) for p in iter_pages(archive)] == [(100, "first text"), (101, "second text")]
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match=r"history1\.xml\.7z: cannot read the 7z archive"):
        list(iter_pages(archive))


def test_iter_pages_warns_about_what_it_skips(write_dump) -> None:
    pages = [PAGES[0], PAGES[3].replace("<id>4</id>", "<id>four</id>"), PAGES[4]]
    with pytest.warns(DumpWarning, match=r"page at line \d+ \('Gamma'\) skipped: its <id> 'four' is not a number"):
        titles = [page.title for page in iter_pages(write_dump(pages))]
    assert titles == ["Alpha", "Delta"]


def test_reading_ahead_in_a_thread_gives_the_same_pages_and_stops_with_its_reader(write_dump) -> None:
    """The bz2 data is decompressed ahead of the parser; a reader that stops early stops the thread too."""
    import sys
    import threading

    pages = [page_xml(f"Page {n}", " ".join(f"word{n * k}" for k in range(2000)), n) for n in range(1, 60)]
    path = write_dump(pages)
    ahead = [(page.title, page.text) for page in DumpReader(path, read_ahead=True)]
    assert ahead == [(page.title, page.text) for page in DumpReader(path, read_ahead=False)]
    switch = sys.getswitchinterval()
    reader = iter(DumpReader(path, read_ahead=True))
    next(reader)
    assert sys.getswitchinterval() <= 0.0005  # the GIL is handed over often while the thread may need it
    reader.close()
    assert not any(thread.name.startswith("decompress:") for thread in threading.enumerate())
    assert sys.getswitchinterval() == switch


@pytest.mark.parametrize("name", ["dump.xml", "dump.xml.bz2"])
def test_a_read_that_meets_invalid_bytes_late_hands_on_each_page_once_and_counts_once(write_dump, name) -> None:
    """The first read trusts expat with the bytes; one that is not UTF-8 makes it read again, checked: the pages
    already handed on are not handed on again, and counts, problems and warnings are not doubled."""
    filler = " ".join(f"word{k}" for k in range(3000))
    pages = [page_xml(f"Page {n}", f"{filler} [[File:P{n}.jpg|thumb|Picture {n}]]", n) for n in range(1, 40)]
    pages[3] = pages[3].replace("<id>4</id>", "<id>four</id>")  # a problem before the invalid bytes
    pages[30] = pages[30].replace("Picture 31", "Picture \xff31")
    clean = write_dump(pages, name="clean.xml")
    path = write_dump(pages, name=name)
    raw = path.read_bytes() if name.endswith(".xml") else bz2.decompress(path.read_bytes())
    raw = raw.replace("Picture \xff31".encode(), b"Picture \xff31")  # the UTF-8 of U+00FF made one invalid byte
    raw = raw.replace(b"Picture 35", b"Picture \xe2\x82 35")  # and a character cut short
    path.write_bytes(raw if name.endswith(".xml") else bz2.compress(raw))
    with pytest.warns(DumpWarning) as warned:
        titles = [page.title for page in iter_pages(path)]
    first = DumpReader(clean)
    expected = [page.title for page in first]
    assert titles == expected and len(titles) == 38
    reader = DumpReader(path)
    read = list(reader)
    assert [page.title for page in read] == expected
    assert "Picture \ufffd31" in read[29].text
    assert reader.stats.invalid_utf8_bytes == 3
    assert reader.stats.malformed_pages == first.stats.malformed_pages == 1
    assert reader.stats.pages == first.stats.pages
    messages = [str(warning.message) for warning in warned]
    assert len(messages) == len(set(messages)) == len(reader.problems) == 3  # the page, and two places of bad bytes
