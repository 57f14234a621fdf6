"""The cost of §5's similarity ``−‖i − j‖²``, the visual step's inner loop, one Python call per pair against numpy
over blocks of rows, side by side in one run, and what it makes of the paper's scale.

The vectors are real: each feature (``tiny``, the default, and ``gist``) of COCO's 159 committed pictures, enlarged
to 400 pixels on the shorter side as ``benchmarks/deja_visual.py`` writes them. A table of ``--pairs`` rows draws
two of them per row (seeded). Each round times, in DuckDB (the local engine's SQL), alternating:

- *per pair*: the former way, a scalar UDF on the vectors' base64 text, decoded through
  :func:`builder.sources.features.decode_vector`'s cache, one call a row;
- *block*: the build's way (:func:`builder.filters.situated.quantised_similarities`), an Arrow UDF on the raw
  bytes the build keeps per image, one call per block of rows.

With ``--spark`` the same two run as Spark SQL UDFs (a Python UDF and an Arrow UDF) in the engine's own
``local[2]`` session (``builder.engines.spark.session.spark_session``).
Printed: core-µs per pair of each, their ratio, whether the two give the same numbers (they must, bit for bit), and
the projection for Déjà's corpus (176,780 captions over 3,967,524 images, §2) on ``--cores`` cores: the
similarities the visual step computes there (two query images per caption × K = 100 candidates × a candidate's
images, plus σ's development set of 300 images against every image) times the measured µs, over the cores::

    python benchmarks/deja_similarity.py [--pairs 200000] [--rounds 3] [--cores 64] [--spark]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from benchmarks.deja_visual import COCO_IMAGES, enlarged  # noqa: E402
from builder.filters.situated import quantised_similarities  # noqa: E402
from builder.sources.features import VECTOR_KINDS, Describer, decode_vector, vector_bytes, vector_kind  # noqa: E402

DEJA_CAPTIONS = 176_780  # Déjà's corpus (§2): captions kept
DEJA_IMAGES = 3_967_524  # and the images they caption
QUERIES_PER_CAPTION, K, DEV_IMAGES = 2, 100, 300  # §5 (2), footnote 5
SPARK_CORES = 2  # the local session's: its wall time times its cores is its cost in core-seconds


def per_pair(first: str | None, second: str | None) -> float | None:
    """The former similarity: one call per pair on the encoded text, decoded through a cache."""
    if first is None or second is None:
        return None
    value = -float(np.square(decode_vector(first) - decode_vector(second)).sum())
    return round(value * 2.0**32) / 2.0**32


def coco_vectors(feature: str) -> list[str]:
    """The feature's encoded vector of each committed COCO picture, enlarged as the build's input is."""
    from PIL import Image

    describe = Describer(feature)
    texts = []
    for path in sorted(COCO_IMAGES.glob("*.jpg")):
        with Image.open(path) as image:
            text = describe(enlarged(image))
        if text is not None:
            texts.append(text)
    return texts


def pair_tables(texts: list[str], kind: str, pairs: int) -> tuple[pa.Table, pa.Table]:
    """The pictures' vectors (``n``, text ``t``, raw bytes ``r``) and the drawn pairs (``x``, ``y``: two ``n``)."""
    generator = np.random.default_rng(5)
    vectors = pa.table(
        {"n": range(len(texts)), "t": texts, "r": pa.array([vector_bytes(text, kind) for text in texts], pa.binary())}
    )
    drawn = pa.table({"x": generator.integers(0, len(texts), pairs), "y": generator.integers(0, len(texts), pairs)})
    return vectors, drawn


PAIRS = (
    "SELECT p.x, p.y, v.t AS a, w.t AS b, v.r AS ra, w.r AS rb FROM drawn p JOIN vectors v ON v.n = p.x "
    "JOIN vectors w ON w.n = p.y"
)


def duckdb_times(tables: tuple[pa.Table, pa.Table], kind: str, rounds: int) -> tuple[float, float, bool]:
    import duckdb

    connection = duckdb.connect()
    connection.register("vectors", tables[0])
    connection.register("drawn", tables[1])
    connection.execute(f"CREATE TABLE pairs AS {PAIRS}")
    connection.create_function("per_pair", per_pair, ["VARCHAR", "VARCHAR"], "DOUBLE", null_handling="special")
    connection.create_function("block", partial(quantised_similarities, kind), ["BLOB", "BLOB"], "DOUBLE", type="arrow")
    best = {"per pair": float("inf"), "block": float("inf")}
    results = {}
    for _ in range(rounds):
        queries = (("per pair", "SELECT per_pair(a, b) FROM pairs"), ("block", "SELECT block(ra, rb) FROM pairs"))
        for name, query in queries:
            decode_vector.cache_clear()
            started = time.process_time()  # DuckDB's Python UDFs hold the GIL: this process's CPU is their cost
            results[name] = connection.execute(query).fetchall()
            best[name] = min(best[name], time.process_time() - started)
    return best["per pair"], best["block"], results["per pair"] == results["block"]


def spark_times(tables: tuple[pa.Table, pa.Table], kind: str, rounds: int) -> tuple[float, float, bool]:
    from pyspark.sql.functions import arrow_udf, udf
    from pyspark.sql.types import DoubleType

    from builder.engines.spark.session import spark_session

    session = spark_session(SPARK_CORES, {"spark.driver.memory": "4g"})  # the engine's own local session
    try:
        session.createDataFrame(tables[0].to_pandas()).createOrReplaceTempView("vectors")
        session.createDataFrame(tables[1].to_pandas()).createOrReplaceTempView("drawn")
        frame = session.sql(PAIRS).repartition(2).cache()
        frame.count()
        slow = udf(per_pair, DoubleType())

        def fast(first: pa.Array, second: pa.Array) -> pa.Array:
            return quantised_similarities(kind, first, second)

        quick = arrow_udf(fast, DoubleType())
        best = {"per pair": float("inf"), "block": float("inf")}
        results = {}
        for _ in range(rounds):
            for name, column in (("per pair", slow("a", "b")), ("block", quick("ra", "rb"))):
                started = time.perf_counter()
                results[name] = sorted(row[0] for row in frame.select(column.alias("s")).collect())
                best[name] = min(best[name], (time.perf_counter() - started) * SPARK_CORES)  # two workers busy
        return best["per pair"], best["block"], results["per pair"] == results["block"]
    finally:
        session.stop()


def projection(microseconds: float, cores: int) -> tuple[float, float]:
    """Similarities of §5 at Déjà's scale and the hours they take on ``cores`` cores at ``microseconds`` each."""
    images_per_caption = DEJA_IMAGES / DEJA_CAPTIONS
    count = DEJA_CAPTIONS * QUERIES_PER_CAPTION * K * images_per_caption + DEV_IMAGES * DEJA_IMAGES
    return count, count * microseconds / 1e6 / cores / 3600


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cores", type=int, default=64)
    parser.add_argument("--features", nargs="+", default=["tiny", "gist"])
    parser.add_argument("--spark", action="store_true", help="time the two as Spark SQL UDFs too")
    args = parser.parse_args(argv)
    print(
        f"{args.pairs:,} pairs of COCO's real pictures, best of {args.rounds} rounds, core-µs per pair (DuckDB: the "
        f"process's CPU time; Spark: the wall time × its {SPARK_CORES} cores, the transfer to Python included)"
    )
    print("| engine | feature | values | per pair core-µs | block core-µs | ratio | same numbers |")
    print("|---|---|---:|---:|---:|---:|---|")
    measured = {}
    for feature in args.features:
        kind = vector_kind(feature)
        texts = coco_vectors(feature)
        tables = pair_tables(texts, kind, args.pairs)
        size = len(vector_bytes(texts[0], kind)) // VECTOR_KINDS[kind].itemsize
        engines = [("DuckDB", duckdb_times)] + ([("Spark local[2]", spark_times)] if args.spark else [])
        for engine, timer in engines:
            slow, fast, same = timer(tables, kind, args.rounds)
            slow, fast = slow / args.pairs * 1e6, fast / args.pairs * 1e6
            measured[(engine, feature)] = (slow, fast)
            print(f"| {engine} | {feature} | {size} | {slow:.2f} | {fast:.2f} | {slow / fast:.2f} | {same} |")
    print(f"\nDéjà's scale ({DEJA_CAPTIONS:,} captions, {DEJA_IMAGES:,} images) on {args.cores} cores:")
    for (engine, feature), (slow, fast) in measured.items():
        count, before = projection(slow, args.cores)
        _, after = projection(fast, args.cores)
        print(f"- {engine}, {feature}: {count / 1e9:.2f} billion similarities: {before * 60:.1f} min per pair, "
              f"{after * 60:.1f} min in blocks (the similarity alone; joins and windows come on top)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
