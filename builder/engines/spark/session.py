"""The Spark session a build runs on: the configured master (``spark-submit`` sets it), else ``local[N]`` with the
settings a build on one machine needs."""

from __future__ import annotations

import os
import sys

from builder.common import pool_size

__all__ = ["LOCAL_JVM_OPTIONS", "PYTHON_WORKER_MEMORY", "spark_session"]

# What a local session is given unless the user set it (a cluster's settings are its administrator's):
# * ``spark.default.parallelism``: unset, PySpark gives a shuffle as many partitions as its input has and a join
#   the sum of both sides', so the engine's chain of joins doubles the partitions at each step (16 extraction tasks
#   of a small history became 104 partitions per stage). Set, every shuffle gets the master's core count;
#   ``spark.sql.shuffle.partitions`` the same for the SQL of a web build's image stage and of the split assignment
#   (Spark's default is 200 partitions per shuffle, whatever the data).
# * ``spark.python.worker.memory``: PySpark's aggregation limit, measured on the whole Python worker. A worker
#   that loaded a spaCy or stanza model for tagging is over the default 512 MB before any data, and then spills
#   every shuffle to disk in small batches; the limit is set above the models' size.
# * ``spark.sql.adaptive.enabled``: off. Adaptive execution runs each shuffle of a query as a job of its own, to
#   re-plan from its output; on the few cores of one machine it has nothing to coalesce or rebalance (the shuffles
#   already have a partition per core), and the SQL of the identity map, the image stage and the split assignment
#   is rounds of small joins: a round was 10 to 14 jobs with it, 1 without, at about 0.1 s of fixed cost per job.
# * ``spark.driver.extraJavaOptions``: the JVM's first JIT tier only (C1). A local session's JVM is the executors'
#   and shares their cores with the Python workers, which do the work; the JVM moves pickled bytes between them, to
#   the cache and through the shuffles, and C2's compilations of that code were CPU the workers waited for: a
#   20,000-page crawl's build 41.2–41.6 s with C1 only against 44.6–45.3 s (issue 48, alternating runs).
PYTHON_WORKER_MEMORY = "3g"
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def _local_cores(master: str, workers: int) -> int:
    """The cores of a ``local``, ``local[N]`` or ``local[*]`` master (``local[N,F]`` too)."""
    inside = master[master.index("[") + 1 : master.index("]")].split(",")[0] if "[" in master else "1"
    return (os.cpu_count() or workers) if inside == "*" else int(inside)


def spark_session(workers: int, settings: dict[str, str] | None = None):  # noqa: ANN201 - a pyspark.sql.SparkSession
    """A session on the configured master (spark-submit sets it), else ``local[workers]`` (at most the cores);
    ``settings`` added."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("wikipedia-ipc")
    configured = SparkConf()
    own = f"local[{pool_size(workers)}]"  # this machine's cores at most: each runs a Python worker process
    if not configured.contains("spark.master"):
        builder = builder.master(own)
    master = configured.get("spark.master", own)
    if master.startswith("local"):
        if not configured.contains("spark.pyspark.python"):
            # local workers run on this machine: give them this interpreter (and its packages),
            # not whatever ``python3`` is first on the PATH
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        cores = str(_local_cores(master, workers))
        local = {
            "spark.default.parallelism": cores,
            "spark.sql.shuffle.partitions": cores,
            "spark.python.worker.memory": PYTHON_WORKER_MEMORY,
            "spark.sql.adaptive.enabled": "false",
            "spark.driver.extraJavaOptions": LOCAL_JVM_OPTIONS,
        }
        for key, value in local.items():
            if not configured.contains(key):
                builder = builder.config(key, value)
    for key, value in (settings or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
