"""Grouping by key on Spark (:mod:`builder.engines.spark.shuffle`): the groups of PySpark's ``groupBy`` and
``cogroup``, each key once, in key order within a partition, and a partitioner a join by the same key keeps."""

from __future__ import annotations

import random

import pytest

from builder.engines.spark.shuffle import attached, cogrouped, grouped, looked_up, regrouped, shuffle_partitions


def test_grouped_gives_group_bys_groups_in_key_order(spark) -> None:
    generator = random.Random(3)
    rows = [{"image": f"img-{generator.randrange(40)}", "n": n} for n in range(500)]
    rdd = spark.sparkContext.parallelize(rows, 5)
    mine = grouped(rdd, lambda row: row["image"])
    theirs = rdd.groupBy(lambda row: row["image"]).mapValues(list).collect()
    assert {k: sorted(r["n"] for r in v) for k, v in mine.collect()} == {
        k: sorted(r["n"] for r in v) for k, v in theirs
    }
    for part in mine.glom().collect():
        keys = [key for key, _ in part]
        assert keys == sorted(set(keys))  # each key once per partition, in order
    assert mine.getNumPartitions() == shuffle_partitions(rdd.keyBy(lambda row: row["image"]))
    other = spark.sparkContext.parallelize([(f"img-{k}", k) for k in range(40)], 3).partitionBy(mine.getNumPartitions())
    assert mine.partitioner == other.partitioner  # a join of the two moves neither


def test_cogrouped_gives_cogroups_groups(spark) -> None:
    generator = random.Random(5)
    left = [(f"k{generator.randrange(30)}", n) for n in range(300)]
    right = [(f"k{generator.randrange(50)}", -n) for n in range(80)]
    context = spark.sparkContext
    a, b = context.parallelize(left, 4), context.parallelize(right, 2)
    mine = {key: (sorted(x), sorted(y)) for key, (x, y) in cogrouped(a, b).collect()}
    theirs = {key: (sorted(x), sorted(y)) for key, (x, y) in a.cogroup(b).collect()}
    assert mine == theirs and any(not x for x, _ in mine.values()) and any(not y for _, y in mine.values())


def test_looked_up_is_a_join_that_moves_only_the_table(spark) -> None:
    generator = random.Random(7)
    rows = [{"image": f"img-{generator.randrange(60)}", "n": n} for n in range(400)]
    context = spark.sparkContext
    groups = grouped(context.parallelize(rows, 4), lambda row: row["image"])
    keyed = groups.flatMapValues(lambda values: values)  # partitioned by image, as the engine's pair rows are
    table = context.parallelize([(f"img-{k}", k % 3) for k in range(0, 60, 2)], 3)  # half of the images
    mine = looked_up(keyed, table)
    assert mine.getNumPartitions() == keyed.getNumPartitions()  # the partitions of the rows: the table came to them
    assert b"PartitionerAwareUnionRDD" in mine.toDebugString()  # the rows' partitions read as they are, no join
    expected = sorted((row["n"], split) for row, split in keyed.join(table).values().collect())
    assert sorted((row["n"], split) for row, split in mine.collect()) == expected
    assert {n for n, _ in expected} == {row["n"] for row in rows if int(row["image"][4:]) % 2 == 0}
    spread = context.parallelize([(row["image"], row) for row in rows], 5)  # no partitioner: PySpark's join
    fallback = looked_up(spread, table)
    assert b"PartitionerAwareUnionRDD" not in fallback.toDebugString()
    assert sorted((row["n"], split) for row, split in fallback.collect()) == expected


def test_attached_is_a_cogroup_that_moves_only_the_items(spark) -> None:
    """The items come to the values' partitions, sorted, spooled and merged there; the values do not move. Chunks
    of 7 items make the spool hold several chunks and a key's items straddle two."""
    generator = random.Random(11)
    rows = [{"image": f"img-{generator.randrange(50)}", "n": n} for n in range(300)]
    context = spark.sparkContext
    groups = grouped(context.parallelize(rows, 4), lambda row: row["image"])
    keyed = groups.flatMapValues(lambda values: values)  # partitioned and sorted by image, as the engine's rows
    items = [(f"img-{generator.randrange(70)}", n) for n in range(200)]  # some keys without rows, some without items
    mine = attached(keyed, context.parallelize(items, 3), chunk=7)
    assert mine.getNumPartitions() == keyed.getNumPartitions()
    assert b"PartitionerAwareUnionRDD" in mine.toDebugString()
    theirs = keyed.cogroup(context.parallelize(items, 3)).filter(lambda item: len(item[1][0]) > 0).collect()
    expected = {key: (sorted(row["n"] for row in one), sorted(two)) for key, (one, two) in theirs}
    got = {key: (sorted(row["n"] for row in one), sorted(two)) for key, (one, two) in mine.collect()}
    assert got == expected and len(got) == len({row["image"] for row in rows})
    for part in mine.glom().collect():
        keys = [key for key, _ in part]
        assert keys == sorted(set(keys))  # each key once per partition, in order
    spread = context.parallelize([(row["image"], row) for row in rows], 5)  # no partitioner: cogrouped's shuffle
    fallback = attached(spread, context.parallelize(items, 3))
    assert {key: (sorted(r["n"] for r in one), sorted(two)) for key, (one, two) in fallback.collect()} == expected


def test_regrouped_groups_in_place_and_refuses_an_unsorted_partition(spark) -> None:
    generator = random.Random(13)
    rows = [(f"img-{generator.randrange(30)}", n) for n in range(200)]
    context = spark.sparkContext
    keyed = grouped(context.parallelize(rows, 3), lambda row: row[0]).flatMapValues(lambda values: values)
    mine = regrouped(keyed.mapValues(lambda row: row[1]))
    assert mine.toDebugString().count(b"Shuffle") == keyed.toDebugString().count(b"Shuffle")  # none after grouping's
    expected = {key: sorted(group) for key, group in context.parallelize(rows, 3).groupByKey().collect()}
    assert {key: sorted(values) for key, values in mine.collect()} == expected
    unsorted = context.parallelize([("b", 1), ("a", 2)], 1).partitionBy(1)  # a partitioner, not sorted
    with pytest.raises(Exception, match="not sorted by key"):
        regrouped(unsorted).collect()
