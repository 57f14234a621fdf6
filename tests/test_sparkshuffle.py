"""Grouping by key on Spark (:mod:`builder.engines.sparkshuffle`): the groups of PySpark's ``groupBy`` and
``cogroup``, each key once, in key order within a partition, and a partitioner a join by the same key keeps."""

from __future__ import annotations

import random

from builder.engines.sparkshuffle import cogrouped, grouped, looked_up, shuffle_partitions


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
