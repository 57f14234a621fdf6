"""The Common Crawl–shaped crawl of benchmarks/web_scale.py: Table 4.1's shape, read by the toolkit as written."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.web_scale import alternated, median_run, pool_size, rate_line, write_cc_crawl
from builder.config import WEB
from builder.engines.local import build


def test_the_pool_gives_the_reuse_asked_for() -> None:
    """References drawn by the Zipf law from the pool use about references / reuse distinct images."""
    import numpy as np

    generator = np.random.default_rng(3)
    for references, reuse in ((48_000, 8.0), (3_000, 11.0)):
        size = pool_size(references, reuse)
        weights = 1.0 / np.arange(1, size + 1)
        drawn = generator.choice(size, size=references, p=weights / weights.sum())
        assert abs(len(np.unique(drawn)) - references / reuse) <= references / reuse * 0.05


def test_repeated_runs_alternate_the_engines_and_report_the_median_and_the_spread() -> None:
    """``--repeat``: each round reverses the engines' order; the figures are the median run's, the spread is the
    runs' and the paired ratios are taken round by round."""
    assert alternated(["local", "spark"], 3) == [["local", "spark"], ["spark", "local"], ["local", "spark"]]
    assert alternated(["spark"], 2) == [["spark"], ["spark"]]

    def run(seconds: float) -> dict:
        return {"seconds": {"extraction": seconds / 2, "tagging": seconds / 2}}

    runs = {("local", 100): [run(10.0), run(12.5), run(8.0)], ("spark", 100): [run(12.5), run(10.0), run(25.0)]}
    assert median_run(runs["local", 100]) is runs["local", 100][0]  # 10 s, between 8 and 12.5
    assert median_run([run(4.0), run(2.0)])["seconds"]["tagging"] == 1.0  # an even count: the lower middle
    line = rate_line(runs, 100, workers=2)
    # rates 100 / s / 2: local 5, 4, 6.25 (median 5); Spark 4, 5, 2 (median 4); paired ratios 0.8, 1.25, 0.32
    assert line == (
        "local 5 (4–6 over 3 runs), spark 4 (2–5 over 3 runs); Spark at 0.80× the local engine's rate "
        "(the runs paired by round: 0.32–1.25×)"
    )
    assert rate_line({("local", 100): [run(10.0)]}, 100, workers=2) == "local 5"


def test_the_crawl_has_table_4_1_s_shape_and_the_build_reads_all_of_it(
    tmp_path: Path, perceptron_available: None
) -> None:
    held = write_cc_crawl(tmp_path / "crawl", 150, seed=0, per_page=24.1, reuse=8.0, page_kb=10.0, per_file=50)
    files = sorted(str(path) for path in (tmp_path / "crawl").glob("*.warc.gz"))
    assert len(files) == 3 and held["pages"] == 150
    assert 20 <= held["references"] / held["pages"] <= 28 and 6.5 <= held["reuse"] <= 9.5
    build(files, [WEB], tmp_path / "out", tagger="perceptron", workers=2, show_progress=False)
    record = json.loads((tmp_path / "out" / "web" / "funnel.json").read_text(encoding="utf-8"))
    crawl = record["crawl"]
    assert crawl["html_pages"] == 150 and crawl["warc_files"] == 3 and crawl["warc_files_failed"] == 0
    assert crawl["references"] == held["captioned"]  # every figure caption and alt text the generator wrote
    assert record["funnel"][-1]["pairs"] > 0


class DriverInbox:
    """Counts what the driver receives from the executors (``collect``, ``toLocalIterator`` of RDDs and
    DataFrames), what it broadcasts to them and what it ships them as data (``parallelize``, under
    ``createDataFrame`` of a list too), in pickled bytes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from pyspark import RDD, SparkContext
        from pyspark.sql import DataFrame

        self.received = 0
        self.broadcast = 0
        self.shipped = 0

        def counted(method):  # noqa: ANN001, ANN202
            def collect(frame, *arguments, **options):  # noqa: ANN001, ANN202
                rows = method(frame, *arguments, **options)
                self.received += len(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
                return rows

            return collect

        def streamed(method):  # noqa: ANN001, ANN202
            def iterate(frame, *arguments, **options):  # noqa: ANN001, ANN202
                for row in method(frame, *arguments, **options):
                    self.received += len(pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL))
                    yield row

            return iterate

        broadcast = SparkContext.broadcast

        def sent(context, value):  # noqa: ANN001, ANN202
            self.broadcast += len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            return broadcast(context, value)

        parallelize = SparkContext.parallelize

        def shipped(context, data, *arguments, **options):  # noqa: ANN001, ANN202
            data = list(data) if not isinstance(data, range) else data
            self.shipped += len(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
            return parallelize(context, data, *arguments, **options)

        monkeypatch.setattr(SparkContext, "parallelize", shipped)
        monkeypatch.setattr(RDD, "collect", counted(RDD.collect))
        monkeypatch.setattr(RDD, "toLocalIterator", streamed(RDD.toLocalIterator))
        monkeypatch.setattr(DataFrame, "collect", counted(DataFrame.collect))
        monkeypatch.setattr(SparkContext, "broadcast", sent)


@pytest.mark.parametrize("equivalence", ["url", "pixels"])
def test_what_reaches_the_spark_driver_does_not_grow_with_the_images(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None, equivalence: str
) -> None:
    """Two crawls of two WARC files each, the second with 10 times the pages, images and pairs: the driver receives
    each source's counters and the stages' funnels, never the image records, each image URL's count, the identity
    map of equal images or the pairs' split assignment (computed in Spark SQL: totals only), and broadcasts or
    ships no per-image table (the exclusions of ``pixels``, every URL without a record, are joined)."""
    from builder.engines.spark import build_spark

    config = dataclasses.replace(WEB, equivalence=equivalence)  # with the default splits
    measured = []
    for pages in (40, 400):
        folder = tmp_path / f"crawl-{pages}"
        held = write_cc_crawl(folder, pages, seed=1, per_page=24.1, reuse=8.0, page_kb=4.0, per_file=pages // 2)
        files = sorted(str(path) for path in folder.glob("*.warc.gz"))
        inbox = DriverInbox(monkeypatch)
        build_spark(files, [config], tmp_path / f"out-{pages}", tagger="perceptron", workers=2, spark=spark)
        monkeypatch.undo()
        build(files, [config], tmp_path / f"local-{pages}", tagger="perceptron", workers=2, show_progress=False)
        local = sorted((tmp_path / f"local-{pages}" / "web").glob("*.parquet"))
        remote = sorted((tmp_path / f"out-{pages}" / "web").glob("*.parquet"))
        assert [file.name for file in local] == [file.name for file in remote]
        assert [file.read_bytes() for file in local] == [file.read_bytes() for file in remote]
        records = [
            json.loads((tmp_path / side / "web" / "funnel.json").read_text())
            for side in (f"local-{pages}", f"out-{pages}")
        ]
        assert records[0]["splits"] == records[1]["splits"] and records[0]["identity"] == records[1]["identity"]
        pairs = sum(records[1]["splits"]["pairs"].values())
        measured.append((held["images"], pairs, inbox.received, inbox.broadcast + inbox.shipped))
    (images_small, pairs_small, received_small, sent_small), (images_large, pairs_large, received_large, sent_large) = (
        measured
    )
    assert images_large > 6 * images_small, measured
    if equivalence == "url":  # the crawl holds no image records: under pixels every reference is left out
        assert pairs_large > 6 * pairs_small > 0, measured
    assert received_large < 1.5 * received_small + 20_000, measured
    assert sent_large < 1.5 * sent_small + 20_000, measured
    print(f"driver bytes ({equivalence}): {measured}")


def merged_images(web) -> dict[str, str]:  # noqa: ANN001 - a WebImages
    """The engine's identity map of a web build: each merged URL → the smallest URL of its set (a DuckDB build's
    parquet file, or Spark's DataFrame); every URL its own redirect."""
    table = web.identity.table
    if table is None:
        return {}
    rows = pq.read_table(table).to_pylist() if isinstance(table, Path) else [row.asDict() for row in table.collect()]
    assert all(row["redirect"] == row["file"] for row in rows)
    assert web.identity.map.changed_titles() == len(rows)
    return {row["file"]: row["image"] for row in rows}


def _index_of(folder: Path, hashes: dict[str, list[int]], bits: int) -> tuple[Path, Path, dict[str, object]]:
    """An image index and referenced counts whose images have the given hashes (their orientations under
    ``phash-rotation``; the first one is each image's phash, ahash and dhash), and those images' facts."""
    from builder.extract.web import WEB_IMAGE_SCHEMA
    from builder.filters.web import _facts

    rows = []
    for image, values in hashes.items():
        facts = {
            "width": 640, "height": 480, "bytes": 40_000, "format": "JPEG", "transparent_pixels": 0,
            "pixels_md5": image, "ahash": values[0], "dhash": values[0], "phash": values[0],
            "phash_orientations": values, "hash_bits": bits,
        }  # fmt: skip
        rows.append({"image": image, "facts": json.dumps(facts, sort_keys=True)})
    index, referenced = folder / "index.parquet", folder / "referenced.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=WEB_IMAGE_SCHEMA), index)
    pq.write_table(pa.table({"image": list(hashes), "references": [2] * len(hashes)}), referenced)
    return index, referenced, {row["image"]: _facts(row["facts"]) for row in rows}


def _near_hashes(seed: int, images: int, bits: int, orientations: int) -> dict[str, list[int]]:
    """Hashes in clusters: copies of a few originals with a few bits flipped, so that chains of links form."""
    import random

    generator = random.Random(seed)
    originals = [generator.getrandbits(bits) for _ in range(max(1, images // 4))]
    hashes = {}
    for number in range(images):
        value = generator.choice(originals)
        for _ in range(generator.randrange(0, 6)):
            value ^= 1 << generator.randrange(bits)
        more = [generator.getrandbits(bits) for _ in range(orientations - 1)]
        hashes[f"https://x.example/{number:04d}.jpg"] = [value, *more]
    return hashes


@pytest.mark.parametrize(
    ("equivalence", "hash_size", "threshold"),
    [("phash", 6, 4), ("phash", 6, 0), ("phash-rotation", 6, 4), ("dhash", 8, 10), ("phash", 3, 9)],
)
def test_the_engine_links_hashes_as_group_by_hash_does(
    tmp_path: Path, equivalence: str, hash_size: int, threshold: int
) -> None:
    """The band join and the rounds of smallest labels in DuckDB give group_by_hash's sets, on clusters of
    near hashes (a threshold of 0: equal hashes only; 9 of 9 bits: everything one set)."""
    from builder.filters.web import DuckDBImageTables, equivalence_groups, web_images

    bits = hash_size**2
    for seed in range(3):
        folder = tmp_path / f"{equivalence}-{threshold}-{seed}"
        folder.mkdir()
        orientations = 8 if equivalence == "phash-rotation" else 1
        index, referenced, facts = _index_of(folder, _near_hashes(seed, 120, bits, orientations), bits)
        config = dataclasses.replace(WEB, equivalence=equivalence, hash_size=hash_size, hash_threshold=threshold)
        with DuckDBImageTables([index], referenced, folder) as tables:
            web = web_images(config, tables)
        expected = equivalence_groups(facts, config)
        assert sorted(merged_images(web).items()) == sorted(
            (image, group[0]) for group in expected for image in group[1:]
        )
        assert web.record["images_merged"] == sum(len(group) - 1 for group in expected)


def test_spark_links_hashes_as_duckdb_does(spark, tmp_path: Path) -> None:
    """The same SQL on Spark: the same sets, the same record."""
    from builder.engines.spark.sql import SparkImageTables
    from builder.filters.web import DuckDBImageTables, web_images

    bits = 36
    index, referenced, _ = _index_of(tmp_path, _near_hashes(5, 150, bits, 8), bits)
    config = dataclasses.replace(WEB, equivalence="phash-rotation", hash_threshold=4)
    with DuckDBImageTables([index], referenced, tmp_path) as tables:
        local = web_images(config, tables)
        local_map = merged_images(local)
    records = [
        (row["image"], row["facts"], row["skip"], 0, number)
        for number, row in enumerate(pq.read_table(index).to_pylist())
    ]
    counted = [(row["image"], row["references"]) for row in pq.read_table(referenced).to_pylist()]
    context = spark.sparkContext
    kept: list = []
    with SparkImageTables(spark, context.parallelize(records, 3), context.parallelize(counted, 2), kept) as tables:
        remote = web_images(config, tables)
        remote_map = merged_images(remote)
    assert remote_map == local_map and local_map
    assert remote.identity.map == local.identity.map  # the counts funnel.json reads
    assert remote.record == local.record


@pytest.mark.parametrize("equivalence", ["phash-rotation", "pixels", "url"])
def test_the_image_stage_in_one_task_is_the_sql_ones(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, equivalence: str
) -> None:
    """Few images go to one task's DuckDB (:mod:`builder.engines.spark.images`), many to Spark SQL: the same sets,
    record and bound, and the same exclusions (an image URL without a record, a record that failed a rule, a record
    skipped while read) and identity map on the executors, whichever way ran; the first record of an image in input
    order decides, wherever its partition is. An image URL's references come in several sources' counts, added up
    either way; a task that finds more images than the bound stops there and the stage runs in SQL."""
    import builder.engines.spark.images
    from builder.filters.web import web_images

    bits = 36
    index, referenced, _ = _index_of(tmp_path, _near_hashes(7, 150, bits, 8), bits)
    rows = pq.read_table(index).to_pylist()
    shared = [json.dumps(json.loads(row["facts"]) | {"pixels_md5": f"md5-{n % 40}"}) for n, row in enumerate(rows)]
    records = [(row["image"], shared[n], row["skip"], 1 + n % 3, n) for n, row in enumerate(rows)]  # 40 pixel sets
    tiny = json.loads(rows[0]["facts"]) | {"width": 20, "height": 20}  # under §4.3.2's size rule
    records += [(rows[0]["image"], json.dumps(tiny), None, 0, 0)]  # the image's first record, in the first source
    records += [(rows[1]["image"], None, "corrupt", 0, 1)]
    counted = [(row["image"], row["references"]) for row in pq.read_table(referenced).to_pylist()]
    counted += [("https://x.example/without-a-record.jpg", 3)]
    # each URL's references as two sources count them (one and the rest), the sources' items in turn
    counted = [(image, 1) for image, _ in counted] + [(image, n - 1) for image, n in counted if n > 1]
    config = dataclasses.replace(WEB, equivalence=equivalence, hash_threshold=4, set_size_z=1.0)
    context = spark.sparkContext
    made = {}
    for way, bound in (("one task", 10_000), ("sql", 0), ("over in the task", len(records) + 5)):
        monkeypatch.setattr(builder.engines.spark.images, "IMAGES_IN_ONE_TASK", bound)
        kept: list = []
        web = builder.engines.spark.images.image_stage(
            spark, context.parallelize(records, 3), context.parallelize(counted, 2),
            lambda tables: web_images(config, tables), "1GB", kept,
        )  # fmt: skip
        # which way ran: the one task's rows are kept as KeptRows, Spark SQL's as a DataFrame
        assert isinstance(web.excluded, builder.engines.spark.images.KeptRows) == (way == "one task")
        excluded = sorted(tuple(row) for row in web.excluded.collect())
        made[way] = (web.record, web.max_equal_images, merged_images(web), web.identity.map, excluded)
        for rdd in kept:
            rdd.unpersist()
    assert made["one task"] == made["sql"] == made["over in the task"]
    record, _, merged, _, excluded = made["sql"]
    assert record["images_referenced"] == len({image for image, _ in counted})  # each URL once, its counts added
    assert record["references"] == sum(n for _, n in counted)
    without = ("https://x.example/without-a-record.jpg", "images_without_a_record")
    assert (without in excluded) == (equivalence != "url")  # the url equivalence needs no record to compare
    assert {image for image, _ in excluded} >= {rows[0]["image"], rows[1]["image"]}
    assert bool(merged) == (equivalence != "url")
    assert record["image_records_repeated"] == 2
