"""The Common Crawl–shaped crawl of benchmarks/web_scale.py: Table 4.1's shape, read by the toolkit as written."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import pytest

from benchmarks.web_scale import pool_size, write_cc_crawl
from builder.config import WEB
from builder.engines.local import build


def test_the_pool_gives_the_reuse_asked_for() -> None:
    """The Zipf pool's expected distinct images are the references over the reuse (bisection to 0.1%)."""
    import numpy as np

    for references, reuse in ((48_000, 8.0), (3_000, 11.0)):
        size = pool_size(references, reuse)
        weights = 1.0 / np.arange(1, size + 1)
        distinct = (1.0 - (1.0 - weights / weights.sum()) ** references).sum()
        assert abs(distinct - references / reuse) <= references / reuse * 0.002


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
    DataFrames) and what it broadcasts to them, in pickled bytes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from pyspark import RDD, SparkContext
        from pyspark.sql import DataFrame

        self.received = 0
        self.broadcast = 0

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

        monkeypatch.setattr(RDD, "collect", counted(RDD.collect))
        monkeypatch.setattr(RDD, "toLocalIterator", streamed(RDD.toLocalIterator))
        monkeypatch.setattr(DataFrame, "collect", counted(DataFrame.collect))
        monkeypatch.setattr(SparkContext, "broadcast", sent)


@pytest.mark.parametrize("equivalence", ["url", "pixels"])
def test_what_reaches_the_spark_driver_does_not_grow_with_the_images(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, perceptron_available: None, equivalence: str
) -> None:
    """Two crawls of two WARC files each, the second with 10 times the pages and images: the driver receives
    each source's counters and the stages' funnels, never the image records or each image URL's count, and
    broadcasts no per-image table (the exclusions of ``pixels``, every URL without a record, are joined)."""
    from builder.engines.spark import build_spark

    config = dataclasses.replace(WEB, equivalence=equivalence, splits=())  # split assignment streams pair digests
    measured = []
    for pages in (40, 400):
        folder = tmp_path / f"crawl-{pages}"
        held = write_cc_crawl(folder, pages, seed=1, per_page=24.1, reuse=8.0, page_kb=4.0, per_file=pages // 2)
        files = sorted(str(path) for path in folder.glob("*.warc.gz"))
        inbox = DriverInbox(monkeypatch)
        build_spark(files, [config], tmp_path / f"out-{pages}", tagger="perceptron", workers=2, spark=spark)
        measured.append((held["images"], inbox.received, inbox.broadcast))
        build(files, [config], tmp_path / f"local-{pages}", tagger="perceptron", workers=2, show_progress=False)
        local = sorted((tmp_path / f"local-{pages}" / "web").glob("*.parquet"))
        remote = sorted((tmp_path / f"out-{pages}" / "web").glob("*.parquet"))
        assert [file.read_bytes() for file in local] == [file.read_bytes() for file in remote]
        monkeypatch.undo()
    (images_small, received_small, sent_small), (images_large, received_large, sent_large) = measured
    assert images_large > 6 * images_small
    assert received_large < 1.5 * received_small + 20_000, measured
    assert sent_large < 1.5 * sent_small + 20_000, measured
