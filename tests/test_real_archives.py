"""Web archives as real tools wrote them (tests/data/web/README.md): ClueWeb09's bare-LF headers, bodies stored
chunked or compressed, wget's bracketed target URIs, ARC files, revisits, wrong lengths in per-record gzip files,
charset labels that are no charsets, pages nested too deep, a page captured twice, and what a build prints."""

from __future__ import annotations

import codecs
import gzip
import html.parser
import json
import re
import shutil
import time
import zlib
from pathlib import Path
from urllib.parse import urljoin

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.web_crawl import SITE, Response, write_records, write_shared_images_crawl
from builder.config import WEB
from builder.engines.local import build
from builder.extract.html import HtmlStats, decode_page
from builder.extract.web import WebResult, WebTask, iter_web_rows
from builder.sources.files import DumpWarning
from builder.sources.kinds import input_kind
from builder.sources.warc import WarcStats, iter_responses
from wikipedia_ipc import main

DATA = Path(__file__).resolve().parent / "data" / "web"


def read(path: Path) -> tuple[list, WarcStats]:
    stats = WarcStats()
    return list(iter_responses(str(path), stats)), stats


def references(path: Path) -> tuple[list[dict], WebResult]:
    from builder.extract.html import HtmlStats

    result = WebResult(WarcStats(), HtmlStats())
    rows = [row for kind, row in iter_web_rows(WebTask(str(path), "", "", inspect=None), result) if kind == "reference"]
    return rows, result


def warcio_html_records(path: Path) -> list[tuple[str, str, bytes]]:
    """(target URI, Content-Type, body as warcio decodes it: de-chunked, content codings undone) of every HTML
    response."""
    from warcio.archiveiterator import ArchiveIterator

    pages = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream, arc2warc=True):
            if record.rec_type != "response" or record.http_headers is None:
                continue
            header = record.http_headers.get_header("Content-Type") or ""
            if header.split(";")[0].strip().lower() == "text/html":
                uri = record.rec_headers.get_header("WARC-Target-URI").strip("<>")
                pages.append((uri, header, record.content_stream().read()))
    return pages


def warcio_html_pages(path: Path) -> list[tuple[str, bytes]]:
    """(target URI, body as warcio decodes it) of every HTML response."""
    return [(uri, body) for uri, _, body in warcio_html_records(path)]


class _AltTexts(html.parser.HTMLParser):
    """The standard library's HTML parser, not the toolkit's: the alt texts of a page's ``<img>`` elements that
    are not blank (whitespace runs made one space) and hold no U+FFFD, of an ``src`` that resolves, against the
    page's URL or its first ``<base href>``, to an http(s) URL and is not a ``data:`` URI."""

    def __init__(self, url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base, self.based, self.texts = url, False, []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "base" and attributes.get("href") is not None and not self.based:
            self.base, self.based = urljoin(self.base, attributes["href"].strip()), True
        if tag != "img":
            return
        text, src = " ".join((attributes.get("alt") or "").split()), (attributes.get("src") or "").strip(" \t\n\r\f")
        if not text or "\ufffd" in text or not src or src[:5].lower() == "data:":
            return
        if urljoin(self.base, src).partition(":")[0].lower() in {"http", "https"}:
            self.texts.append(text)

    handle_startendtag = handle_starttag


def independent_alt_texts(path: Path) -> list[str]:
    """Every HTML response's alt texts, read with warcio and html.parser: the bodies decoded with the charset the
    HTTP header names, else the first 1,024 bytes' ``<meta>`` one, else UTF-8 (bad bytes made U+FFFD)."""

    def codec(label: str | None) -> str | None:
        try:
            return codecs.lookup(label).name if label else None
        except LookupError:
            return None

    texts = []
    for url, header, body in warcio_html_records(path):
        named = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", header, re.IGNORECASE)
        meta = re.search(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", body[:1024], re.IGNORECASE)
        charset = codec(named.group(1) if named else None) or codec(meta.group(1).decode() if meta else None)
        parser = _AltTexts(url)
        parser.feed(body.decode(charset or "utf-8", "replace"))
        parser.close()
        texts.extend(parser.texts)
    return texts


def test_clueweb09_pages_with_bare_lf_headers_are_read_and_decoded() -> None:
    path = DATA / "clueweb09-quirk.warc.gz"
    responses, stats = read(path)
    assert stats.html == len(warcio_html_pages(path)) == 29 and stats.other_types == 0
    # Nutch stored the bodies decoded but kept "Content-Encoding: gzip": used as stored, and counted
    assert stats.bodies_as_stored == 29 and all(r.payload.lstrip().startswith(b"<") for r in responses)
    rows, result = references(path)
    assert result.read.html == 29 and len(rows) == 556
    assert sorted(row["caption"] for row in rows) == sorted(independent_alt_texts(path))  # warcio + html.parser
    page = "http://www.uraharajuku.st/shopdetail/001005000005/019/000/order/"
    assert "headporter" in {row["caption"] for row in rows if row["page"] == page}
    assert any("QRコード" in row["caption"] for row in rows)  # EUC-JP, named in the header, decoded as such


@pytest.mark.parametrize("coding", ["gzip", "brotli"])
def test_bodies_sent_compressed_are_decoded(coding: str) -> None:
    plain, _ = read(DATA / "transfer_compression_none.warc.gz")
    encoded, stats = read(DATA / f"transfer_compression_{coding}.warc.gz")
    assert raw_body(DATA / f"transfer_compression_{coding}.warc.gz") != plain[0].payload  # stored compressed
    assert [r.payload for r in encoded] == [r.payload for r in plain] and plain[0].payload.startswith(b"<html>")
    assert stats.bodies_as_stored == 0 and stats.unsupported_encodings == 0


def raw_body(path: Path) -> bytes:
    """The stored HTTP body of the file's first response, as it is in the archive."""
    data = gzip.decompress(path.read_bytes())
    start = data.index(b"HTTP/1.")
    return data[data.index(b"\r\n\r\n", start) + 4 :].split(b"\r\n\r\nWARC/", 1)[0]


def test_a_chunked_body_loses_its_chunk_framing() -> None:
    path = DATA / "iana-chunked.warc"
    responses, _ = read(path)
    assert b"\r\n1f" in path.read_bytes() or b"Transfer-Encoding: chunked" in path.read_bytes()
    assert [r.payload for r in responses] == [body for _, body in warcio_html_pages(path)]
    assert responses[0].payload.rstrip().endswith(b"</html>")


def test_wget_target_uris_lose_their_angle_brackets() -> None:
    responses, _ = read(DATA / "wget-bad-target-uri.warc.gz")
    assert [r.uri for r in responses] == ["http://example.com/"]
    rows, _ = references(DATA / "aut-issue-514.warc")
    assert {row["caption"] for row in rows} == {"Archiveteam.jpg", "Archivetime.png", "Powered by MediaWiki"}
    assert all(row["page"] == "https://wiki.archiveteam.org/" for row in rows)
    assert all(row["image"].startswith("https://wiki.archiveteam.org/") for row in rows)


def _warcio_counts(path: Path) -> tuple[int, int, int]:
    """HTML and image responses that are successes (2xx), and those that are not, as warcio, another reader, counts
    them (an ARC file converted on the fly)."""
    from warcio.archiveiterator import ArchiveIterator

    kinds, failed = [], 0
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream, arc2warc=True):
            if record.rec_type == "response" and record.http_headers is not None:
                kind = (record.http_headers.get_header("Content-Type") or "").split(";")[0].strip()
                if kind != "text/html" and not kind.startswith("image/"):
                    continue
                if record.http_headers.get_statuscode().startswith("2"):
                    kinds.append(kind)
                else:
                    failed += 1
    return kinds.count("text/html"), sum(kind.startswith("image/") for kind in kinds), failed


def test_an_arc_file_gives_what_its_warc_conversion_gives() -> None:
    arc_rows, arc = references(DATA / "aut-example.arc.gz")
    warc_rows, warc = references(DATA / "aut-example.warc.gz")
    # 11 HTML responses, of which a 404 (robots.txt), a 302 and a 301 are no page's capture (no references either)
    assert (arc.read.html, arc.read.images, arc.read.unsuccessful) == (8, 15, 3)
    assert (warc.read.html, warc.read.images, warc.read.unsuccessful) == (8, 15, 3)
    assert _warcio_counts(DATA / "aut-example.arc.gz") == _warcio_counts(DATA / "aut-example.warc.gz") == (8, 15, 3)
    key = lambda row: (row["page"], row["image"], row["position"], row["kind"], row["caption"])  # noqa: E731
    assert sorted(map(key, arc_rows)) == sorted(map(key, warc_rows)) and len(arc_rows) == 311
    independent = sorted(independent_alt_texts(DATA / "aut-example.warc.gz"))  # warcio + html.parser
    assert independent == sorted(independent_alt_texts(DATA / "aut-example.arc.gz"))
    assert sorted(row["caption"] for row in warc_rows) == independent
    assert arc_rows[0]["record_id"].startswith("<arc:") and arc_rows[0]["date"].startswith("2008-04-30T")
    plain, stats = read(DATA / "warcio-example.arc")
    assert [r.uri for r in plain] == ["http://example.com/"] and stats.html == 1


def test_revisits_are_counted_and_resolved_within_the_file() -> None:
    _, stats = read(DATA / "aut-issue-493-revisits.warc")
    # wend.htm's first capture is a 301 (not read), its 200 later in the file is the page
    assert (stats.html, stats.images, stats.unsuccessful, stats.revisits, stats.revisits_resolved) == (4, 5, 1, 5, 3)
    assert _warcio_counts(DATA / "aut-issue-493-revisits.warc") == (4, 5, 1)


def test_a_wrong_content_length_spoils_its_gzip_member_only(tmp_path: Path) -> None:
    """A real per-record gzip file with one record's Content-Length made wrong: the other records are all read."""
    source = DATA / "wikipedia-mona-lisa.warc.gz"
    members = _members(source.read_bytes())
    whole, _ = read(source)
    first = whole[0].record_id.encode()
    target = next(n for n, member in enumerate(members) if first in zlib.decompress(member, 31))
    text = zlib.decompress(members[target], 31)
    start = text.index(b"Content-Length: ") + 16
    end = text.index(b"\r\n", start)
    for wrong in (int(text[start:end]) + 500, int(text[start:end]) - 500):
        broken = text[:start] + str(wrong).encode() + text[end:]
        path = tmp_path / f"wrong-{wrong}.warc.gz"
        path.write_bytes(b"".join(members[:target]) + gzip.compress(broken) + b"".join(members[target + 1 :]))
        responses, stats = read(path)
        assert len(responses) == len(whole) - 1 and stats.files_stopped == 0
        assert stats.digest_mismatches + stats.truncated_records == 1
        assert [r.record_id for r in responses] == [r.record_id for r in whole if r.record_id != whole[0].record_id]


def _members(data: bytes) -> list[bytes]:
    """A multi-member gzip file's members, as bytes."""
    members, position = [], 0
    while position < len(data):
        decompressor = zlib.decompressobj(31)
        decompressor.decompress(data[position:])
        end = len(data) - len(decompressor.unused_data)
        members.append(data[position:end])
        position = end
    return members


@pytest.mark.parametrize("label", ["base64", "hex", "rot13", "idna", "utf-8\x00", "zlib", "replacement"])
def test_a_charset_label_that_is_no_charset_is_counted_not_raised(label: str) -> None:
    stats = HtmlStats()
    text = decode_page("<p>Crème brûlée</p>".encode(), label, stats)
    assert text == "<p>Crème brûlée</p>" and stats.unknown_charsets == 1 and stats.charset_header == 0


def test_charset_labels_are_read_as_browsers_read_them() -> None:
    stats = HtmlStats()
    assert decode_page(b"\x93quoted\x94", "iso-8859-1", stats) == "\u201cquoted\u201d"  # windows-1252
    assert decode_page(b"<p>x</p>", " UTF-8 ", stats) == "<p>x</p>" and stats.charset_header == 2


def test_a_page_of_a_bad_charset_and_a_deep_page_are_counted_skips_in_a_crawl(tmp_path: Path) -> None:
    deep = b"<html><body>" + b"<div>" * 200_000 + b'<img src="/a.jpg" alt="deep">' + b"</div>" * 200_000
    pages = [
        Response(f"{SITE}/base64.html", b'<p><img src="/a.jpg" alt="a cat on a mat"></p>', "text/html; charset=base64"),
        Response(f"{SITE}/deep.html", deep),
        Response(f"{SITE}/fine.html", b'<p><img src="/a.jpg" alt="a dog on a log"></p>'),
    ]
    crawl = write_records(tmp_path / "crawl.warc.gz", pages)
    started = time.perf_counter()
    rows, result = references(crawl)
    assert time.perf_counter() - started < 60  # a hang would be minutes; the check itself takes milliseconds
    assert [row["caption"] for row in rows] == ["a cat on a mat", "a dog on a log"]
    assert result.html.unknown_charsets == 1 and result.html.too_deep_pages == 1
    assert any(f"{SITE}/deep.html" in problem and "1,024" in problem for problem in result.problems)


def _rows(folder: Path) -> list[dict]:
    files = sorted((folder / "web").glob("*.parquet"))
    return pa.concat_tables([pq.read_table(file) for file in files]).to_pylist()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_shared_images_crawl(tmp_path_factory.mktemp("crawl") / "shared.warc.gz")


def test_a_page_captured_twice_is_read_once(shared: Path, tmp_path: Path, perceptron_available: None) -> None:
    """The crawl given as two files, and one file holding every page twice: the pairs of the crawl given once."""
    again = tmp_path / "again.warc.gz"
    shutil.copy(shared, again)
    doubled = tmp_path / "doubled.warc.gz"
    doubled.write_bytes(shared.read_bytes() * 2)  # gzip members one after the other: every record twice
    options = ["--config", "web", "--tagger", "perceptron", "--workers", "2", "--splits", "none", "--quiet"]
    assert main(["build", str(shared), "--output", str(tmp_path / "once"), *options]) == 0
    once = _rows(tmp_path / "once")
    assert once
    for name, inputs in (("two", [str(shared), str(again)]), ("doubled", [str(doubled)])):
        with pytest.warns(DumpWarning, match="18 later capture\\(s\\) of pages already read skipped"):
            assert main(["build", *inputs, "--output", str(tmp_path / name), *options]) == 0
        rows = _rows(tmp_path / name)
        strip = lambda row: {k: v for k, v in row.items() if k not in ("id", "warc1", "warc2")}  # noqa: E731
        assert [strip(row) for row in rows] == [strip(row) for row in once]
        record = json.loads((tmp_path / name / "web" / "funnel.json").read_text(encoding="utf-8"))
        assert record["skipped"]["later_captures_of_pages"] == 18


def test_a_warc_given_to_a_bare_build_builds_the_web_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    assert input_kind(DATA / "aut-example.arc.gz") == input_kind(DATA / "clueweb09-quirk.warc.gz") == "web"
    code = main(["build", str(DATA / "aut-issue-514.warc"), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0 and (tmp_path / "out" / "web" / "funnel.json").is_file()
    summary = capsys.readouterr().out
    assert "## web: 0 pairs" in summary and "pairs by kind" not in summary  # no empty list of kinds


def test_a_crawl_given_to_a_dump_config_or_mixed_with_a_dump_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from builder.config import GOLD

    crawl = DATA / "wget-urls.warc.gz"
    with pytest.raises(ValueError, match=f"{crawl} is a web crawl .*build it with --configs web"):
        build([str(crawl)], [GOLD], tmp_path / "gold", tagger="perceptron", show_progress=False)
    dump = Path(__file__).resolve().parent.parent / "builder" / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2"
    assert main(["build", str(dump), str(crawl), "--output", str(tmp_path / "mixed")]) == 2
    assert "a build reads one kind of input, not dump and web" in capsys.readouterr().err
    with pytest.raises(ValueError, match="is a MediaWiki dump, but web reads web crawls"):
        build([str(dump)], [WEB], tmp_path / "web", tagger="perceptron", show_progress=False)
    assert not (tmp_path / "gold").exists() and not (tmp_path / "web").exists()


def test_a_web_build_warns_of_what_went_wrong_naming_file_and_record(
    tmp_path: Path, perceptron_available: None
) -> None:
    """Problems are warned of (the console prints them, as a dump build's) and kept in funnel.json."""
    source = DATA / "wikipedia-mona-lisa.warc.gz"
    members = _members(source.read_bytes())
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(b"".join(members[:-1]) + members[-1][:-40])
    with pytest.warns(DumpWarning) as warned:
        assert main(["build", str(cut), "--config", "web", "--output", str(tmp_path / "out"), "--quiet"]) == 0
    messages = [str(warning.message) for warning in warned]
    assert any(message.startswith(f"{cut}: ") and "is cut short" in message for message in messages)
    record = json.loads((tmp_path / "out" / "web" / "funnel.json").read_text(encoding="utf-8"))
    assert any("cut short" in problem for problem in record["problems"])
