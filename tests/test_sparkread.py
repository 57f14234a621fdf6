"""An extraction's output cached on Spark (:mod:`builder.engines.spark.read`): each source's task runs once, whatever
reads the output after, and the items apart are the output's other kinds, each source's in its task's order."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

from builder.engines.spark.read import cached_apart, cached_once, counters


def _source(marks: Path):  # noqa: ANN202 - a source's task, by value (the workers cannot import the tests)
    def read(numbers: Iterable[int]) -> Iterator[tuple[str, object]]:
        """A source's task: a mark of each run in ``marks``, then its big items, its few items and its counters."""
        for number in numbers:
            (marks / f"{number}-{uuid.uuid4().hex}").touch()
            for chunk in range(3):
                yield "big", (number, b"x" * 1000 * (chunk + 1))
                yield "few", (number, chunk)
            yield "stats", (number, {"chunks": 3})

    return read


def _runs(marks: Path) -> list[int]:
    return sorted(int(path.name.split("-")[0]) for path in marks.iterdir())


def test_each_source_is_read_once(spark, tmp_path: Path) -> None:
    context = spark.sparkContext
    rdd = context.parallelize(range(7), 7).mapPartitions(_source(tmp_path))
    extracted, few = cached_apart(rdd, "big")
    assert _runs(tmp_path) == list(range(7))  # filled by the JVM's count
    assert few.getNumPartitions() == context.defaultParallelism == 2
    assert counters(few) == {number: {"chunks": 3} for number in range(7)}
    found = few.filter(lambda item: item[0] == "few").values().collect()
    assert sorted(found) == [(number, chunk) for number in range(7) for chunk in range(3)]
    for number in range(7):  # a source's items in its task's order
        assert [chunk for n, chunk in found if n == number] == [0, 1, 2]
    assert few.filter(lambda item: item[0] == "big").count() == 0
    sizes = extracted.filter(lambda item: item[0] == "big").map(lambda item: len(item[1][1])).collect()
    assert sorted(sizes) == sorted([1000, 2000, 3000] * 7)
    assert _runs(tmp_path) == list(range(7))  # every read after was the cache's
    extracted.unpersist()
    few.unpersist()


def test_cached_once_counts_in_the_jvm(spark, tmp_path: Path) -> None:
    context = spark.sparkContext
    rdd = context.parallelize(range(3), 3).mapPartitions(_source(tmp_path))
    rows = cached_once(rdd)
    assert _runs(tmp_path) == [0, 1, 2]
    assert counters(rows) == {number: {"chunks": 3} for number in range(3)}
    assert rows.count() == 3 * 7
    assert _runs(tmp_path) == [0, 1, 2]
    rows.unpersist()
