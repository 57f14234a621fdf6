"""Which capture of a URL a web build reads, and how pages are told apart (issue 45, items 2, 4, 9 and 10).

Only a success (2xx) is a page's or an image's capture: a 503 captured before the 200 must not hide the page, nor a
404 with an empty body the image, whatever the order of the captures, in one file or two, with one worker or two,
on both engines. Pages are told apart by their record's place in the file, not by the optional ``WARC-Record-ID``.
The crawl's counters add up with step 0. A file named as an archive that is none is refused, named, with its first
bytes. Every crawl here is written with warcio's ``WARCWriter``.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.web_crawl import SHARED_CAPTIONS, picture
from builder.config import WEB
from builder.engines.local import build
from builder.extract.web import web_task
from builder.extract.webrefs import WebBuildTask, iter_web_build_rows
from builder.sources.kinds import NotAnArchive, input_kind
from builder.sources.warc import WarcError, WarcStats, iter_responses
from wikipedia_ipc import main

SITE = "https://captures.example.org"
DATE = "2024-03-01T12:00:00Z"
NO_ID = "none"


@dataclasses.dataclass(frozen=True)
class Capture:
    """One response record: its URL, HTTP status, type and body; ``record_id`` a name the id is made from (the
    same name gives the same id in every file), or :data:`NO_ID` for a record without ``WARC-Record-ID``."""

    path: str
    status: str
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    record_id: str = ""

    @property
    def url(self) -> str:
        return SITE + self.path


def write(path: Path, captures: list[Capture], compress: str = "record") -> Path:
    """A WARC file of ``captures`` with warcio: gzip per record (``record``), one gzip member for the whole file
    (``file``), or none (``plain``)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    stream = io.BytesIO()
    writer = WARCWriter(stream, gzip=compress == "record")
    for capture in captures:
        http = StatusAndHeaders(capture.status, [("Content-Type", capture.content_type)], protocol="HTTP/1.1")
        name = capture.record_id or f"{capture.path} {capture.status} {len(capture.body)}"
        headers = {"WARC-Date": DATE, "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, name)}>"}
        record = writer.create_warc_record(
            capture.url, "response", payload=io.BytesIO(capture.body), http_headers=http, warc_headers_dict=headers
        )
        if capture.record_id == NO_ID:
            record.rec_headers.remove_header("WARC-Record-ID")
        writer.write_record(record)
    path.write_bytes(gzip.compress(stream.getvalue()) if compress == "file" else stream.getvalue())
    return path


def figure_page(*images: tuple[str, str]) -> bytes:
    """A page of figures, each ``(image path, caption)``; a caption starting ``alt:`` is an alt text instead."""
    parts = [
        f'<p><img src="{image}" alt="{caption[4:]}"></p>'
        if caption.startswith("alt:")
        else f'<figure><img src="{image}"><figcaption>{caption}</figcaption></figure>'
        for image, caption in images
    ]
    return f'<!DOCTYPE html><html lang="en"><head><title>t</title></head><body>{"".join(parts)}</body></html>'.encode()


# -- item 2: the captures of one small crawl, errors and successes

X = picture(1)  # 240 × 180, passes §4.3.2
ERRORS = [
    # the page's 503, its body a page of another image: read, it would hide /p's 200
    Capture("/p", "503 Service Unavailable", figure_page(("/img/e.jpg", SHARED_CAPTIONS[2]))),
    Capture("/img/x.jpg", "404 Not Found", b"", "image/jpeg"),  # an empty body: read first, x were unreadable
    Capture("/img/gone.jpg", "404 Not Found", b"<html><body>Not found</body></html>"),  # gone.jpg: errors only
    Capture("/r", "404 Not Found", figure_page(("/img/x.jpg", SHARED_CAPTIONS[3]))),  # /r: errors only
    Capture("/old", "301 Moved Permanently", figure_page(("/img/x.jpg", SHARED_CAPTIONS[4]))),
]
SUCCESSES = [
    # two adjacent pages without a record id (item 4): two pages, not one
    Capture("/p", "200 OK", figure_page(("/img/x.jpg", SHARED_CAPTIONS[0])), record_id=NO_ID),
    Capture(
        "/q",
        "200 OK",
        figure_page(("/img/x.jpg", SHARED_CAPTIONS[1]), ("/img/gone.jpg", "alt:A gone image")),
        record_id=NO_ID,
    ),
    Capture("/img/x.jpg", "200 OK", X, "image/jpeg"),
    Capture(
        "/q",
        "200 OK",
        figure_page(("/img/x.jpg", SHARED_CAPTIONS[1]), ("/img/gone.jpg", "alt:A gone image")),
        record_id="q again",
    ),
]
# (files, workers): errors before the successes and after them, in one file and across two
LAYOUTS = {
    "errors first": ([ERRORS + SUCCESSES], 1),
    "errors last": ([SUCCESSES + ERRORS], 1),
    "errors in the first file": ([ERRORS, SUCCESSES], 2),
    "errors in the second file": ([SUCCESSES, ERRORS], 2),
}


def crawl_files(folder: Path, layout: str) -> tuple[list[str], int]:
    files, workers = LAYOUTS[layout]
    folder.mkdir(parents=True, exist_ok=True)
    return [str(write(folder / f"part-{number}.warc.gz", captures)) for number, captures in enumerate(files)], workers


def pixels():  # noqa: ANN201 - a PipelineConfig
    return dataclasses.replace(WEB, equivalence="pixels", splits=())


def rows_of(folder: Path) -> list[dict]:
    files = sorted((folder / "web").glob("*.parquet"))
    table = pa.concat_tables([pq.read_table(file) for file in files])
    return sorted(
        ({k: v for k, v in row.items() if k not in ("id", "warc1", "warc2")} for row in table.to_pylist()),
        key=lambda row: (row["page1"], row["page2"]),
    )


def check_record(record: dict) -> None:
    """What every layout and engine must give: the exact counts, and the crawl's references adding up."""
    crawl, skipped, images = record["crawl"], record["skipped"], record["identity"]
    # 5 error captures (a 503, two 404 pages, a 301, a 404 image) are no capture of anything
    assert skipped["unsuccessful_responses"] == crawl["unsuccessful_responses"] == 5
    # /p, /q and /q again; x's one success
    assert crawl["html_pages"] == 3 and crawl["images_indexed"] == 1 and crawl["images_unreadable"] == 0
    # /p: x; /q: x and gone; /q again: the same two, a later capture (item 9)
    assert crawl["references"] == 5 and crawl["pages_with_references"] == 3
    assert skipped["later_captures_of_pages"] == 1 and crawl["references_of_later_captures"] == 2
    # gone.jpg has only error captures: no record; x's 404 hides nothing
    assert images["left_out"]["images_without_a_record"] == {"images": 1, "references": 1}
    assert images["left_out"]["unreadable"] == {"images": 0, "references": 0}
    assert crawl["references_left_out_before_step_0"] == 1
    step_0 = record["funnel"][0]["references"]
    assert step_0 == 2  # x from /p and from /q
    assert (
        crawl["references"]
        == step_0 + crawl["references_of_later_captures"] + crawl["references_left_out_before_step_0"]
    )


def check_rows(rows: list[dict]) -> None:
    """The one pair: x.jpg, captioned on /p's 200 and /q, never on /p's 503, /r's 404 or /old's 301."""
    assert [(row["page1"], row["page2"], row["file1"], row["file2"]) for row in rows] == [
        (f"{SITE}/p", f"{SITE}/q", f"{SITE}/img/x.jpg", f"{SITE}/img/x.jpg")
    ]
    assert {rows[0]["sentence1"], rows[0]["sentence2"]} == {SHARED_CAPTIONS[0], SHARED_CAPTIONS[1]}
    assert rows[0]["record1"] == rows[0]["record2"] == "(no WARC-Record-ID)"


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory, perceptron_available: None) -> list[dict]:
    """The rows of the crawl with its error captures first, one file, the local engine."""
    folder = tmp_path_factory.mktemp("expected")
    files, _ = crawl_files(folder / "crawl", "errors first")
    build(files, [pixels()], folder / "out", tagger="perceptron", workers=1, show_progress=False)
    rows = rows_of(folder / "out")
    check_rows(rows)
    check_record(json.loads((folder / "out" / "web" / "funnel.json").read_text(encoding="utf-8")))
    return rows


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_only_successes_are_captures_whatever_the_order(
    layout: str, expected: list[dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, workers = crawl_files(tmp_path / "crawl", layout)
    out = tmp_path / "out"
    options = ["--equivalence", "pixels", "--splits", "none", "--tagger", "perceptron", "--workers", str(workers)]
    assert main(["build", *files, "--config", "web", "--output", str(out), "--quiet", *options]) == 0
    assert rows_of(out) == expected
    check_record(json.loads((out / "web" / "funnel.json").read_text(encoding="utf-8")))
    summary = capsys.readouterr().out
    assert "3 HTML pages, 1 image record, skipped 5 responses that are no success (not 2xx)" in summary
    assert "found 5 image references, 2 of them in 1 later capture of pages read before (left out)" in summary
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "3 HTML pages (3 with image references), 1 image records indexed, 5 responses that are no success" in card
    assert "5 references (captions found: figure 3, table 0, alt 2; 2 of them in later captures" in card


@pytest.mark.parametrize("layout", ["errors first", "errors in the first file"])
def test_spark_reads_the_same_captures(layout: str, expected: list[dict], tmp_path: Path, spark) -> None:
    from builder.engines.spark import build_spark

    files, workers = crawl_files(tmp_path / "crawl", layout)
    build_spark(files, [pixels()], tmp_path / "out", tagger="perceptron", workers=2, show_progress=False, spark=spark)
    assert rows_of(tmp_path / "out") == expected
    check_record(json.loads((tmp_path / "out" / "web" / "funnel.json").read_text(encoding="utf-8")))


def test_the_reader_hands_on_only_successes(tmp_path: Path) -> None:
    """Each error capture counted, the successes handed on in file order; a revisit is counted, never read."""
    from warcio.warcwriter import WARCWriter

    path = write(tmp_path / "crawl.warc", ERRORS + SUCCESSES, compress="plain")
    with path.open("ab") as stream:  # a revisit of x's 200 (no payload), as a crawler writes one
        writer = WARCWriter(stream, gzip=False)
        revisit = writer.create_revisit_record(f"{SITE}/img/x.jpg", "sha1:AAAA", f"{SITE}/img/x.jpg", DATE)
        writer.write_record(revisit)
    stats = WarcStats()
    responses = list(iter_responses(str(path), stats))
    assert [(r.uri, r.kind, r.number) for r in responses] == [
        (f"{SITE}/p", "html", 5),
        (f"{SITE}/q", "html", 6),
        (f"{SITE}/img/x.jpg", "image", 7),
        (f"{SITE}/q", "html", 8),
    ]
    assert (stats.records, stats.responses, stats.unsuccessful, stats.html, stats.images) == (10, 9, 5, 3, 1)
    assert (stats.revisits, stats.revisits_resolved, stats.skipped) == (1, 1, 0)


# -- item 4: pages told apart by their place in the file


def page_rows(path: Path) -> list[tuple[int, str, str]]:
    """(page id, page URL, caption) of each reference row a build's task makes of the file."""
    task = WebBuildTask(0, web_task(str(path), path.parent, inspect=None))
    result = task.new_result()
    rows = [row for kind, row in iter_web_build_rows(task, result) if kind == "reference"]
    assert result.pages == len({row["page_id"] for row in rows}) and result.references == len(rows)
    return [(row["page_id"], row["page"], row["caption"]) for row in rows]


@pytest.mark.parametrize("compress", ["record", "file", "plain"])
@pytest.mark.parametrize("ids", ["missing", "shared"])
def test_adjacent_pages_without_or_with_one_record_id_stay_two_pages(tmp_path: Path, compress: str, ids: str) -> None:
    """Two pages in a row without ``WARC-Record-ID``, or with the same one, in a file gzipped per record, as one
    gzip member (where both records share the member's offset) and plain: two pages, each with its reference."""
    record_id = NO_ID if ids == "missing" else "one id for both"
    captures = [
        Capture("/a", "200 OK", figure_page(("/img/a.jpg", SHARED_CAPTIONS[0])), record_id=record_id),
        Capture("/b", "200 OK", figure_page(("/img/b.jpg", SHARED_CAPTIONS[1])), record_id=record_id),
    ]
    path = write(tmp_path / ("crawl.warc" + (".gz" if compress != "plain" else "")), captures, compress)
    assert page_rows(path) == [
        (0, f"{SITE}/a", SHARED_CAPTIONS[0]),
        (1, f"{SITE}/b", SHARED_CAPTIONS[1]),
    ]


# -- item 10: a file named as an archive that is none


GARBAGE = b"\x00\x01not an archive at all\xff"


@pytest.mark.parametrize(
    ("name", "data", "shown"),
    [
        ("empty.warc.gz", b"", "it is empty"),
        ("empty-gzip.warc.gz", gzip.compress(b"", mtime=0), "a gzip file; it is empty once decompressed"),
        (
            "gzip-of-garbage.warc.gz",
            gzip.compress(GARBAGE, mtime=0),
            "a gzip file; its first bytes, decompressed, are b'\\x00\\x01not an archive'",
        ),
        ("garbage.warc.gz", GARBAGE, "it starts with b'\\x00\\x01not an archive'"),
        ("garbage.arc", GARBAGE, "it starts with b'\\x00\\x01not an archive'"),
    ],
    ids=["empty.warc.gz", "empty-gzip.warc.gz", "gzip-of-garbage.warc.gz", "garbage.warc.gz", "garbage.arc"],
)
def test_a_file_named_as_an_archive_that_is_none_is_refused_with_its_first_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: bytes, shown: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    message = f"{path}: not a WARC or ARC file ({shown})"
    with pytest.raises(NotAnArchive) as refused:
        input_kind(path)
    assert str(refused.value) == message
    with pytest.raises(WarcError) as read:  # the reader says the same, given the file directly
        list(iter_responses(str(path), WarcStats()))
    assert str(read.value) == message
    for configs in ([], ["--config", "web"], ["--config", "gold"]):  # alone, as a crawl, as a dump
        assert main(["build", str(path), *configs, "--output", str(tmp_path / "out"), "--quiet"]) == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"error: {message}"
    assert not (tmp_path / "out").exists()


def test_a_damaged_gzip_named_as_an_archive_is_refused_naming_the_damage(tmp_path: Path) -> None:
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + b"\xff" * 40)
    with pytest.raises(
        NotAnArchive, match=rf"^{path}: not a WARC or ARC file \(a gzip file that cannot be decompressed: "
    ):
        input_kind(path)


def test_a_dump_and_a_real_archive_keep_their_kinds() -> None:
    root = Path(__file__).resolve().parent.parent
    assert input_kind(root / "builder" / "data" / "enwiki-20240101-sample-pages-articles.xml.bz2") == "dump"
    assert input_kind(root / "tests" / "data" / "web" / "whirlwind.warc.gz") == "web"
    assert input_kind(root / "tests" / "data" / "web" / "warcio-example.arc") == "web"
