"""The splits of a config's pairs on Spark's executors, with the local engine's assignment
(:func:`builder.publish.splits.assign_nodes`): whole components of the graph of images and texts, each in the split
chosen by its smallest digest. :class:`.engine.SparkEngine` drives it; the driver gets the statistics and
the overlap check, and the routes ``(image, split index)`` stay an RDD.

A config of at most :data:`SPLITS_IN_ONE_TASK` pairs is assigned in one task (:func:`assign_splits`). A larger one is
contracted where it lies (:func:`contract`): each partition's union-find turns its pairs into components labelled by
their smallest digest, and only the nodes go through one shuffle, by digest (:func:`hold`). A node held by several
partitions' components links their labels; the links are the whole graph that is left, and their union-find gives
each linked label the smallest label of its component, which is the smallest digest of the whole component. Nothing
holds the graph: a task holds one partition's pairs (at most the bound, else the pairs are spread over more
partitions first) or the links, and links over the bound go through Spark SQL's rounds of smallest labels
(:func:`builder.common.smallest_labels`), a few rounds over what is left, not one over every node."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence

from builder.common import smallest_labels
from builder.config import check_fractions
from builder.engines.spark.sql import spill
from builder.publish.splits import (
    OverlapCheck,
    SplitStats,
    assign_nodes,
    choose_split,
    components,
    node_keys,
    shared_keys,
    smallest_of_links,
    split_names,
)

__all__ = ["SPLITS_IN_ONE_TASK", "assign_splits", "contract", "hold", "route_splits"]


# A config of at most this many pairs has its splits assigned in one task on an executor (the local engine's
# union-find over each pair's three node digests and the forest's index of them: a few hundred MB at the bound,
# builder.publish.splits gives the measured bytes per pair). The same bound holds a partition's pairs when a larger
# config is contracted partition by partition, and the links left between the partitions' components in one task.
SPLITS_IN_ONE_TASK = 500_000


def assign_splits(fractions: Sequence[float], rows: Iterable[dict]) -> Iterator[tuple[str, object]]:
    """The splits of every pair of a config (:func:`builder.publish.splits.assign_nodes`), in one task: ``("stats",
    (SplitStats, OverlapCheck))``, then each image's split index as ``("route", (image, split))``."""
    images: dict[str, bytes] = {}
    nodes = []
    for row in rows:
        keys = node_keys(row)
        nodes.append(keys)
        images.setdefault(str(row["image"]), keys[0])
    assignment = assign_nodes(nodes, fractions)
    names = assignment.names
    check = shared_keys((names[assignment.by_image[keys[0]]], keys) for keys in nodes)
    yield "stats", (assignment.stats, check)
    for image, key in images.items():
        yield "route", (image, assignment.by_image[key])


def contract(rows: Iterable[dict]) -> Iterator[tuple[str, tuple]]:
    """One partition's pairs as its own components: ``("node", (digest, (label, image title or None)))`` for each
    of its nodes, then ``("pairs", (label, count))`` for each of its components."""
    titles: dict[bytes, str] = {}
    nodes = []
    for row in rows:
        keys = node_keys(row)
        nodes.append(keys)
        titles.setdefault(keys[0], str(row["image"]))
    found = components(nodes)
    del nodes
    for key, label in zip(found.keys, found.labels, strict=True):
        yield "node", (key, (label, titles.get(key)))
    for label, count in found.pairs.items():
        yield "pairs", (label, (count, 0, 0))


def hold(nodes: Iterable[tuple[bytes, Iterable[tuple[bytes, str | None]]]]) -> Iterator[tuple[str, tuple]]:
    """Each distinct node (with the labels of the partitions' components that hold it) counted once, under its
    smallest label: ``("pairs", (label, (0, images, texts)))`` per label of the partition; an image's ``("route",
    (label, title))``; for a node held under several labels, ``("link", (label, smallest))`` for each other label and
    ``("held", (label, (digest, is image)))`` for each label (the overlap check: its labels must end in one split)."""
    counts: dict[bytes, list[int]] = {}
    for key, held in nodes:
        labels = sorted({label for label, _ in held})
        title = next((title for _, title in held if title is not None), None)
        low = labels[0]
        counts.setdefault(low, [0, 0])[0 if title is not None else 1] += 1
        if title is not None:
            yield "route", (low, title)
        if len(labels) > 1:
            for label in labels:
                yield "held", (label, (key, title is not None))
                if label != low:
                    yield "link", (label, low)
    for label, (images, texts) in counts.items():
        yield "pairs", (label, (0, images, texts))


def _sum3(one: tuple[int, int, int], two: tuple[int, int, int]) -> tuple[int, int, int]:
    return one[0] + two[0], one[1] + two[1], one[2] + two[2]


def route_splits(  # noqa: ANN201 - an RDD, the statistics, the check and RDDs
    session,  # noqa: ANN001 - a SparkSession
    rows,  # noqa: ANN001 - an RDD of pair rows
    fractions: Sequence[float],
    count: int,
    one_task: int,
    tables,  # noqa: ANN001 - the engine's SparkTables
):
    """The splits of an RDD of ``count`` pair rows: ``(routes, stats, check, cached)``, the routes an RDD of
    ``(image, split index)``, and the RDDs to release once the rows are routed. ``tables``: where links over the
    bound go through Spark SQL's rounds (the engine's :class:`builder.engines.spark.sql.SparkTables`)."""
    fractions = check_fractions(fractions)
    if count <= one_task:
        assigned = rows.coalesce(1).mapPartitions(lambda part, f=fractions: assign_splits(f, part)).persist(spill())
        ((stats, check),) = assigned.filter(lambda item: item[0] == "stats").values().collect()
        return assigned.filter(lambda item: item[0] == "route").values(), stats, check, [assigned]
    wanted = math.ceil(count / max(one_task, 1))
    if rows.getNumPartitions() < wanted:  # no task holds more than the bound (an image's pairs kept together)
        rows = rows.keyBy(lambda row: row["image"]).partitionBy(wanted).values()
    contracted = rows.mapPartitions(contract).persist(spill())
    nodes = contracted.filter(lambda item: item[0] == "node").values().groupByKey()
    held = nodes.mapPartitions(hold).persist(spill())
    links = held.filter(lambda item: item[0] == "link").values()
    linked = links.count()
    if not linked:
        merged = None
    elif linked <= one_task:
        merged = links.coalesce(1).mapPartitions(smallest_of_links)
    else:
        tables.strings("split_links", links.map(lambda link: (link[0].hex(), link[1].hex())), ("a", "b"))
        labels = smallest_labels(tables, "split_links", "split_labels")
        found = session.sql(f"SELECT node, label FROM {labels}").rdd
        merged = found.map(lambda row: (bytes.fromhex(row[0]), bytes.fromhex(row[1])))
    keyed = held.filter(lambda item: item[0] != "link").union(contracted.filter(lambda item: item[0] == "pairs"))
    keyed = keyed.map(lambda item: (item[1][0], (item[0], item[1][1])))
    if merged is not None:  # each label to its component's smallest label
        keyed = keyed.leftOuterJoin(merged).map(lambda item: (item[1][1] or item[0], item[1][0]))
    keyed = keyed.persist(spill())
    totals = keyed.filter(lambda item: item[1][0] == "pairs").mapValues(lambda value: value[1]).reduceByKey(_sum3)
    names = split_names(fractions)
    size = len(names)

    def add(counts: list[int], item: tuple[bytes, tuple[int, int, int]]) -> list[int]:
        split, (pairs, images, texts) = choose_split(item[0], fractions), item[1]
        counts[split] += pairs
        counts[size + split] += images
        counts[2 * size + split] += texts
        counts[3 * size] += 1
        counts[3 * size + 1] = max(counts[3 * size + 1], pairs)
        return counts

    def merge(one: list[int], two: list[int]) -> list[int]:
        return [*(a + b for a, b in zip(one[:-1], two[:-1], strict=True)), max(one[-1], two[-1])]

    counts = totals.aggregate([0] * (3 * size + 2), add, merge)
    stats = SplitStats(
        *({name: counts[kind * size + index] for index, name in enumerate(names)} for kind in range(3)),
        counts[3 * size],
        counts[3 * size + 1],
    )
    apart = keyed.filter(lambda item: item[1][0] == "held")
    apart = apart.map(lambda item: (item[1][1], choose_split(item[0], fractions)))
    apart = apart.distinct().mapValues(lambda _: 1).reduceByKey(int.__add__).filter(lambda item: item[1] > 1)
    shared = apart.map(lambda item: item[0][1]).countByValue()  # only the two counts reach the driver
    check = OverlapCheck(shared.get(True, 0), shared.get(False, 0))
    routes = keyed.filter(lambda item: item[1][0] == "route").map(
        lambda item: (item[1][1], choose_split(item[0], fractions))
    )
    return routes, stats, check, [contracted, held, keyed]
