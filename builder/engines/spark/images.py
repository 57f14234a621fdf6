"""A web build's image stage on Spark (:meth:`.engine.SparkEngine.image_stage`): in one executor task
when the crawl's images are few, in Spark SQL over the executors otherwise.

The stage's SQL (:func:`builder.filters.web.web_images`) is a few tables and a few counting queries, each one
Spark job with its planning on the driver: ten jobs and 7.9 s for a crawl of 20,000 pages on ``local[2]``, where
DuckDB takes 0.3 s (issue 48), and 15 s at 200,000 pages. The images grow with the crawl far slower than its
references (a crawl of 200,000 pages of Common Crawl's shape references about 600,000 image URLs). So one task
gathers the image records and each source's counts of references per image URL (no shuffle: a coalesce of the
cached items), adds up each URL's counts and runs the same function in DuckDB, the local engine's tables
(:class:`builder.filters.web.DuckDBImageTables`); the exclusions and the identity map it keeps come back as rows of
that task's cached output, what the engine's ``select`` joins with, and only the counters reach the driver. When the
records and the distinct URLs pass :data:`IMAGES_IN_ONE_TASK`, the task stops there and says so, and the stage runs
in Spark SQL over the URLs' counts added up by a shuffle. The task is tried first, not after a job that counts: the
count was a shuffle of every source's counts, 2.9 s of a 200,000-page crawl's build, for a stage whose one task
then took 2.3 s.
"""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.engines.spark.sql import SparkImageTables, spill
from builder.filters.web import DuckDBImageTables, ImageTables, WebImages

__all__ = ["IMAGES_IN_ONE_TASK", "image_stage"]

# image records and referenced image URLs at most that one task's DuckDB computes the stage over: a few hundred MB
# in the task, seconds of work, where Spark SQL's jobs cost seconds each way
IMAGES_IN_ONE_TASK = 2_000_000


def _in_duckdb(
    images: Callable[[ImageTables], WebImages], memory_limit: str, bound: int, items: Iterable[tuple[str, tuple]]
) -> Iterator[tuple[str, object]]:
    """On the executor: ``images`` over the gathered ``("record", (image, facts, skip, position, record))`` and
    ``("referenced", (image, references))`` items (an image URL's references in one or several counts) in DuckDB;
    ``("web", WebImages)`` (its engine tables left out) and the rows it kept, ``("excluded", (image, reason))`` and
    ``("identity", (file, redirect, image))``. Only ``("over", records and URLs read)`` once they pass ``bound``
    (:data:`IMAGES_IN_ONE_TASK`), the rest left unread."""
    records: list[tuple] = []
    referenced: dict[str, int] = {}
    for kind, item in items:
        if kind == "record":
            records.append(item)
        else:
            image, count = item
            referenced[image] = referenced.get(image, 0) + count
        if len(records) + len(referenced) > bound:
            yield "over", len(records) + len(referenced)
            return
    records.sort(key=lambda record: (record[3], record[4]))  # input order: the first record of each image
    with tempfile.TemporaryDirectory(prefix="wikipedia-ipc-images-") as scratch:
        work = Path(scratch)
        index = work / "records.parquet"  # one index file, its rows in input order
        columns = ("image", "facts", "skip")
        table = {column: pa.array([r[n] for r in records], pa.string()) for n, column in enumerate(columns)}
        pq.write_table(pa.table(table), index)
        counts = work / "referenced.parquet"
        table = {
            "image": pa.array(list(referenced), pa.string()),
            "references": pa.array(referenced.values(), pa.int64()),
        }
        pq.write_table(pa.table(table), counts)
        with DuckDBImageTables([index], counts, work, memory_limit) as tables:
            web = images(tables)
        if web.excluded is not None:
            for row in pq.read_table(web.excluded, columns=["image", "reason"]).to_pylist():
                yield "excluded", (row["image"], row["reason"])
        if web.identity.table is not None:
            for row in pq.read_table(web.identity.table, columns=["file", "redirect", "image"]).to_pylist():
                yield "identity", (row["file"], row["redirect"], row["image"])
    held = dataclasses.replace(web.identity, table=web.identity.table is not None)
    yield "web", dataclasses.replace(web, identity=held, excluded=web.excluded is not None)


def image_stage(
    session,  # noqa: ANN001 - a pyspark.sql.SparkSession
    records,  # noqa: ANN001 - an RDD of (image, facts, skip, source number, record number)
    referenced,  # noqa: ANN001 - an RDD of (image URL, references), a URL in one or several counts
    images: Callable[[ImageTables], WebImages],
    memory_limit: str,
    kept: list,
) -> WebImages:
    """``images`` over the crawl's image records and referenced counts: in one task when they are few, else in
    Spark SQL; what the build keeps (the exclusions, the identity map) stays on the executors, put in ``kept``."""
    gathered = records.map(lambda record: ("record", record)).union(referenced.map(lambda item: ("referenced", item)))
    done = (
        gathered.coalesce(1)
        .mapPartitions(functools.partial(_in_duckdb, images, memory_limit, IMAGES_IN_ONE_TASK))
        .persist(spill())
    )
    found = done.filter(lambda item: item[0] in ("web", "over")).collect()
    if found[0][0] == "over":  # too many for one task: the URLs' counts added up by a shuffle, the stage in SQL
        done.unpersist()
        counted = referenced.reduceByKey(lambda a, b: a + b).persist(spill())
        kept.append(counted)
        with SparkImageTables(session, records, counted, kept) as tables:
            return images(tables)
    kept.append(done)
    web = found[0][1]
    excluded = _frame(done, "excluded", ("image", "reason")) if web.excluded else None
    table = _frame(done, "identity", ("file", "redirect", "image")) if web.identity.table else None
    return dataclasses.replace(web, excluded=excluded, identity=dataclasses.replace(web.identity, table=table))


@dataclasses.dataclass(frozen=True)
class KeptRows:
    """Rows the task kept, read by the engine's ``select`` as it reads a DataFrame's (``rdd``: an RDD of Rows),
    without Spark SQL: a crawl's build under the bounds runs none, and its first DataFrame would cost the SQL
    engine's start (seconds of the driver's JVM)."""

    rdd: object  # an RDD of pyspark.sql.Row

    def collect(self) -> list:
        return self.rdd.collect()  # type: ignore[attr-defined]


def _frame(done, kind: str, columns: tuple[str, ...]) -> KeptRows:  # noqa: ANN001 - an RDD
    """One kind of the task's kept rows, as the engine's ``select`` reads them."""
    from pyspark.sql import Row

    row = Row(*columns)
    return KeptRows(done.filter(lambda item, k=kind: item[0] == k).values().map(lambda values: row(*values)))
