"""Spark SQL for the SQL both engines run: the tables of a web build's image stage
(:class:`builder.filters.web.ImageTables`), of the identity map (:class:`builder.filters.identity.IdentityTables`),
of the caption TSV's join (:class:`builder.extract.captiontsv.SqlTables`) and of the split assignment, as views on
the executors, of which only the queries' small results reach the driver."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

__all__ = ["SparkImageTables", "SparkTables", "spark_schema", "spill", "warm_sql"]


def spill():  # noqa: ANN202 - a pyspark.StorageLevel
    """Cached RDDs that do not fit the executors' memory go to their disks, not recomputed."""
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def spark_schema(schema: pa.Schema):  # noqa: ANN202 - a pyspark StructType
    """A Spark schema of an arrow schema of strings and 64-bit integers."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    return StructType(
        [StructField(field.name, LongType() if field.type == pa.int64() else StringType()) for field in schema]
    )


def warm_sql(session) -> None:  # noqa: ANN001 - a SparkSession
    """Make Spark SQL ready on a thread of its own while the extraction runs, without a job (the executors' cores
    are the extraction's): a session's first DataFrame and its first planned query cost seconds once (the SQL
    engine's classes loaded, its code generator started), which every build whose stages use SQL (the identity map,
    a web build's image stage, the split assignment, Déjà's graph) would otherwise pay on its critical path. A
    failure here is left to the stage that needs SQL to report."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    try:
        schema = StructType([StructField("number", LongType()), StructField("text", StringType())])
        frame = session.createDataFrame(session.sparkContext.parallelize([(1, "a")], 1), schema)
        ranked = frame.selectExpr("text", "row_number() OVER (PARTITION BY text ORDER BY number) AS n")
        query = ranked.join(frame, "text").groupBy("text").count()
        query._jdf.queryExecution().toRdd()  # noqa: SLF001 - planned and compiled, not run
    except Exception:  # noqa: BLE001, S110 - only a warm-up: the stage that needs SQL reports what is wrong
        pass


class SparkTables:
    """Spark SQL for the SQL both engines run (:class:`builder.filters.web.ImageTables`,
    :class:`builder.filters.identity.IdentityTables`, :class:`builder.extract.captiontsv.SqlTables`): each table a
    view on the executors, computed when made and cut from its lineage; only the queries' small results reach the
    driver, and what the build keeps stays a DataFrame the engine's ``select`` joins with."""

    def __init__(self, session, kept: list | None = None) -> None:  # noqa: ANN001 - a SparkSession
        self.session = session
        self.kept = kept if kept is not None else []  # released when the build ends: what is kept goes there
        self.frames: list[tuple[str, object]] = []
        self.views: list[str] = []

    def _view(self, name: str, frame) -> None:  # noqa: ANN001 - a DataFrame
        frame.createOrReplaceTempView(name)
        self.views.append(name)

    def strings(self, name: str, rdd, columns: Sequence[str]) -> None:  # noqa: ANN001 - an RDD of tuples
        """A view of string columns over an RDD of the engine's."""
        from pyspark.sql.types import StringType, StructField, StructType

        schema = StructType([StructField(column, StringType()) for column in columns])
        self._view(name, self.session.createDataFrame(rdd, schema))

    def source(self, name: str, rows, schema: pa.Schema) -> None:  # noqa: ANN001 - an RDD of tuples
        """View ``name`` over an RDD of tuples in ``schema``'s order."""
        self._view(name, self.session.createDataFrame(rows, spark_schema(schema)))

    def split(self, name: str, query: str, key: str, column: str) -> None:
        """Table ``name`` of ``(key, part)`` rows, one per ``|``-separated part of ``column``
        (:meth:`builder.filters.repetition.DejaTables.split`)."""
        self.table(name, f"SELECT {key}, explode(split({column}, '[|]')) AS part FROM ({query}) q WHERE {column} <> ''")

    def image_records(self, records) -> None:  # noqa: ANN001 - an RDD of (image, facts, skip, position, record)
        """View ``deja_image_records`` (:data:`builder.filters.repetition.IMAGE_RECORD_SCHEMA`) over the image
        records the extraction left on the executors, for deja-paraphrases' feature vectors."""
        from builder.filters.repetition import IMAGE_RECORD_SCHEMA

        self.source("deja_image_records", records.map(lambda r: (r[0], r[1], r[3], r[4])), IMAGE_RECORD_SCHEMA)

    def frame(self, name: str, frame) -> None:  # noqa: ANN001 - a DataFrame the engine keeps
        """View ``name`` over a DataFrame the engine made and releases itself."""
        self._view(name, frame)

    def __enter__(self) -> SparkTables:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def close(self, keep: str | None = None, into: list | None = None) -> None:
        """Drop the views and release the tables, but ``keep`` (handed to ``into``, released with them)."""
        for name, frame in self.frames:
            if name == keep and into is not None:
                into.append(frame)
            else:
                frame.unpersist()  # type: ignore[attr-defined]
        for name in self.views:
            self.session.catalog.dropTempView(name)
        self.frames, self.views = [], []

    def table(self, name: str, query: str) -> None:
        # computed now and cut from its lineage: a table made from the one before it (the rounds of the hashes'
        # labels) would otherwise carry every earlier round's plan, three times over per round
        frame = self.session.sql(query).localCheckpoint(eager=True)
        self.frames.append((name, frame))
        self._view(name, frame)

    def rows(self, query: str) -> list[tuple]:
        return [tuple(row) for row in self.session.sql(query).collect()]

    def register(self, name: str, table: pa.Table) -> None:
        from pyspark.sql.types import StringType, StructField, StructType

        schema = StructType([StructField(column, StringType()) for column in table.column_names])
        self._view(name, self.session.createDataFrame(table.to_pylist(), schema))

    def function(
        self, name: str, function: Callable[[str | None, str | None], str | bytes | None], returns: str = "string"
    ) -> None:
        from pyspark.sql.types import BinaryType, StringType

        self.session.udf.register(name, function, {"string": StringType(), "binary": BinaryType()}[returns])

    def block_function(self, name: str, function: Callable[[pa.Array, pa.Array], pa.Array]) -> None:
        """An Arrow UDF: the executors hand it blocks of rows as Arrow arrays (``DejaTables.block_function``)."""
        from pyspark.sql.functions import arrow_udf
        from pyspark.sql.types import DoubleType

        def block(first: pa.Array, second: pa.Array) -> pa.Array:  # the hints say to Spark: arrays to an array
            return function(first, second)

        self.session.udf.register(name, arrow_udf(block, DoubleType()))

    def keep(self, query: str):  # noqa: ANN201 - a DataFrame, kept for the build
        frame = self.session.sql(query).persist(spill())
        frame.count()  # computed now, while the stage's tables are there
        self.kept.append(frame)
        return frame


class SparkImageTables(SparkTables):
    """:class:`builder.filters.web.ImageTables` in Spark SQL over the image records and the referenced counts as
    DataFrames on the executors; the exclusions stay a DataFrame."""

    def __init__(self, session, records, referenced, kept: list) -> None:  # noqa: ANN001 - a SparkSession, two RDDs
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        super().__init__(session, kept)
        text, number = StringType(), LongType()
        columns = [("image", text), ("facts", text), ("skip", text), ("position", number), ("record", number)]
        self._view("records", session.createDataFrame(records, StructType([StructField(*c) for c in columns])))
        schema = StructType([StructField("image", text), StructField("refs", number)])
        self._view("referenced", session.createDataFrame(referenced, schema))

    def exclusions(self, query: str):  # noqa: ANN201 - a DataFrame of (image, reason), kept for the build
        return self.keep(query)

    def identity(self, query: str):  # noqa: ANN201 - a DataFrame of (file, redirect, image), kept for the build
        return self.keep(query)
