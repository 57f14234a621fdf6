"""Leakage-safe train / validation / test splits: no image and no text in two splits.

Paraphrase corpora leak easily (PAWS shares pairs between its labeled and unlabeled
sets; QQP repeats dev and test questions in train). Here every pair is a node set:
its image and its two texts, each text by its skeleton, the form in which step 9
finds near-duplicates (:func:`builder.filters.pairs.skeleton`: case, punctuation, spacing,
Unicode form and bracketed parts ignored), so "The bridge over the River Thames" and
"The bridge over the River Thames." are one text. Step 9 also holds a text that
contains another for a near-duplicate ("X" and "X, 1941"); containment is no hashable
key and does not join components. Step 9 drops every pair with an empty skeleton, so
no written text has one. Pairs that share a node are joined by a union-find into
connected components, and a whole component goes to one split, chosen by a stable
hash of its content: blake2b of the component's smallest node digest, mapped to
[0, 1) and cut by the cumulative fractions. The assignment depends on the pairs alone, not on their order, the worker
count or Python's ``hash()`` seed.

Memory: every distinct image and text is a 16-byte digest (a 49-byte bytes object
in CPython) in a dict with its index, plus 8-byte array entries (union-find parent and
size, pairs per image) and, per component, its smallest digest and pair count. Measured
with tracemalloc on 200,000 pairs: a peak of about 730 bytes per pair in the worst case
(every pair its own image and two texts of its own), about 160 bytes when an image's
four captions make six pairs; afterwards only the image → split map is kept (about 100
bytes per image). The local engine holds this once per config. The Spark engine computes the same
assignment with the same union-find, over each partition's pairs and then over the links between the partitions'
components (:mod:`builder.engines.spark.splits`); nothing of it grows on the driver.

A caveat: one giant component (a text reused under many images, or images linked
by shared captions) goes whole to one split; the statistics name the largest
component so a skewed split can be seen.
"""

from __future__ import annotations

import dataclasses
import hashlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pyarrow.parquet as pq

from builder.config import SPLIT_NAMES, check_fractions
from builder.filters.pairs import DIGEST_BYTES, skeleton
from builder.publish.layout import split_of_file
from builder.storage import open_file

__all__ = [
    "Components",
    "SplitAssignment",
    "assign_files",
    "assign_nodes",
    "check_files",
    "components",
    "node_keys",
    "smallest_of_links",
    "split_record",
]

_READ_BATCH = 65_536


def split_names(fractions: Sequence[float]) -> tuple[str, ...]:
    """The splits a config with these fractions writes."""
    return SPLIT_NAMES if fractions else SPLIT_NAMES[:1]


def image_key(image: str) -> bytes:
    """The node digest of an image (its own key space: an image title never equals a text's node)."""
    return hashlib.blake2b(b"image\x00" + image.encode("utf-8"), digest_size=DIGEST_BYTES).digest()


def text_key(text: str) -> bytes:
    """The node digest of a text: its skeleton, so that texts step 9 holds for equal are one node."""
    return hashlib.blake2b(b"text\x00" + skeleton(text).encode("utf-8"), digest_size=DIGEST_BYTES).digest()


def node_keys(row: Mapping[str, object]) -> tuple[bytes, bytes, bytes]:
    """A pair row's three nodes: its image and its two texts."""
    return image_key(str(row["image"])), text_key(str(row["sentence1"])), text_key(str(row["sentence2"]))


def unit_interval(key: bytes) -> float:
    """A stable number in [0, 1) from a digest (hashed again, since a component's smallest digest is biased low)."""
    digest = hashlib.blake2b(key, digest_size=8, person=b"wikipedia-ipc").digest()
    return int.from_bytes(digest, "big") / 2**64


def choose_split(key: bytes, fractions: Sequence[float]) -> int:
    """The index of the split whose cumulative share holds the key's number."""
    point = unit_interval(key)
    bound = 0.0
    for index, fraction in enumerate(fractions[:-1]):
        bound += fraction
        if point < bound:
            return index
    return len(fractions) - 1


@dataclasses.dataclass(frozen=True)
class SplitStats:
    """Pairs, images and distinct texts (by skeleton) per split; components and the largest one, in pairs."""

    pairs: dict[str, int]
    images: dict[str, int]
    texts: dict[str, int]
    components: int
    largest_component: int


@dataclasses.dataclass(frozen=True)
class SplitAssignment:
    """Each image's split (every pair of an image is in the image's component), plus statistics.

    Only this mapping is kept after the union-find: the local engine routes its rows by it.
    """

    names: tuple[str, ...]
    by_image: dict[bytes, int]
    stats: SplitStats

    def split_of(self, row: Mapping[str, object]) -> str:
        return self.names[self.by_image[image_key(str(row["image"]))]]


class _UnionFind:
    """Nodes by digest, union by size with path halving; parents and sizes in compact arrays."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self.keys: list[bytes] = []
        self.is_image = bytearray()
        self.pairs_at = array("q")  # pairs counted at their image node
        self.parent = array("q")
        self.size = array("q")

    def node(self, key: bytes, image: bool) -> int:
        found = self.index.get(key)
        if found is not None:
            return found
        number = len(self.keys)
        self.index[key] = number
        self.keys.append(key)
        self.is_image.append(image)
        self.pairs_at.append(0)
        self.parent.append(number)
        self.size.append(1)
        return number

    def find(self, node: int) -> int:
        parent = self.parent
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def labels(self) -> list[bytes]:
        """Each node's label: the smallest digest of its component."""
        roots = [self.find(number) for number in range(len(self.keys))]
        smallest: dict[int, bytes] = {}
        for root, key in zip(roots, self.keys, strict=True):
            if root not in smallest or key < smallest[root]:
                smallest[root] = key
        return [smallest[root] for root in roots]

    def union(self, one: int, two: int) -> None:
        one, two = self.find(one), self.find(two)
        if one == two:
            return
        if self.size[one] < self.size[two]:
            one, two = two, one
        self.parent[two] = one
        self.size[one] += self.size[two]


@dataclasses.dataclass(frozen=True)
class Components:
    """The components of a graph of pairs: each node's digest, whether it is an image, and its label (the smallest
    digest of its component, which is what the component's split is chosen by); the pairs of each label."""

    keys: list[bytes]
    is_image: bytearray
    labels: list[bytes]
    pairs: dict[bytes, int]


def components(nodes: Iterable[tuple[bytes, bytes, bytes]]) -> Components:
    """The union-find over each pair's (image, text, text) digests, in any order."""
    forest = _UnionFind()
    for image, first, second in nodes:
        at = forest.node(image, True)
        forest.pairs_at[at] += 1
        forest.union(at, forest.node(first, False))
        forest.union(at, forest.node(second, False))
    labels = forest.labels()
    pairs: dict[bytes, int] = dict.fromkeys(labels, 0)
    for number, label in enumerate(labels):
        pairs[label] += forest.pairs_at[number]
    return Components(forest.keys, forest.is_image, labels, pairs)


def smallest_of_links(links: Iterable[tuple[bytes, bytes]]) -> Iterator[tuple[bytes, bytes]]:
    """Each node of the graph of ``links`` with the smallest node of its component (the union-find)."""
    forest = _UnionFind()
    for one, two in links:
        forest.union(forest.node(one, False), forest.node(two, False))
    yield from zip(forest.keys, forest.labels(), strict=True)


def assign_nodes(nodes: Iterable[tuple[bytes, bytes, bytes]], fractions: Sequence[float]) -> SplitAssignment:
    """Assign whole components to splits from each pair's (image, text, text) digests, in any order."""
    fractions = check_fractions(fractions)
    names = split_names(fractions)
    found = components(nodes)
    split_of = {label: choose_split(label, fractions) if fractions else 0 for label in found.pairs}
    counts = {kind: dict.fromkeys(names, 0) for kind in ("pairs", "images", "texts")}
    for label, count in found.pairs.items():
        counts["pairs"][names[split_of[label]]] += count
    by_image: dict[bytes, int] = {}
    for key, image, label in zip(found.keys, found.is_image, found.labels, strict=True):
        split = split_of[label]
        if image:
            by_image[key] = split
            counts["images"][names[split]] += 1
        else:
            counts["texts"][names[split]] += 1
    stats = SplitStats(
        counts["pairs"], counts["images"], counts["texts"], len(found.pairs), max(found.pairs.values(), default=0)
    )
    return SplitAssignment(names, by_image, stats)


def assign(rows: Iterable[Mapping[str, object]], fractions: Sequence[float]) -> SplitAssignment:
    """Assign pair rows (with ``image``, ``sentence1``, ``sentence2``) to splits; see :func:`assign_nodes`."""
    return assign_nodes((node_keys(row) for row in rows), fractions)


def assign_files(files: Sequence[Path], fractions: Sequence[float]) -> SplitAssignment:
    """Assign the pairs of parquet files, read in column batches (no full table in memory)."""
    return assign_nodes(_file_nodes(files), fractions)


def _file_rows(files: Sequence[Path | str]) -> Iterable[dict]:
    for file in files:
        with open_file(file) as stream:  # a file, or an object a cluster's executors wrote to a store
            for batch in pq.ParquetFile(stream).iter_batches(_READ_BATCH, columns=["image", "sentence1", "sentence2"]):
                yield from batch.to_pylist()


def _file_nodes(files: Sequence[Path]) -> Iterable[tuple[bytes, bytes, bytes]]:
    for row in _file_rows(files):
        yield node_keys(row)


@dataclasses.dataclass(frozen=True)
class OverlapCheck:
    """How many images and texts (by skeleton) occur in more than one split (both must be 0)."""

    shared_images: int
    shared_texts: int


def shared_nodes(rows: Iterable[tuple[str, Mapping[str, object]]]) -> OverlapCheck:
    """Count the images and texts (by skeleton) that occur in two or more splits of ``(split, row)`` items."""
    return shared_keys((split, node_keys(row)) for split, row in rows)


def shared_keys(nodes: Iterable[tuple[str, tuple[bytes, bytes, bytes]]]) -> OverlapCheck:
    """:func:`shared_nodes` of ``(split, (image, text, text))`` digests (:func:`node_keys` of each row)."""
    bits: dict[str, int] = {}
    images: dict[bytes, int] = {}  # digest -> bit set of the splits it occurs in
    texts: dict[bytes, int] = {}
    for split, (image, first, second) in nodes:
        bit = bits.setdefault(split, 1 << len(bits))
        images[image] = images.get(image, 0) | bit
        texts[first] = texts.get(first, 0) | bit
        texts[second] = texts.get(second, 0) | bit
    return OverlapCheck(_in_several(images), _in_several(texts))


def _in_several(splits_of: dict[bytes, int]) -> int:
    return sum(1 for mask in splits_of.values() if mask & (mask - 1))


def check_files(files: Sequence[Path | str]) -> OverlapCheck:
    """:func:`shared_nodes` over written parquet files, the split read from each file's name."""
    return shared_nodes((split_of_file(file), row) for file in files for row in _file_rows([file]))


def split_record(stats: SplitStats, fractions: Sequence[float], check: OverlapCheck) -> dict[str, object]:
    """The splits as funnel.json records them: fractions, sizes per split, components and the overlap check."""
    return {
        "fractions": list(fractions),
        "pairs": stats.pairs,
        "images": stats.images,
        "texts": stats.texts,
        "components": stats.components,
        "largest_component": stats.largest_component,
        "shared_images": check.shared_images,
        "shared_texts": check.shared_texts,
    }
