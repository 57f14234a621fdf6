"""A dataset build's caption TSV, read once and joined to the samples by URL in the engine (thesis §5.1).

Conceptual Captions' TSV has 3.3 million rows: handed to every shard's task, it was read and held by each (612 MB
per task for a million rows, against 274 MB without it), and the places of the samples of repeated URLs were found
on the driver. Here the TSV is cut into parts at line ends (:func:`builder.sources.img2dataset.caption_tsv_parts`),
each part read by one task where the engine runs its tasks (:class:`TsvPartTask`: a parquet file locally, rows on
the executors on Spark), and :func:`join_captions` joins its rows to the shards' samples
(:data:`builder.extract.datasetrefs.SAMPLE_SCHEMA`) in one SQL text both engines run, so that only counts and the
first problems reach the driver.

The join gives each sample the caption the rule of :class:`builder.sources.img2dataset.ImageDataset` gives it: a
sample without a caption of its own takes a TSV caption of its URL; a URL's TSV rows (in file order) go to the
URL's samples in place order (img2dataset's keys, the TSV rows it downloaded them for, over the whole folder: the
shards' listings, :data:`builder.extract.datasetrefs.LISTING_SCHEMA`), the first sample the first row, and so on;
a sample past its URL's rows takes none; a URL the TSV names once gives its caption to each of its samples. A TSV
row counts as matched once per shard that holds a sample it went to (``tsv_matched``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from builder.extract.web import write_task_files
from builder.sources.captions import MAX_PROBLEMS, TsvLayout, caption_tsv_parts, read_caption_tsv_part, tsv_layout
from builder.storage import as_path, version

__all__ = [
    "TSV_SCHEMA",
    "CaptionJoin",
    "SqlTables",
    "TsvPartResult",
    "TsvPartTask",
    "join_captions",
    "kept_images_query",
    "kept_references_query",
    "tsv_part_tasks",
    "tsv_totals",
]

# a TSV row: its part, its line in the part (the file's order is (part, line)), its cleaned caption and its URL, and
# its user (the build's user column, when the TSV's header names it; null: none)
TSV_SCHEMA = pa.schema(
    [
        ("part", pa.int64()),
        ("line", pa.int64()),
        ("caption", pa.string()),
        ("url", pa.string()),
        ("user", pa.string()),
    ]
)
MAX_PART_BYTES = 64 << 20  # a part's bytes at most: several per core on a large TSV, each read in about 10 s
MIN_PART_BYTES = 1 << 20


@dataclasses.dataclass
class TsvPartResult:
    """A part's lines, its rows, its rows left out and the first of those (line in the part, why)."""

    lines: int = 0
    rows: int = 0
    unreadable: int = 0
    bad: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    failure: str | None = None

    @property
    def error(self) -> str | None:
        return self.failure

    @property
    def references(self) -> int:
        return 0

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TsvPartResult:
        data = json.loads(text)
        data["bad"] = [(line, why) for line, why in data["bad"]]
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class TsvPartTask:
    """The bytes ``start`` to ``end`` of the caption TSV (``number``: its place among the parts), read with the
    file's ``layout``; ``stamp`` (size and modification time) names its file, so a resumed build reads a changed
    TSV again."""

    number: int
    tsv: str
    start: int
    end: int
    layout: TsvLayout
    stamp: str
    work: str

    @property
    def path(self) -> Path:
        what = "\x1f".join((self.tsv, self.stamp, str(self.start), str(self.end), repr(tuple(self.layout))))
        digest = hashlib.blake2b(what.encode(), digest_size=6).hexdigest()
        return Path(self.work) / f"tsv-{self.number:05d}-{digest}.parquet"

    def new_result(self) -> TsvPartResult:
        return TsvPartResult()

    def run(self) -> TsvPartResult:
        """Write the part's rows (and its counts beside them); a part read before is not read again."""
        return write_task_files({"tsv": (self.path, TSV_SCHEMA)}, self.rows, self.new_result())

    def rows(self, result: TsvPartResult) -> Iterator[tuple[str, dict[str, Any]]]:
        """``("tsv", row)`` per row of the part, in file order; its lines and left-out rows counted in ``result``."""
        for line, row in read_caption_tsv_part(self.tsv, self.start, self.end, self.layout):
            result.lines = line
            if isinstance(row, str):
                result.unreadable += 1
                if len(result.bad) < MAX_PROBLEMS:
                    result.bad.append((line, row))
            elif row is not None:
                result.rows += 1
                yield "tsv", {"part": self.number, "line": line, "caption": row[0], "url": row[1], "user": row[2]}


def tsv_part_tasks(tsv: str | Path | None, work: Path, workers: int, user: str = "") -> list[TsvPartTask]:
    """The caption TSV's parts, as many as the workers (or more, of 64 MB at most), each one task; none without a
    TSV. ``user``: the column of users its rows carry, when its header names it."""
    if tsv is None:
        return []
    path = as_path(tsv)  # on a disk or an object store
    total, mark = version(tsv)
    size = max(MIN_PART_BYTES, min(MAX_PART_BYTES, math.ceil(total / max(1, workers))))
    layout = tsv_layout(path, user)
    stamp = f"{total}-{mark}"
    return [
        TsvPartTask(number, str(path), start, end, layout, stamp, str(work))
        for number, (start, end) in enumerate(caption_tsv_parts(path, size))
    ]


def tsv_totals(tsv: str | Path, results: Sequence[TsvPartResult]) -> tuple[int, int, list[str]]:
    """The TSV's rows, its rows left out, and the first of those named with their line in the file."""
    problems: list[str] = []
    before = 0
    for result in results:
        for line, why in result.bad:
            if len(problems) < MAX_PROBLEMS:
                problems.append(f"{tsv}:{before + line}: {why}")
        before += result.lines
    return sum(result.rows for result in results), sum(result.unreadable for result in results), problems


class SqlTables(Protocol):
    """Where an engine runs the join: tables ``samples``, ``listing`` and ``tsv`` (:data:`TSV_SCHEMA`) to start
    with; DuckDB locally, Spark SQL on the executors. The SQL is the subset both dialects read."""

    def table(self, name: str, query: str) -> None:
        """Make table ``name`` from ``query`` (kept until the engine is done with it)."""

    def rows(self, query: str) -> list[tuple]:
        """A small result (counters, the first problems), brought to Python."""


@dataclasses.dataclass
class CaptionJoin:
    """What the join counted (``samples``, ``kept``, each reason of ``DATASET_SKIPS`` and ``no_url``,
    ``tsv_matched``) and the first samples it kept whose URL is unusable (shard number, problem), in sample order."""

    counts: dict[str, int]
    unusable: list[tuple[int, str]]


# the TSV's URLs and how many rows each has; each row's place among its URL's rows, in file order
_TSV_URLS = "SELECT url, count(*) AS n FROM tsv GROUP BY url"
_TSV_PLACES = (
    "SELECT url, caption, user, row_number() OVER (PARTITION BY url ORDER BY part, line) - 1 AS place FROM tsv"
)
# each listed sample's place among the listed samples of its URL over the whole folder (shard by shard, in place
# order), for the URLs the TSV repeats; a key listed twice in a shard takes its last listing's place
_SAMPLE_PLACES = (
    "SELECT task, key, place FROM (SELECT task, key, place, row_number() OVER (PARTITION BY task, key "
    "ORDER BY rank DESC) AS last FROM (SELECT l.task, l.key, l.rank, row_number() OVER (PARTITION BY l.url "
    "ORDER BY l.task, l.rank) - 1 AS place FROM listing l JOIN tsv_urls u ON l.url = u.url WHERE u.n > 1) numbered) "
    "lasts WHERE last = 1"
)
# a sample's TSV row: the one of its place (the only one of a URL the TSV names once); it gives its caption to a
# sample without one of its own whose caption is not unreadable, and its user to a sample whose metadata names none
_MATCHED = (
    "SELECT s.*, t.place AS tsv_place, t.caption AS tsv_caption, t.user AS tsv_user, "
    "t.url IS NOT NULL AND coalesce(s.caption, '') = '' "
    "AND coalesce(s.skip, '') <> 'unreadable_caption' AS takes FROM samples s "
    "LEFT JOIN tsv_urls u ON s.url = u.url "
    "LEFT JOIN sample_places p ON u.n > 1 AND s.task = p.task AND s.key = p.key "
    "LEFT JOIN tsv_places t ON s.url = t.url AND t.place = CASE WHEN u.n = 1 THEN 0 ELSE p.place END"
)
# what becomes of each sample: its reason in the order the reader checks them, or kept
_JOINED = (
    "SELECT task, number, key, url, image, page_id, warc, length, facts, tsv_place, caption, source, "
    "coalesce(sample_user, tsv_user) AS user, "
    "CASE WHEN skip IS NOT NULL THEN skip WHEN caption IS NULL OR caption = '' THEN 'no_caption' "
    "WHEN verdict IS NOT NULL THEN verdict WHEN image = '' THEN 'no_url' ELSE 'kept' END AS reason FROM ("
    "SELECT *, CASE WHEN takes THEN nullif(tsv_caption, '') ELSE sample_caption END AS caption, "
    "CASE WHEN takes THEN 'tsv' ELSE 'sample' END AS source FROM ("
    "SELECT task, number, key, url, image, page_id, warc, length, facts, skip, verdict, tsv_place, tsv_caption, takes, "
    "caption AS sample_caption, user AS sample_user, tsv_user FROM matched) m) c"
)


def join_captions(tables: SqlTables) -> CaptionJoin:
    """Join the TSV to the samples by URL in the engine (table ``joined``: every sample, its caption and source,
    and ``reason``, ``kept`` for one that becomes a reference) and count what became of them."""
    tables.table("tsv_urls", _TSV_URLS)
    tables.table("tsv_places", _TSV_PLACES)
    tables.table("sample_places", _SAMPLE_PLACES)
    tables.table("matched", _MATCHED)
    tables.table("joined", _JOINED)
    counts = {str(reason): int(n) for reason, n in tables.rows("SELECT reason, count(*) FROM joined GROUP BY reason")}
    counts["samples"] = sum(counts.values())
    ((matched,),) = tables.rows(
        "SELECT count(*) FROM (SELECT DISTINCT task, url, tsv_place FROM joined WHERE tsv_place IS NOT NULL) m"
    )
    counts["tsv_matched"] = int(matched)
    unusable = [
        (int(task), f"{warc}: sample {key} has no usable URL; left out")
        for task, warc, key in tables.rows(
            f"SELECT task, warc, key FROM joined WHERE reason = 'no_url' ORDER BY task, number LIMIT {MAX_PROBLEMS}"
        )
    ]
    return CaptionJoin(counts, unusable)


def kept_references_query(language: str) -> str:
    """The reference rows (:data:`builder.extract.webrefs.DATASET_ROW_SCHEMA`'s columns) of the samples the join
    kept: a dataset has no pages, its image URL stands for one; its user is the sample's (null: none)."""
    if not language.replace("-", "").isalnum():
        raise ValueError(f"{language!r} is no language code")
    return (
        "SELECT image, image AS page, page_id, 0 AS revision_id, 0 AS position, source, NULL AS template, caption, "
        f"'' AS alt, '{language}' AS language, NULL AS parameters, key AS record, NULL AS date, "
        "NULL AS page_language, warc, user FROM joined WHERE reason = 'kept'"
    )


def kept_images_query() -> str:
    """The image index rows (:data:`builder.extract.web.WEB_IMAGE_SCHEMA`'s columns) of the samples the join
    kept, with their order (``task``, ``number``): the index keeps a URL's first sample's image."""
    return (
        "SELECT image, key AS record_id, NULL AS date, NULL AS content_type, length, facts, NULL AS skip, warc, "
        "task, number FROM joined WHERE reason = 'kept'"
    )
