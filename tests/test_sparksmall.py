"""A Spark build too small for the cluster runs as one task (:mod:`builder.engines.sparksmall`): the local engine's
files, its report and its errors, from one Spark job; and which inputs qualify."""

from __future__ import annotations

import dataclasses
import gzip
import re
from pathlib import Path

import pytest
from test_spark import local_sample, same_output  # noqa: F401 - local_sample is a fixture

import wikipedia_ipc
from builder.config import GOLD, SILVER, BuildOptions
from builder.engines.local import build
from builder.engines.sparksmall import _portable_error, one_task_input

EIGHT_MIB = 8 * 2**20


def test_a_small_build_is_one_spark_job_with_the_local_engines_files(spark, tmp_path: Path, local_sample: Path) -> None:  # noqa: F811
    """Gold and silver of the sample in one job; the files, the funnels and the report's counts as the local
    engine gives them (its chains rebuilt on the driver from each config and funnel)."""
    from builder.engines.spark import build_spark

    context = spark.sparkContext
    context.setJobGroup("one-task", "one-task")
    try:
        report = build_spark(
            [wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], tmp_path / "spark", tagger="perceptron", workers=2,
            spark=spark, spark_one_task_bytes=EIGHT_MIB, show_progress=False,
        )  # fmt: skip
        jobs = context.statusTracker().getJobIdsForGroup("one-task")
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert len(jobs) == 1
    for config in ("gold", "silver"):
        same_output(local_sample, tmp_path / "spark", config)
    local = build([wikipedia_ipc.SAMPLE_DUMP], [GOLD, SILVER], tmp_path / "local", tagger="perceptron",
                  show_progress=False)  # fmt: skip
    assert report.rows == local.rows and report.rows["silver"] > 0
    assert report.splits == local.splits
    for name, chain in local.funnels.items():
        assert [vars(row) for row in report.funnels[name].funnel.rows] == [vars(row) for row in chain.funnel.rows]
        assert report.funnels[name].steps[0].row is report.funnels[name].funnel.rows[0]  # the steps count there
    assert report.output == (tmp_path / "spark").resolve()


def test_a_small_builds_error_is_the_local_engines(spark, tmp_path: Path) -> None:
    """A dump that is not a dump stops the one-task build with the error the local engine gives, raised on the
    driver (not Spark's wrapping of a task's failure), and leaves no output behind."""
    from builder.engines.spark import build_spark

    broken = tmp_path / "enwiki-20240101-pages-articles.xml.bz2"
    broken.write_bytes(b"BZh91AY&SY" + b"\0" * 64)  # a bz2 header and nothing a reader can decompress
    with pytest.raises(Exception) as local:  # noqa: PT011 - whatever the local engine raises
        build([broken], [GOLD], tmp_path / "local", tagger="perceptron", show_progress=False)
    with pytest.raises(type(local.value), match=re.escape(str(local.value))):
        build_spark([broken], [GOLD], tmp_path / "spark", tagger="perceptron", workers=2, spark=spark,
                    spark_one_task_bytes=EIGHT_MIB, show_progress=False)  # fmt: skip
    assert not (tmp_path / "spark" / "gold").exists()


def test_which_inputs_run_as_one_task(tmp_path: Path) -> None:
    """Local files within the bound, the tables they name counted too; a URL, a listing, a folder, a tagger object
    or a bound of 0 spread the build."""
    dump = wikipedia_ipc.SAMPLE_DUMP
    size = dump.stat().st_size
    table = tmp_path / "enwiki-image.sql.gz"
    table.write_bytes(gzip.compress(b"-- an image table\n"))
    options = BuildOptions(spark_one_task_bytes=EIGHT_MIB)
    assert one_task_input([dump], options) == size
    assert one_task_input([dump], dataclasses.replace(options, image_tables=(table,))) == size + table.stat().st_size
    assert one_task_input([dump, dump], dataclasses.replace(options, spark_one_task_bytes=2 * size)) == 2 * size
    assert one_task_input([dump, dump], dataclasses.replace(options, spark_one_task_bytes=2 * size - 1)) is None
    assert one_task_input([dump], dataclasses.replace(options, spark_one_task_bytes=0)) is None
    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress(b"crawl-data/x.warc.gz\n"))
    for spread in ([f"s3://bucket/{dump.name}"], [listing], [tmp_path], [tmp_path / "missing.xml.bz2"], []):
        assert one_task_input(spread, options) is None
    tagger = build  # any object that is not a tagger's name
    assert one_task_input([dump], dataclasses.replace(options, tagger=tagger)) is None  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="spark_one_task_bytes must be 0 or more, not -1"):
        BuildOptions(spark_one_task_bytes=-1)


class _TwoArguments(Exception):
    """An error whose pickle does not come back: its ``__init__`` wants two arguments, its ``args`` hold one."""

    def __init__(self, file: str, line: int) -> None:
        super().__init__(f"{file}:{line}: broken")


def test_an_error_that_does_not_survive_pickling_keeps_its_type_and_message() -> None:
    assert isinstance(_portable_error(ValueError("x")), ValueError)
    crossed = _portable_error(_TwoArguments("dump.xml", 7))
    assert type(crossed) is RuntimeError
    assert str(crossed) == "_TwoArguments: dump.xml:7: broken"
