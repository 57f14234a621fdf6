"""An extraction's output on Spark's executors, cached once (:class:`.engine.SparkEngine` reads every
input so): the tasks that read the sources run their Python once, and the few items the stages after read often
(each source's counters, image records, page records) are cached apart in a task per core.

A PySpark action on a cached RDD runs a second Python worker in each task, which reads the block just cached back
from the JVM: on a crawl of 200 WARC files, caching with that second pass took 179–180 s of the executors' time
where reading alone took 138–148 s, 15–20 s of the build's (measured, issue 48). The cache is made by a count in
the JVM instead, which runs no Python, and the items apart are gathered by one pass of a task per core, whose output
the later reads share.
"""

from __future__ import annotations

from builder.engines.spark.sql import spill

__all__ = ["cached_apart", "cached_once", "counters"]


def cached_once(rdd, level=None):  # noqa: ANN001, ANN201 - an RDD, a pyspark.StorageLevel; the RDD
    """``rdd`` cached (``level``, else in memory), its tasks run once by a count in the JVM, without a Python worker
    reading each block back."""
    rdd = rdd.cache() if level is None else rdd.persist(level)
    rdd._jrdd.count()  # noqa: SLF001 - PySpark's own count is Python's, over the block just cached
    return rdd


def _fewer(rdd):  # noqa: ANN001, ANN202 - RDDs
    """``rdd`` read in a task per core at most (no shuffle): for the few items, whose tasks would be mostly
    fixed costs (about 10 ms a task on ``local[2]``: a read of 200 sources' counters 2.2 s, of 2 tasks 0.4 s). The
    references keep a task per source, which balances the cores when the sources' sizes differ."""
    return rdd.coalesce(max(1, min(rdd.getNumPartitions(), rdd.context.defaultParallelism)))


def cached_apart(extracted, large: str):  # noqa: ANN001, ANN201 - an RDD of (kind, item); two RDDs
    """``extracted`` cached (:func:`cached_once`); and the RDD of its items of every kind but ``large``, in a
    partition per core at most (each source's items still in the order its task gave them), cached too. The caller
    releases both."""
    extracted = cached_once(extracted)
    return extracted, _fewer(extracted).filter(lambda item, k=large: item[0] != k).persist(spill())


def counters(rdd) -> dict:  # noqa: ANN001 - an RDD of (kind, item)
    """Each task's counters, ``{task number: result}``, from its ``("stats", (task number, result))`` item, read in
    a task per core at most."""
    return dict(_fewer(rdd).filter(lambda item: item[0] == "stats").values().collect())
