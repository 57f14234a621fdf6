"""The counts of a build add up, and say one thing in the summary, the card and ``funnel.json`` (issue 45, item 9),
on every kind of input: a dump (``.bz2``, ``.xml``, both: the second a copy), an edit history (alone and given
twice), an img2dataset folder (with and without its caption TSV) and a WARC crawl written with warcio.

Each build runs the command line and reads back the three: the summary's reading line, the card's, and
``funnel.json``'s; the pages read are the copies, the pages mined, the redirects and the pages of other namespaces;
the references found are those step 0 of the references config counts (a crawl's: with the references of images
left out before step 0); a references config's headline, its table's last column and its rows are one number."""

from __future__ import annotations

import bz2
import contextlib
import io
import json
import re
import shutil
from pathlib import Path

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from test_img2dataset import REAL, REAL_TSV, photo, write_img2dataset

from wikipedia_ipc import main

DATA = Path(__file__).resolve().parent.parent / "builder" / "data"
ARTICLES = DATA / "enwiki-20240101-sample-pages-articles.xml.bz2"
HISTORY = DATA / "enwiki-20240101-sample-pages-meta-history.xml.bz2"
KINDS = ("bz2", "xml", "bz2+xml", "history", "history twice", "img2dataset", "img2dataset+tsv", "warc")
# the sample's reading, pinned: the articles sample alone, and with its decompression (one copy of its 47 pages:
# the 37 mined are copies, its 2 redirects and 8 pages of other namespaces are counted as such)
ARTICLES_READ = {"pages": 47, "copies": 0, "mined": 37, "redirects": 2, "other_namespaces": 8, "references": 49}
TWICE_READ = {"pages": 94, "copies": 37, "mined": 37, "redirects": 4, "other_namespaces": 16, "references": 49}

_DUMP_LINE = re.compile(
    r"^Read (?P<pages>[\d,]+) pages?(?: \((?P<revisions>[\d,]+) revisions?\))?"
    r"(?:, (?P<copies>[\d,]+) of them (?:a copy|copies) of (?P<copies_of>pages|revisions) read before \(left out\))?"
    r": mined (?P<mined>[\d,]+) for images, skipped (?P<redirects>[\d,]+) redirects? and "
    r"(?P<other_namespaces>[\d,]+) pages? of other namespaces; found (?P<references>[\d,]+) image references?",
    re.MULTILINE,
)
_CARD_LINE = re.compile(
    r"^- Read: (?P<pages>[\d,]+) pages \((?P<revisions>[\d,]+) revisions\)"
    r"(?:, (?P<copies>[\d,]+) of them later copies of (?P<copies_of>pages|revisions) read before \(left out\))?"
    r": (?P<mined>[\d,]+) mined for images, (?P<redirects>[\d,]+) redirects and (?P<other_namespaces>[\d,]+) pages "
    r"of other namespaces skipped; (?P<references>[\d,]+) image references found$",
    re.MULTILINE,
)
_DATASET_LINE = re.compile(
    r"^Read .+ \((?P<layout>\w+), [\d,]+ shards?\): (?P<records>[\d,]+) records?, (?P<images>[\d,]+) images? kept "
    r"\(left out, (?P<left>[^)]*)\)",
    re.MULTILINE,
)
_CRAWL_LINE = re.compile(
    r"^Read (?P<files>[\d,]+) WARC files? \((?P<records>[\d,]+) records?\): (?P<html>[\d,]+) HTML pages?, "
    r"(?P<images>[\d,]+) image records?; found (?P<references>[\d,]+) image references?",
    re.MULTILINE,
)


def number(text: str | None) -> int:
    return int(text.replace(",", "")) if text else 0


def numbers(match: re.Match[str]) -> dict[str, object]:
    return {key: value if key == "copies_of" else number(value) for key, value in match.groupdict().items()}


def warc_crawl(path: Path) -> None:
    """A small crawl as a crawler writes it (warcio): three pages that caption two images, and the images."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    harbour, bridge = photo((480, 400), 1), photo((500, 450), 2)
    pages = {
        "http://a.example/one.html": [("harbour.jpg", "Fishing boats in the harbour at dawn"), ("bridge.jpg", "")],
        "http://b.example/two.html": [("harbour.jpg", "Boats moored in a small harbour at sunrise")],
        "http://c.example/three.html": [("bridge.jpg", "The old stone bridge over the river")],
    }
    with path.open("wb") as stream:
        writer = WARCWriter(stream, gzip=True)
        for url, figures in pages.items():
            body = "".join(
                f'<figure><img src="http://img.example/{src}" alt=""><figcaption>{caption}</figcaption></figure>'
                for src, caption in figures
            )
            html = f"<!doctype html><html lang=en><body>{body}</body></html>".encode()
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(url, "response", payload=io.BytesIO(html), http_headers=headers)
            )
        for name, data in (("harbour.jpg", harbour), ("bridge.jpg", bridge)):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "image/jpeg")], protocol="HTTP/1.1")
            record = writer.create_warc_record(
                f"http://img.example/{name}", "response", payload=io.BytesIO(data), http_headers=headers
            )
            writer.write_record(record)


def inputs(kind: str, folder: Path) -> tuple[list[str], list[str]]:
    """The input files of a kind of input, written under ``folder``, and the configs built from them."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind in ("bz2", "xml", "bz2+xml"):
        xml = folder / ARTICLES.name.removesuffix(".bz2")
        xml.write_bytes(bz2.decompress(ARTICLES.read_bytes()))
        given = {"bz2": [ARTICLES], "xml": [xml], "bz2+xml": [ARTICLES, xml]}[kind]
        return [str(path) for path in given], ["references"]
    if kind.startswith("history"):
        xml = folder / HISTORY.name.removesuffix(".bz2")
        xml.write_bytes(bz2.decompress(HISTORY.read_bytes()))
        return [str(HISTORY)] + ([str(xml)] if kind == "history twice" else []), ["references"]
    if kind.startswith("img2dataset"):
        dataset = folder / "dataset"
        if kind == "img2dataset":
            write_img2dataset(dataset, "webdataset")
            return [str(dataset)], ["captions", "references"]
        shutil.copytree(REAL / "img2dataset" / "webdataset", dataset)
        return [str(dataset), "--captions-tsv", str(REAL_TSV)], ["captions", "references"]
    warc = folder / "crawl.warc.gz"
    warc_crawl(warc)
    return [str(warc)], ["references"]


def run(kind: str, folder: Path, workers: int = 1) -> tuple[str, str, dict[str, dict]]:
    """The build's summary, card and each config's funnel.json."""
    given, configs = inputs(kind, folder / "in")
    out = folder / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(
            [
                "build",
                *given,
                "--configs",
                *configs,
                "--output",
                str(out),
                "--quiet",
                *(["--splits", "none"] if "captions" in configs else []),  # the only config here that pairs
                "--workers",
                str(workers),
            ]
        )
    assert code == 0, printed.getvalue()
    card = (out / "README.md").read_text(encoding="utf-8")
    records = {name: json.loads((out / name / "funnel.json").read_text(encoding="utf-8")) for name in configs}
    return printed.getvalue(), card, records


def check_references_config(summary: str, card: str, record: dict) -> None:
    """A references config's headline, its table's last column, its card heading and its rows: one number."""
    rows = record["rows"]
    assert f"## references: {rows:,} record{'s' if rows != 1 else ''}\n" in summary
    assert f"### `references` – {rows:,} image–text records" in card
    assert record["funnel"][0]["records"] == rows and "pairs" not in record["funnel"][0]
    assert "| Captions | Δ | Records | Δ |" in summary and "| Captions | Δ | Records | Δ |" in card
    step = record["funnel"][0]
    assert f"| {step['captions']:,} | – | {rows:,} | – |" in summary


def check(kind: str, summary: str, card: str, records: dict[str, dict]) -> None:
    references = records["references"]
    check_references_config(summary, card, references)
    step0 = references["funnel"][0]["references"]
    if kind.startswith(("bz2", "xml", "history")):
        said, carded = _DUMP_LINE.search(summary), _CARD_LINE.search(card)
        assert said is not None and carded is not None, summary
        read = references["read"]
        printed, written = numbers(said), numbers(carded)
        for name in ("pages", "copies", "mined", "redirects", "other_namespaces", "references"):
            assert printed[name] == written[name] == read[name], name
        assert written["revisions"] == read["revisions"] == references["revisions"]
        assert read["pages"] == references["pages"]
        assert read["copies"] == references["skipped"]["later_copies_of_pages"]
        assert (read["redirects"], read["other_namespaces"]) == (
            references["skipped"]["redirects"],
            references["skipped"]["other_namespaces"],
        )
        copies = 0 if read["copies_of"] == "revisions" else read["copies"]
        assert read["pages"] == copies + read["mined"] + read["redirects"] + read["other_namespaces"]
        assert read["references"] == step0  # the references config reads every source
        if kind in ("bz2", "xml"):
            assert {key: read[key] for key in ARTICLES_READ} == ARTICLES_READ
        if kind == "bz2+xml":
            assert {key: read[key] for key in TWICE_READ} == TWICE_READ
        return
    if kind.startswith("img2dataset"):
        said = _DATASET_LINE.search(summary)
        assert said is not None, summary
        for record in records.values():
            dataset = record["dataset"]
            left = dict(
                (reason, number(count)) for reason, count in (part.rsplit(" ", 1) for part in said["left"].split(", "))
            )
            assert (number(said["records"]), number(said["images"])) == (dataset["records"], dataset["images"])
            assert left == {reason: count for reason, count in dataset["skipped"].items() if count}
            assert dataset["records"] == dataset["images"] + sum(dataset["skipped"].values()) == record["pages"]
            assert f"; {dataset['records']:,} records, {dataset['images']:,} images kept" in card
        assert step0 == records["references"]["dataset"]["images"]  # every sample kept is a reference
        pinned = (6, 4) if kind.endswith("tsv") else (9, 2)  # the real rows; test_img2dataset's SAMPLES
        assert (number(said["records"]), number(said["images"])) == pinned
        return
    said = _CRAWL_LINE.search(summary)
    assert said is not None, summary
    crawl = references["crawl"]
    assert (number(said["files"]), number(said["records"]), number(said["html"])) == (
        crawl["warc_files"],
        crawl["records"],
        crawl["html_pages"],
    )
    assert number(said["references"]) == crawl["references"] == step0 + crawl["references_left_out_before_step_0"]
    assert f"{crawl['records']:,} WARC records, {crawl['html_pages']:,} HTML pages" in card
    assert f"indexed; {crawl['references']:,} references" in card
    assert (crawl["records"], crawl["html_pages"], crawl["references"]) == (5, 3, 3)  # the empty caption: none


@settings(
    max_examples=3,
    deadline=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(kind=st.sampled_from(KINDS), workers=st.sampled_from([1, 2]))
@example(kind="bz2", workers=1)
@example(kind="xml", workers=2)
@example(kind="bz2+xml", workers=2)
@example(kind="history", workers=1)
@example(kind="history twice", workers=2)
@example(kind="img2dataset", workers=2)
@example(kind="img2dataset+tsv", workers=1)
@example(kind="warc", workers=1)
def test_the_summary_the_card_and_funnel_json_add_up_on_every_input_kind(
    kind: str, workers: int, tmp_path: Path
) -> None:
    folder = tmp_path / (re.sub(r"\W", "-", kind) + f"-{workers}")
    shutil.rmtree(folder, ignore_errors=True)  # hypothesis may draw an example twice
    summary, card, records = run(kind, folder, workers)
    check(kind, summary, card, records)
