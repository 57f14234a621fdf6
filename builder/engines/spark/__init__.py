"""The Spark engine (PySpark), the second driver of :func:`builder.engines.core.run` beside :mod:`..local`.

:mod:`.engine` carries out the core's stages on RDDs and holds :func:`build_spark`; the modules it runs:

==================  ==========================================================================
:mod:`.session`     the session a build runs on: the configured master, else ``local[N]``
:mod:`.one_task`    a build too small for the cluster: the local engine's build in one executor task
:mod:`.read`        an extraction's output cached once on the executors
:mod:`.web`         a crawl's WARC files read on the executors
:mod:`.identity`    the image tables, the identity map and each config's references joined with it
:mod:`.shuffle`     grouping by key: PySpark's ``groupBy`` and joins without their copies
:mod:`.images`      a web build's image stage: one task's DuckDB, or Spark SQL
:mod:`.deja`        Déjà's rules on the executors, a tagger per worker
:mod:`.splits`      train/validation/test, the local engine's assignment
:mod:`.sql`         Spark SQL's views for the identity map, the image stage, a caption TSV and the splits
:mod:`.write`       each executor's parquet shards
==================  ==========================================================================

The names are loaded on first use: an executor that unpickles a function of :mod:`.web` imports this package,
and should not pay for the engine's imports (the core, pyarrow, the Hub client: about a second per worker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from builder.common import lazy_attributes

if TYPE_CHECKING:
    from builder.engines.spark.engine import SparkEngine, build_spark
    from builder.engines.spark.session import spark_session

__all__ = ["SparkEngine", "build_spark", "spark_session"]

_LAZY = {
    "SparkEngine": "builder.engines.spark.engine",
    "build_spark": "builder.engines.spark.engine",
    "spark_session": "builder.engines.spark.session",
}


__getattr__ = lazy_attributes(__name__, _LAZY)
