"""What Spark's executors run to write a build's rows: each range partition of a split written as parquet parts by
its task (:class:`builder.engines.spark.SparkEngine` drives them)."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from builder.publish.writer import PairWriter
from builder.storage import filesystem, is_url, join

__all__ = ["write_partition", "write_split"]


def write_partition(
    folder: str,
    rows_per_shard: int,
    split: str,
    languages: bool,
    web: str,
    partition: int,
    rows: Iterable[tuple[tuple[str, int], dict]],
    kind: str = "pairs",
) -> Iterator[tuple[int, list[tuple[str, str]]]]:
    """Write one range partition of a split's sorted pairs as parquet parts named after the split and partition,
    each with its content hash (the driver names the parts by it without reading them back).

    The parts are written under names of this task attempt and renamed when complete,
    so that a retried or speculative attempt never leaves a half-written part under the
    name the driver will read. A folder on an object store gets each part uploaded from the executor's own
    disk, under its final part name, once it is complete (an object appears whole or not at all).
    """
    from pyspark import TaskContext

    from builder.publish.writer import file_digest

    attempt = TaskContext.get().attemptNumber()
    prefix = f"attempt-{split}-{partition:05d}-{attempt}"
    remote = is_url(folder)
    with contextlib.ExitStack() as stack:
        local = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wikipedia_ipc-part-"))) if remote else None
        writer = PairWriter(
            local or Path(folder), rows_per_shard, prefix=prefix, languages=languages, web=web, rows=kind
        )
        writer.write_rows(row for _, row in rows)
        parts = []
        for index, part in enumerate(writer.finish()):
            name = f"{split}-part-{partition:05d}-{index:05d}.tmp"
            if remote:
                fs, path = filesystem(str(join(folder, name)))
                fs.put_file(str(part), path)
                parts.append((str(join(folder, name)), file_digest(part)))
            else:
                os.replace(part, part.with_name(name))
                parts.append((str(part.with_name(name)), file_digest(part.with_name(name))))
    yield writer.rows, parts


def write_split(  # noqa: ANN001 - rows: an RDD
    rows,
    folder: str | Path,
    rows_per_shard: int,
    split: str,
    languages: bool,
    web: str = "",
    kind: str = "pairs",
    total: int | None = None,
) -> tuple[int, list[tuple[str, str]]]:
    """One split's rows (an RDD keyed by order key), range-partitioned and written by the executors: pairs, or the
    rows of another ``kind`` (:data:`builder.publish.writer.ROW_KINDS`). ``total``: their number, when the caller
    knows it (a split's pairs, from the assignment's statistics), which saves a job counting them."""
    total = rows.count() if total is None else total
    if not total:
        return 0, []
    ordered = rows.sortByKey(numPartitions=math.ceil(total / rows_per_shard))
    written = ordered.mapPartitionsWithIndex(
        lambda partition, part, where=str(folder), size=rows_per_shard: write_partition(
            where, size, split, languages, web, partition, part, kind
        )
    ).collect()
    return sum(count for count, _ in written), [part for _, parts in written for part in parts]
