"""What Spark's executors run to write a build's rows: each range partition of a split written as parquet parts by
its task (:class:`.engine.SparkEngine` drives them)."""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import math
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from builder.engines.spark.sql import spill
from builder.publish.writer import PairWriter
from builder.storage import filesystem, is_url, join

__all__ = ["write_partition", "write_split", "write_splits"]


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


def write_splits(  # noqa: ANN001 - routed: an RDD
    routed,
    totals: dict[str, int],
    folder: str | Path,
    rows_per_shard: int,
    languages: bool,
    web: str = "",
) -> tuple[int, dict[str, list[tuple[str, str]]]]:
    """Every split's rows (an RDD of ``((order key, row), split index)``, ``totals`` each split's count, in split
    order) in one sort and one job: each split cut into its range partitions as :func:`write_split` cuts one, the
    bounds of a split over one partition sampled in one job for all. A split per job cost a sampling job and a
    sort of its own, each a pass over every routed row."""
    names = list(totals)
    counts = [math.ceil(totals[name] / rows_per_shard) for name in names]
    offsets = [sum(counts[:index]) for index in range(len(counts))]
    bounds: list[list] = [[] for _ in names]
    sampling = any(count > 1 for count in counts)
    if sampling:  # as sortByKey samples: about 20 keys per partition; the rows kept for the pass that writes
        routed = routed.persist(spill())
        fraction = [min(1.0, 20.0 * count / max(totals[name], 1)) for name, count in zip(names, counts, strict=True)]
        sampled = routed.filter(lambda item: counts[item[1]] > 1 and _sampled(item[0][0], fraction[item[1]]))
        sampled = sampled.map(lambda item: (item[1], item[0][0]))
        keys: dict[int, list] = {}
        for split, key in sampled.collect():
            keys.setdefault(split, []).append(key)
        for split, found in keys.items():
            found.sort()
            bounds[split] = [found[len(found) * (n + 1) // counts[split]] for n in range(counts[split] - 1)]
    partitions = sum(counts)
    if not partitions:
        return 0, {name: [] for name in names}  # nothing to sample either: every split is empty
    split_at = [index for index, count in enumerate(counts) for _ in range(count)]
    keyed = routed.map(lambda item: ((item[1], item[0][0]), item[0][1]))
    ordered = keyed.repartitionAndSortWithinPartitions(
        partitions, lambda key: offsets[key[0]] + bisect.bisect_left(bounds[key[0]], key[1])
    )

    def write(index: int, part: Iterable) -> Iterator[tuple[int, list[tuple[str, str]]]]:
        split = split_at[index]
        rows = ((key[1], row) for key, row in part)
        return write_partition(str(folder), rows_per_shard, names[split], languages, web, index - offsets[split], rows)

    written = ordered.mapPartitionsWithIndex(write).collect()
    if sampling:
        routed.unpersist()
    parts_of: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    for index, (_, parts) in enumerate(written):
        parts_of[names[split_at[index]]].extend(parts)
    return sum(count for count, _ in written), parts_of


def _sampled(key: object, fraction: float) -> bool:
    """A row's order key in the sample of its split's bounds: by a hash of the key, so that the bounds (and the
    parts' sizes) do not depend on how the rows are partitioned."""
    digest = hashlib.blake2b(repr(key).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") < fraction * 2**64
