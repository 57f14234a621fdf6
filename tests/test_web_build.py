"""A web build through the one core (issue 29, part C): WARC crawls → pairs, local and Spark, §4.3.2 rules,
§4.6 equivalences and §5.1.2's bound as named, counted steps; rows that trace to their pages."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.web_crawl import SHARED_SITE, SPELLINGS, write_shared_images_crawl, write_spellings_crawl
from builder.config import GOLD, WEB, ExtractionSettings
from builder.engines.core import WebLibrariesMissing
from builder.engines.local import build
from builder.filters.web import set_bound
from wikipedia_ipc import main

ROOT = Path(__file__).resolve().parent.parent
WHIRLWIND = ROOT / "tests" / "data" / "web" / "whirlwind.warc.gz"
IMG = f"{SHARED_SITE}/img/"
# the pairs (file1, file2) each equivalence gives on the shared-images crawl
EXPECTED = {
    "url": {(IMG + "a.jpg", IMG + "a.jpg"), (IMG + "d.jpg", IMG + "d.jpg")},
    "pixels": {(IMG + "a.jpg", IMG + "a.jpg"), (IMG + "b.png", IMG + "b.bmp")},
    "phash": {(IMG + "a.jpg", IMG + "a.jpg"), (IMG + "b.png", IMG + "b.bmp"), (IMG + "c.jpg", IMG + "c-q50.jpg")},
}


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_shared_images_crawl(tmp_path_factory.mktemp("crawl") / "shared.warc.gz")


def crawl_records(path: Path) -> dict[str, tuple[str, str]]:
    """Record id → (target URI, date) of every response record, read with warcio (not the toolkit's reader)."""
    from warcio.archiveiterator import ArchiveIterator

    with path.open("rb") as stream:
        return {
            record.rec_headers.get_header("WARC-Record-ID"): (
                record.rec_headers.get_header("WARC-Target-URI"),
                record.rec_headers.get_header("WARC-Date"),
            )
            for record in ArchiveIterator(stream)
            if record.rec_type == "response"
        }


def rows_of(folder: Path) -> list[dict]:
    files = sorted((folder / "web").glob("*.parquet"))
    return pa.concat_tables([pq.read_table(file) for file in files]).to_pylist()


def build_with(crawl: Path, out: Path, equivalence: str, *more: str) -> tuple[list[dict], dict]:
    code = main(
        ["build", str(crawl), "--config", "web", "--equivalence", equivalence, "--output", str(out)]
        + ["--tagger", "perceptron", "--workers", "1", "--splits", "none", "--quiet", *more]
    )
    assert code == 0
    return rows_of(out), json.loads((out / "web" / "funnel.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("equivalence", ["url", "pixels", "phash"])
def test_each_equivalence_finds_its_copies_and_rows_trace_to_their_pages(
    crawl: Path, tmp_path: Path, equivalence: str, perceptron_available: None
) -> None:
    rows, record = build_with(crawl, tmp_path / "out", equivalence, "--set-bound", "0.05")
    assert {(row["file1"], row["file2"]) for row in rows} == EXPECTED[equivalence]
    records = crawl_records(crawl)
    label = {"url": "url", "pixels": "pixels", "phash": "phash≤4"}[equivalence]
    for row in rows:
        for side in ("1", "2"):
            assert records[row["record" + side]] == (row["page" + side], row["date" + side])
            assert row["html_lang" + side] == "en-gb"
        assert row["identity"] == ("url" if row["file1"] == row["file2"] else label)
        assert row["caption_type"] == "caption" and row["source1"] == row["source2"] == "figure"
    images = record["identity"]
    assert images["equivalence"] == equivalence and images["identity"] == label
    # §4.3.2: the 20 × 20 logo, on two pages, is left out under every equivalence
    assert images["left_out"]["too_few_pixels"] == {"images": 1, "references": 2}
    without = images["left_out"]["images_without_a_record"]
    assert without == ({"images": 0, "references": 0} if equivalence == "url" else {"images": 1, "references": 2})
    left = sum(counts["references"] for counts in images["left_out"].values())
    assert record["crawl"]["references_left_out_before_step_0"] == left
    assert record["crawl"]["references"] == 18 and record["crawl"]["html_pages"] == 18
    assert record["crawl"]["images_indexed"] == 14
    funnel = {row["name"]: row for row in record["funnel"]}
    assert funnel["No filter"]["references"] == 18 - left
    # §5.1.2: the placeholder's eight URLs are one set under pixels and phash, over the bound, dropped whole
    bound = [row for row in record["funnel"] if row["name"].startswith("Equal images")]
    assert len(bound) == 1 and record["funnel"].index(bound[0]) == 3
    if equivalence == "url":
        assert images["set_bound"]["max_equal_images"] is None
        assert bound[0]["references"] == funnel["References ≤ 10"]["references"]
    else:
        assert images["set_bound"]["max_equal_images"] == 3
        assert funnel["References ≤ 10"]["references"] - bound[0]["references"] == 8
    assert record["rows"] == len(rows)


@pytest.mark.parametrize("equivalence", ["url", "pixels"])
def test_one_image_under_two_spellings_is_one_image(
    tmp_path: Path, equivalence: str, perceptron_available: None
) -> None:
    """Issue 45, item 3: ``caf%C3%A9.jpg`` and ``café.jpg``, ``a b.jpg`` and ``a%20b.jpg``, an IDNA host in ASCII
    and in Unicode, backslashes and slashes: each image, named on two pages under two spellings and recorded under
    a third, is one image (one pair per image), and under pixels both references find its record."""
    crawl = write_spellings_crawl(tmp_path / "spellings.warc.gz")
    rows, record = build_with(crawl, tmp_path / "out", equivalence)
    keys = [
        f"{SHARED_SITE}/img/caf%C3%A9.jpg",
        f"{SHARED_SITE}/img/a%20b.jpg",
        "http://xn--bcher-kva.example/img/book.jpg",
        f"{SHARED_SITE}/img/e.jpg",
    ]
    assert len(SPELLINGS) == len(keys)
    assert sorted((row["file1"], row["file2"]) for row in rows) == sorted((key, key) for key in keys)
    assert all(row["identity"] == "url" for row in rows)
    crawl_counts, images = record["crawl"], record["identity"]
    assert crawl_counts["references"] == 8 and crawl_counts["images_indexed"] == 4
    assert crawl_counts["unusable_urls"] == 0
    assert images["images_referenced"] == 4 and images["images_kept"] == 4 and images["references_kept"] == 8
    assert images["left_out"]["images_without_a_record"] == {"images": 0, "references": 0}


def test_a_crawl_has_no_set_bound_unless_asked(crawl: Path, tmp_path: Path, perceptron_available: None) -> None:
    """§5.1.2's bound is the datasets' (placeholders among downloaded images): a crawl's chain has no such step by
    default, and the placeholder's set, which the bound drops when asked, reaches the pair steps."""
    rows, record = build_with(crawl, tmp_path / "out", "pixels")
    assert not any(row["name"].startswith("Equal images") for row in record["funnel"])
    assert record["parameters"]["set_size_z"] is None and record["identity"]["set_bound"]["max_equal_images"] is None
    assert {(row["file1"], row["file2"]) for row in rows} >= EXPECTED["pixels"]
    funnel = {row["name"]: row for row in record["funnel"]}
    assert funnel["Has caption"]["references"] == funnel["References ≤ 10"]["references"]
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "§5.1.2's bound on a set's size: not applied" in card


def test_a_web_config_loads_with_datasets_and_its_card_names_the_crawl(crawl: Path, tmp_path: Path) -> None:
    import datasets

    out = tmp_path / "out"
    build([str(crawl)], [WEB], out, tagger="perceptron", workers=1, show_progress=False)
    loaded = datasets.load_dataset(str(out), "web")
    assert sum(len(split) for split in loaded.values()) == 2
    assert set(loaded["train"].column_names) >= {"record1", "record2", "date1", "date2", "html_lang1"}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Crawl files (1):" in card and "`shared.warc.gz`" in card
    assert "Image equivalence (§4.6): `url`" in card and "Profanity filter" in card


def test_the_real_excerpt_counts_its_references(tmp_path: Path) -> None:
    """whirlwind.warc.gz, a real Common Crawl capture: its alt texts are references, each counted."""
    report = build([str(WHIRLWIND)], [WEB], tmp_path / "out", tagger="perceptron", workers=1, show_progress=False)
    record = json.loads((tmp_path / "out" / "web" / "funnel.json").read_text(encoding="utf-8"))
    crawl = record["crawl"]
    assert crawl["records"] == 4 and crawl["html_pages"] == 1 and crawl["images_indexed"] == 0
    # its page's 7 <img> with an alt text and an http(s) src, as warcio and html.parser count them
    # (tests/test_real_archives.py's independent_alt_texts); no figure or table caption
    assert crawl["references"] == 7 and crawl["captions"] == {"figure": 0, "table": 0, "alt": 7}
    assert record["funnel"][0]["references"] == crawl["references"]  # url: references without a record stay
    assert report.rows["web"] == record["rows"]


def test_pixel_equivalence_leaves_out_references_without_a_record(tmp_path: Path) -> None:
    """Under pixels nothing of whirlwind's can be compared (no image records): every reference is counted out."""
    config = WEB.__class__(**{**WEB.__dict__, "equivalence": "pixels"})
    build([str(WHIRLWIND)], [config], tmp_path / "out", tagger="perceptron", workers=1, show_progress=False)
    record = json.loads((tmp_path / "out" / "web" / "funnel.json").read_text(encoding="utf-8"))
    without = record["identity"]["left_out"]["images_without_a_record"]
    assert without["references"] == record["crawl"]["references"] == 7
    assert record["funnel"][0]["references"] == 0


def test_spark_gives_the_local_rows(crawl: Path, tmp_path: Path, spark) -> None:
    from conftest import import_or_skip

    import_or_skip("pyspark")
    from builder.engines.spark import build_spark

    config = WEB.__class__(**{**WEB.__dict__, "equivalence": "phash", "splits": (), "set_size_z": 0.05})
    build([str(crawl)], [config], tmp_path / "local", tagger="perceptron", workers=1, show_progress=False)
    build_spark(
        [str(crawl)], [config], tmp_path / "spark", tagger="perceptron", workers=2, show_progress=False, spark=spark
    )
    local, spark = rows_of(tmp_path / "local"), rows_of(tmp_path / "spark")
    key = lambda row: row["id"]  # noqa: E731
    assert sorted(local, key=key) == sorted(spark, key=key) and len(local) == 3
    records = [json.loads((tmp_path / side / "web" / "funnel.json").read_text()) for side in ("local", "spark")]
    assert records[0]["funnel"] == records[1]["funnel"]
    assert records[0]["identity"] == records[1]["identity"]
    local_files = sorted((tmp_path / "local" / "web").glob("*.parquet"))
    spark_files = sorted((tmp_path / "spark" / "web").glob("*.parquet"))
    assert [file.read_bytes() for file in local_files] == [file.read_bytes() for file in spark_files]


def test_web_and_dump_configs_are_not_mixed(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="read one kind of input: web read web crawls"):
        ExtractionSettings.of([GOLD, WEB])
    with pytest.raises(ValueError, match="gold MediaWiki dumps"):
        build([str(tmp_path / "never-read.warc.gz")], [GOLD, WEB], tmp_path / "out", tagger="perceptron")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--sources", "link"], r"unknown reference sources \['link'\]; known: \['figure', 'table', 'alt'\]"),
        (["--identity", "sha1"], r"image identities \['sha1'\] are MediaWiki's .* by its equivalence"),
    ],
)
def test_a_wikipedia_option_given_to_a_web_build_is_one_line(option, message, tmp_path: Path, capsys) -> None:
    """An option only MediaWiki dumps have is refused before reading, in one line, not taken silently."""
    crawl = str(Path(__file__).parent / "data" / "web" / "whirlwind.warc.gz")
    code = main(["build", crawl, "--configs", "web", *option, "--output", str(tmp_path / "out"), "--quiet"])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert re.search(message, error)
    assert not (tmp_path / "out").exists()


def test_a_missing_web_library_stops_the_build_before_reading(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "selectolax" else real(name, *a))
    with pytest.raises(WebLibrariesMissing, match=r'selectolax: pip install "wikipedia-ipc\[web\]"'):
        build([str(tmp_path / "never-read.warc.gz")], [WEB], tmp_path / "out", tagger="perceptron")
    assert not (tmp_path / "out").exists()


def test_the_set_bound_is_the_thesis_rounding() -> None:
    """§5.1.2: sizes whose z-score stays under 0.05; with μ = 3.13 and σ = 25.87 the thesis kept sets of 4."""
    # sets whose statistics are the thesis's, its placeholder set of 846 copies among them (seed 003, ch. 5)
    thesis = [2] * 705 + [3] * 357 + [846]
    bound, stats = set_bound(thesis, 0.05)
    assert (round(stats["mean_images"], 2), round(stats["std_images"], 2)) == (3.13, 25.87)
    assert bound == 4 and stats["max_equal_images"] == 4 and stats["sets_that_yield_pairs"] == 1063
    bound, stats = set_bound([1, 2, 8], 0.05)  # μ = 3.67, σ = 3.09: 3.82 → sets of at most 3 images
    assert bound == 3 and stats["sets_that_yield_pairs"] == 3
    assert set_bound([2, 2, 2], 0.05)[0] is None and set_bound([5], 0.05)[0] is None


def test_the_web_deviations_are_in_the_docs() -> None:
    from builder.publish.fidelity import web_markdown_table

    assert web_markdown_table() in (ROOT / "docs" / "web.md").read_text(encoding="utf-8")


def test_the_wikipedia_build_needs_no_web_library(tmp_path: Path, perceptron_available: None) -> None:
    """fastwarc, selectolax, charset-normalizer, Pillow, imagehash and ada-url are the web extra's: a sample build runs
    with every one of them unimportable."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for name in ('fastwarc', 'selectolax', 'charset_normalizer', 'PIL', 'imagehash', 'ada_url'):\n"
        "    sys.modules[name] = None\n"
        "from wikipedia_ipc import main\n"
        f"sys.exit(main(['build', '--configs', 'gold', '--output', {str(tmp_path / 'out')!r}, '--tagger', "
        "'perceptron', '--workers', '1', '--quiet']))\n"
    )
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert list((tmp_path / "out" / "gold").glob("*.parquet"))


def test_the_set_bound_from_a_histogram_is_statistics_own() -> None:
    """μ and σ from the counts of each set size are the floats fmean and pstdev give over the sizes themselves."""
    import random
    import statistics
    from collections import Counter

    from builder.filters.web import set_bound_of_counts

    generator = random.Random(7)
    for _ in range(300):
        sizes = [generator.choice([1, 2, 3, 4, 8, 50, 1000]) for _ in range(generator.randrange(1, 60))]
        bound, stats = set_bound_of_counts(Counter(sizes), 0.05)
        assert stats["mean_images"] == round(statistics.fmean(sizes), 4)
        if len(sizes) > 1:
            spread = statistics.pstdev(sizes)
            assert stats["std_images"] == round(spread, 4)
            expected = max(1, math.ceil(statistics.fmean(sizes) + 0.05 * spread) - 1) if spread > 0 else None
            assert bound == expected


def test_the_per_image_state_stays_out_of_python(tmp_path: Path) -> None:
    """500,000 referenced image URLs (and an index of 50,000 records): every per-URL table is DuckDB's; the
    Python heap's peak during the image stage stays a few MB (a dict per URL took over 100 MB)."""
    import tracemalloc

    from builder.extract.web import WEB_IMAGE_SCHEMA
    from builder.filters.web import DuckDBImageTables, web_images

    urls = [f"https://cc.example.org/media/photo-{number}.jpg" for number in range(500_000)]
    referenced = tmp_path / "referenced.parquet"
    pq.write_table(pa.table({"image": urls, "references": [1 + number % 7 for number in range(len(urls))]}), referenced)
    index = tmp_path / "web-images.parquet"
    skipped = {"image": urls[::10], "skip": ["unreadable: not an image"] * len(urls[::10])}
    rows = {name: skipped.get(name, [None] * len(urls[::10])) for name in WEB_IMAGE_SCHEMA.names}
    pq.write_table(pa.table(rows, schema=WEB_IMAGE_SCHEMA), index)
    del urls, rows, skipped
    tracemalloc.start()
    try:
        with DuckDBImageTables([index], referenced, tmp_path, memory_limit="256MB") as tables:
            web = web_images(WEB, tables)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert web.record["images_referenced"] == 500_000 and web.record["left_out"]["unreadable"]["images"] == 50_000
    assert web.record["images_kept"] == 450_000 and web.record["equivalence_sets"] == 450_000
    assert peak < 16 * 2**20, f"{peak / 2**20:.1f} MB of Python objects"
