"""The Spark engine runs the same stages as the local engine and must give the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_bronze import HISTORY
from test_pairs import STEP_7_TO_9_PAGES

import wikipedia_ipc
from builder.config import BRONZE, GOLD, SILVER
from builder.data.make_sample import dump_xml
from builder.local import build
from builder.spark import build_spark


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = SparkSession.builder.master("local[2]").appName("wikipedia-ipc-tests").getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def same_output(first: Path, second: Path, config: str) -> None:
    one = sorted((first / config).glob("*.parquet"))
    two = sorted((second / config).glob("*.parquet"))
    assert [p.name for p in one] == [p.name for p in two]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(one, two, strict=True))
    funnel_one = json.loads((first / config / "funnel.json").read_text())["funnel"]
    funnel_two = json.loads((second / config / "funnel.json").read_text())["funnel"]
    assert funnel_one == funnel_two


def test_sample_gold_and_silver(spark, tmp_path: Path, perceptron_available: None) -> None:
    build([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], tmp_path / "local", tagger="perceptron", show_progress=False)
    report = build_spark([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], tmp_path / "spark", "perceptron", 2, spark)
    assert report.rows == {"gold": 10, "silver": 20}  # the presets' sources: no galleries
    same_output(tmp_path / "local", tmp_path / "spark", "gold")
    same_output(tmp_path / "local", tmp_path / "spark", "silver")


def test_bronze_history(spark, tmp_path: Path, perceptron_available: None) -> None:
    dump = tmp_path / "enwiki-20240101-pages-meta-history1.xml"
    dump.write_text(dump_xml(HISTORY), encoding="utf-8")
    build([dump], [BRONZE], tmp_path / "local", tagger="perceptron", show_progress=False)
    build_spark([dump], [BRONZE], tmp_path / "spark", "perceptron", 2, spark)
    same_output(tmp_path / "local", tmp_path / "spark", "bronze")


def test_unique_candidates_across_images(spark, tmp_path: Path, perceptron_available: None) -> None:
    """Step 7 is build-wide: the driver applies it in image order, whatever the partitions."""
    dump = tmp_path / "enwiki-20240101-pages-articles.xml"
    dump.write_text(dump_xml(STEP_7_TO_9_PAGES), encoding="utf-8")
    build([dump], [SILVER], tmp_path / "local", tagger="perceptron", show_progress=False)
    report = build_spark([dump], [SILVER], tmp_path / "spark", "perceptron", 2, spark)
    assert report.rows == {"silver": 1}
    same_output(tmp_path / "local", tmp_path / "spark", "silver")
