"""WARC sources (builder.sources.warc) and a WARC file as a unit of work (builder.extract.web).

Real records: Common Crawl's capture of an Aragonese Wikipedia page (tests/data/web). Other crawls are
written here with warcio's WARCWriter, their images made with Pillow; damaged files are cut or
altered copies of those.
"""

from __future__ import annotations

import gzip
import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fastwarc import ArchiveIterator, WarcRecordType

from benchmarks.web_crawl import SITE, Response, image_payload, image_url, write_records, write_test_crawl
from builder.extract.web import WebTask, payload_digest, run_web_task, web_task
from builder.sources.mirror import Network
from builder.sources.warc import WarcError, WarcStats, expand_warc_inputs, iter_responses

REAL = Path(__file__).parent / "data" / "web" / "whirlwind.warc.gz"
REAL_URI = "https://an.wikipedia.org/wiki/Escopete"
REAL_ID = "<urn:uuid:2aabeff2-67f5-4608-8466-e87c6296e2b6>"
FAST = Network(timeout=5, attempts=3, backoff=0.05)


def read(source: str | Path, **options: object) -> tuple[list, WarcStats]:
    stats = WarcStats()
    return list(iter_responses(str(source), stats, **options)), stats  # type: ignore[arg-type]


def member_bytes(path: Path) -> list[bytes]:
    """The gzip members of a file written one record per member, split where each starts."""
    data = path.read_bytes()
    starts = [record.stream_pos for record in ArchiveIterator(str(path), record_types=WarcRecordType.any_type)]
    return [data[start:end] for start, end in zip(starts, [*starts[1:], len(data)], strict=True)]


def test_the_real_capture_gives_its_page_with_record_id_date_and_charset() -> None:
    responses, stats = read(REAL)
    assert [(r.uri, r.record_id, r.date, r.content_type, r.charset) for r in responses] == [
        (REAL_URI, REAL_ID, "2024-05-18T01:58:10Z", "text/html", "UTF-8")
    ]
    assert responses[0].payload.startswith(b"<!DOCTYPE html>")
    assert (stats.files, stats.records, stats.responses, stats.html, stats.skipped) == (1, 4, 1, 1, 0)
    assert stats.bytes == REAL.stat().st_size


def test_plain_and_gzip_give_the_same_records(tmp_path: Path) -> None:
    plain = tmp_path / "whirlwind.warc"
    plain.write_bytes(gzip.decompress(REAL.read_bytes()))
    gz, _ = read(REAL)
    flat, stats = read(plain)
    assert [(r.record_id, r.payload) for r in flat] == [(r.record_id, r.payload) for r in gz]
    assert stats.bytes == plain.stat().st_size


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_warc_versions(tmp_path: Path, version: str) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp_path / f"v{version}.warc.gz"
    with path.open("wb") as stream:
        writer = WARCWriter(stream, gzip=True, warc_version=version)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        body = io.BytesIO(b"<html><body>x</body></html>")
        writer.write_record(writer.create_warc_record(f"{SITE}/v", "response", payload=body, http_headers=headers))
    assert f"WARC/{version}".encode() in gzip.decompress(path.read_bytes())
    responses, _ = read(path)
    assert [r.uri for r in responses] == [f"{SITE}/v"]


def test_a_folder_and_a_listing_expand_in_order(tmp_path: Path) -> None:
    folder = tmp_path / "crawl"
    folder.mkdir()
    for name in ["b.warc.gz", "a.warc", "notes.txt"]:
        (folder / name).write_bytes(b"")
    assert expand_warc_inputs([folder]) == [str(folder / "a.warc"), str(folder / "b.warc.gz")]
    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress(b"crawl-data/CC-MAIN-2024-22/segments/1/warc/x.warc.gz\n\n"))
    assert expand_warc_inputs([listing]) == [
        "https://data.commoncrawl.org/crawl-data/CC-MAIN-2024-22/segments/1/warc/x.warc.gz"
    ]
    assert expand_warc_inputs([listing], base_url="http://127.0.0.1:9") == [
        "http://127.0.0.1:9/crawl-data/CC-MAIN-2024-22/segments/1/warc/x.warc.gz"
    ]
    with pytest.raises(WarcError, match="given twice"):
        expand_warc_inputs([folder, folder / "a.warc"])
    with pytest.raises(WarcError, match="not found: .*missing.warc"):
        expand_warc_inputs([tmp_path / "missing.warc"])
    bad = tmp_path / "bad.paths.gz"
    bad.write_bytes(gzip.compress(b"/etc/passwd\n"))
    with pytest.raises(WarcError, match=r"bad.paths.gz, line 1: '/etc/passwd'"):
        expand_warc_inputs([bad])


def test_several_files_are_read_one_after_the_other(tmp_path: Path) -> None:
    first = write_test_crawl(tmp_path / "first.warc.gz", pages=2, images=2)
    second = write_test_crawl(tmp_path / "second.warc", pages=3, images=2)
    stats = WarcStats()
    uris = [r.uri for source in expand_warc_inputs([first, second]) for r in iter_responses(source, stats)]
    assert len(uris) == 2 + 2 + 3 + 2
    assert (stats.files, stats.html, stats.images) == (2, 5, 4)
    assert stats.bytes == first.stat().st_size + second.stat().st_size


def test_fastwarc_alone_ends_a_truncated_file_silently(tmp_path: Path) -> None:
    """Why the reader decompresses gzip itself: fastwarc stops at a cut last member without an error."""
    path = write_test_crawl(tmp_path / "crawl.warc.gz", pages=3, images=1)
    members = member_bytes(path)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(b"".join(members[:-1]) + members[-1][:20])
    bare = list(ArchiveIterator(str(cut), record_types=WarcRecordType.response))
    assert len(bare) == 3  # the image record is gone, and nothing said so
    responses, stats = read(cut)
    assert len(responses) == 3
    assert stats.files_stopped == 1
    assert stats.problems == [
        f"{cut}: reading stopped after record {responses[-1].record_id} at byte {responses[-1].offset:,}: "
        f"the gzip member at byte {len(b''.join(members[:-1])):,} is cut short (the file ends inside it)"
    ]


def test_a_damaged_member_is_skipped_and_reading_goes_on_at_the_next(tmp_path: Path) -> None:
    path = write_test_crawl(tmp_path / "crawl.warc.gz", pages=3, images=1)
    members = member_bytes(path)
    damaged = tmp_path / "damaged.warc.gz"
    damaged.write_bytes(b"".join(members[:2]) + members[2][:-30] + b"".join(members[3:]))
    responses, stats = read(damaged)
    assert [r.uri for r in responses] == [f"{SITE}/page/0.html", f"{SITE}/page/2.html", f"{SITE}/media/photo-0.jpg"]
    assert stats.files_stopped == 0 and stats.members_skipped == 1
    assert f"the gzip member at byte {len(members[0]) + len(members[1]):,} is damaged" in stats.problems[0]


def test_wrong_content_lengths_are_counted_skips(tmp_path: Path) -> None:
    path = write_test_crawl(tmp_path / "crawl.warc", pages=3, images=1)
    data = path.read_bytes()
    page = data.index(b"WARC-Type: response")
    length = data.index(b"Content-Length: ", page)
    end = data.index(b"\r\n", length)
    declared = int(data[length + 16 : end])
    shorter = tmp_path / "shorter.warc"
    shorter.write_bytes(data[: length + 16] + str(declared - 7).encode() + data[end:])
    responses, stats = read(shorter)
    assert responses == []
    assert (stats.digest_mismatches, stats.files_stopped) == (1, 1)  # the next record does not start where it should
    assert "WARC-Block-Digest does not match" in stats.problems[0] and str(shorter) in stats.problems[0]
    longer = tmp_path / "longer.warc"
    longer.write_bytes(data[: length + 16] + str(declared + 40).encode() + data[end:])
    responses, stats = read(longer)
    # it swallowed the start of the next record: the file cannot be parsed after it, and says so
    assert responses == [] and (stats.digest_mismatches, stats.files_stopped) == (1, 1)
    assert stats.problems[1].startswith(f"{longer}: reading stopped after record <urn:uuid:")


def test_a_truncated_plain_file_counts_its_last_record(tmp_path: Path) -> None:
    path = write_test_crawl(tmp_path / "crawl.warc", pages=2, images=1)
    cut = tmp_path / "cut.warc"
    cut.write_bytes(path.read_bytes()[:-500])
    responses, stats = read(cut)
    assert [r.kind for r in responses] == ["html", "html"]
    assert stats.truncated_records == 1 and "truncated" in stats.problems[0]


def test_other_types_and_large_payloads_are_counted_not_read(tmp_path: Path) -> None:
    path = write_records(
        tmp_path / "mixed.warc.gz",
        [
            Response(f"{SITE}/a.html", b"<html><p>a</p></html>"),
            Response(f"{SITE}/app.js", b"var x = 1;", "application/javascript"),
            Response(f"{SITE}/big.html", b"<html>" + b"x" * 5_000 + b"</html>"),
            Response(f"{SITE}/p.jpg", image_payload(1), "image/jpeg"),
        ],
    )
    responses, stats = read(path, max_payload=4_000)
    assert [r.uri for r in responses] == [f"{SITE}/a.html", f"{SITE}/p.jpg"]
    assert (stats.other_types, stats.too_large, stats.html, stats.images) == (1, 1, 1, 1)
    assert stats.problems[0].startswith(f"{path}: record <urn:uuid:") and "over the cap of 4,000" in stats.problems[0]


def test_a_file_that_is_no_archive_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "garbage.warc"
    path.write_bytes(b"this is no WARC file\r\n" * 100)
    with pytest.raises(WarcError, match=f"{path}: not a WARC or ARC file"):
        read(path)


def test_fsspec_urls_are_streamed(tmp_path: Path) -> None:
    import fsspec

    crawl = write_test_crawl(tmp_path / "crawl.warc.gz", pages=2, images=1)
    with fsspec.open("memory://bucket/crawl.warc.gz", "wb") as stream:
        stream.write(crawl.read_bytes())
    responses, stats = read("memory://bucket/crawl.warc.gz")
    assert [r.uri for r in responses] == [r.uri for r in read(crawl)[0]]
    assert stats.bytes == crawl.stat().st_size


class Server:
    """WARC files on 127.0.0.1, with ``Range`` requests and connections cut on demand."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.cut_after: dict[str, int] = {}  # path → bytes sent before the connection is cut, once
        self.ranges: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                asked = self.headers.get("Range")
                server.ranges.append(asked)
                start = int(asked.removeprefix("bytes=").rstrip("-")) if asked else 0
                self.send_response(206 if asked else 200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                limit = server.cut_after.pop(self.path, None)
                body = data[start:] if limit is None else data[start : start + limit]
                self.wfile.write(body)
                if limit is not None:
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    crawl = write_test_crawl(tmp_path / "crawl.warc.gz", pages=30, images=5, filler=20)
    listing = gzip.compress(b"crawl-data/one/crawl.warc.gz\n")
    running = Server({"/crawl-data/one/crawl.warc.gz": crawl.read_bytes(), "/warc.paths.gz": listing})
    running.thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()
    running.thread.join(timeout=10)


def test_a_listing_over_http_is_streamed_and_resumed_after_a_cut(server: Server, tmp_path: Path) -> None:
    local, _ = read(tmp_path / "crawl.warc.gz")
    sources = expand_warc_inputs([f"{server.url}/warc.paths.gz"], base_url=server.url)
    assert sources == [f"{server.url}/crawl-data/one/crawl.warc.gz"]
    size = len(server.files["/crawl-data/one/crawl.warc.gz"])
    server.cut_after["/crawl-data/one/crawl.warc.gz"] = size // 2
    responses, stats = read(sources[0], network=FAST)
    assert [(r.record_id, r.payload) for r in responses] == [(r.record_id, r.payload) for r in local]
    assert stats.bytes == size and stats.files_stopped == 0
    assert server.ranges[-2:] == [None, f"bytes={size // 2}-"]


def test_a_missing_url_is_a_named_problem(server: Server) -> None:
    responses, stats = read(f"{server.url}/nothing.warc.gz", network=FAST)
    assert responses == [] and stats.files_stopped == 1
    assert "nothing.warc.gz: HTTP 404" in stats.problems[0]


def test_a_web_task_writes_references_and_the_image_index(tmp_path: Path) -> None:
    crawl = write_test_crawl(tmp_path / "crawl.warc.gz", pages=4, images=3)
    task = web_task(str(crawl), tmp_path / "out")
    (tmp_path / "out").mkdir()
    result = run_web_task(task)
    references = pq.read_table(task.shard).to_pylist()
    index = pq.read_table(task.images).to_pylist()
    pages = {r.uri: r.record_id for r in read(crawl)[0] if r.kind == "html"}
    assert len(references) == result.references == 4 * 3
    assert all(pages[row["page"]] == row["record_id"] for row in references)  # every row traces to its record
    assert [(row["kind"], row["image"]) for row in references[:3]] == [
        ("figure", image_url(0)),
        ("table", image_url(1)),
        ("alt", image_url(2)),
    ]
    assert {row["language"] for row in references} == {"en"}
    assert (result.html.figure, result.html.table, result.html.alt, result.html.empty_captions) == (4, 4, 4, 4)
    assert [(row["image"], row["facts"]) for row in index] == [
        (image_url(n), f'"{payload_digest(image_payload(n))}"') for n in range(3)
    ]
    assert Path(task.shard).with_suffix(".json").is_file()
    assert not list((tmp_path / "out").glob("*.partial"))
    assert run_web_task(task).to_json() == result.to_json()  # a finished task is not run again


def lower_host(url: str) -> str:
    """A normalizer for the test: the host in lower case; a URL with a query is refused."""
    if "?" in url:
        raise ValueError("has a query")
    scheme, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    return f"{scheme}://{host.lower()}/{path}"


def first_byte(data: bytes) -> dict[str, int]:
    """An inspector for the test: facts of the payload; a non-JPEG is skipped with its reason."""
    if not data.startswith(b"\xff\xd8"):
        raise ValueError("not a JPEG")
    return {"length": len(data)}


def test_the_normalizer_and_the_inspector_are_injected(tmp_path: Path) -> None:
    page = (
        b'<html><body><img src="HTTPS://CDN.Example.ORG/a.jpg" alt="A caption of the photo">'
        b'<img src="/b.jpg?size=2" alt="Another caption"></body></html>'
    )
    crawl = write_records(
        tmp_path / "crawl.warc.gz",
        [
            Response(f"{SITE}/p.html", page),
            Response("https://CDN.example.org/a.jpg", image_payload(3), "image/jpeg"),
            Response("https://cdn.example.org/c.png", b"\x89PNG not really", "image/png"),
        ],
    )
    task = web_task(str(crawl), tmp_path, normalize=lower_host, inspect=first_byte)
    result = run_web_task(task)
    references = pq.read_table(task.shard).to_pylist()
    index = pq.read_table(task.images).to_pylist()
    assert [row["image"] for row in references] == ["https://cdn.example.org/a.jpg"]
    assert result.unusable_urls == 1 and "has a query" in result.problems[0]
    assert [(row["image"], row["facts"], row["skip"]) for row in index] == [
        ("https://cdn.example.org/a.jpg", f'{{"length": {len(image_payload(3))}}}', None),
        ("https://cdn.example.org/c.png", None, "not a JPEG"),
    ]
    assert result.images_skipped == 1


def test_a_source_that_cannot_be_opened_fails_its_task_only(tmp_path: Path) -> None:
    task = WebTask(str(tmp_path / "gone.warc.gz"), str(tmp_path / "r.parquet"), str(tmp_path / "i.parquet"))
    result = run_web_task(task)
    assert result.error == f"{tmp_path / 'gone.warc.gz'}: No such file or directory"
    assert not list(tmp_path.iterdir())  # no shard a resumed build would trust


def test_a_listing_never_makes_a_build_read_a_local_file(server: Server, tmp_path: Path) -> None:
    """A listing served over http that names file:// URLs (a local WARC, /etc/passwd) is refused, line named, before
    anything is read; the user may allow a scheme."""
    crawl = tmp_path / "crawl.warc.gz"
    lines = f"crawl-data/one/crawl.warc.gz\nfile://{crawl}\nfile:///etc/passwd\n".encode()
    server.files["/hostile.paths.gz"] = gzip.compress(lines)
    with pytest.raises(WarcError, match=r"hostile.paths.gz, line 2: 'file://.*' is a file: URL"):
        expand_warc_inputs([f"{server.url}/hostile.paths.gz"], base_url=server.url)
    local = tmp_path / "local.paths.gz"
    local.write_bytes(gzip.compress(f"file://{crawl}\n".encode()))
    with pytest.raises(WarcError, match=r"local.paths.gz, line 1: .* is a file: URL"):
        expand_warc_inputs([local])
    assert expand_warc_inputs([local], listing_schemes=("http", "https", "file")) == [f"file://{crawl}"]
    both = tmp_path / "both.paths.gz"
    both.write_bytes(gzip.compress(b"https://data.example.org/a.warc.gz\ns3://bucket/b.warc.gz\n"))
    with pytest.raises(WarcError, match=r"line 2: 's3://bucket/b.warc.gz' is a s3: URL"):
        expand_warc_inputs([both])
    assert expand_warc_inputs([both], listing_schemes=("https", "s3")) == [
        "https://data.example.org/a.warc.gz",
        "s3://bucket/b.warc.gz",
    ]
