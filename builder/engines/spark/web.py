"""What Spark's executors run to read a crawl (:class:`.engine.SparkEngine` drives it): each WARC
source's references kept as pickled chunks, with what the stages after need counted per source while it is read.

The extraction's output is cached once and read by several stages, each for one kind of item (the references, the
image records, the counters). Every such read unpickles every cached item, so the references, by far the most, are
cached as chunks of :data:`REFERENCE_CHUNK` pickled rows: a stage that wants another kind skips a chunk for the cost
of a copy of its bytes, and only the stages that use references decode them. Each source also counts its references
per page capture and per image URL, so that finding the later captures of pages and counting each image URL's
references (the image stage's ``referenced``) read those small counts, not the references again.
"""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = ["REFERENCE_CHUNK", "first_captures", "references_of", "warc_partition", "web_partition"]

# reference rows per cached chunk: large enough that a chunk costs one pickle call, small enough (a few MB) that a
# WARC file of Common Crawl's (about a million references) is many chunks, never one item of a gigabyte
REFERENCE_CHUNK = 10_000


def web_partition(tasks: Iterable) -> Iterator[tuple[str, object]]:
    """A web task's (a WARC source's, a dataset shard's or a caption TSV part's) rows on an executor: ``("image",
    ((task number, row number), row))``, ``(kind, (task number, row))`` for its other kinds (``reference``;
    ``sample``, ``listing``; ``tsv``), then ``("stats", (task number, result))``."""
    for task in tasks:
        result = task.new_result()
        images = 0
        for kind, row in task.rows(result):
            if kind == "image":
                yield "image", ((task.number, images), row)
                images += 1
            else:
                yield kind, (task.number, row)
        yield "stats", (task.number, result)


def warc_partition(tasks: Iterable) -> Iterator[tuple[str, object]]:
    """:func:`web_partition` for WARC sources, the references in chunks: ``("references", (task number, pickled
    rows))``, the image records and ``stats`` as there; then per source ``("captures", (task number, [((page,
    page id), references)]))`` and ``("referenced", (task number, [(image URL, references)]))``."""
    for task in tasks:
        chunk: list[dict] = []
        captures: Counter = Counter()
        referenced: Counter = Counter()
        for kind, item in web_partition([task]):
            if kind != "reference":
                yield kind, item
                continue
            row = item[1]
            captures[row["page"], row["page_id"]] += 1
            referenced[row["image"]] += 1
            chunk.append(row)
            if len(chunk) == REFERENCE_CHUNK:
                yield "references", (task.number, pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL))
                chunk = []
        if chunk:
            yield "references", (task.number, pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL))
        yield "captures", (task.number, list(captures.items()))
        yield "referenced", (task.number, list(referenced.items()))


def references_of(chunks):  # noqa: ANN001, ANN201 - an RDD of (task number, pickled rows); an RDD of rows
    """The reference rows of the chunks :func:`warc_partition` cached."""
    return chunks.flatMap(lambda item: pickle.loads(item[1]))  # noqa: S301 - the engine's own chunks


def first_captures(references, captures):  # noqa: ANN001, ANN201 - RDDs; an RDD and two counts
    """The reference rows of each page's first capture (its smallest ``page_id``), how many later captures of pages
    were left out and their reference rows, as the local engine's :func:`builder.engines.local.later_captures`
    leaves them out. ``captures``: each page capture's count of references, ``((page, page id), references)``.

    A crawl without later captures, the usual one, never shuffles its references: only one with some pays a join
    of the references with the later captures."""
    later = (
        captures.map(lambda item: (item[0][0], (item[0][1], item[1])))
        .groupByKey()
        .flatMap(lambda item: sorted(item[1])[1:])  # a page's captures but its first: (page id, reference rows)
    )
    # one job for both counts: the later captures and their reference rows
    copies, copied = later.aggregate(
        (0, 0), lambda total, capture: (total[0] + 1, total[1] + capture[1]), lambda a, b: (a[0] + b[0], a[1] + b[1])
    )
    if not copies:
        return references, 0, 0
    kept = references.keyBy(lambda row: row["page_id"]).subtractByKey(later).values()
    return kept, copies, copied
