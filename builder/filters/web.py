"""The image side of a web build, between extraction and grouping, the same for every engine.

From the crawl's image index (§4.2) and the number of references each image URL has, :func:`web_images`

1. applies the §4.3.2 rules to every image record with pixels (``builder.filters.images.image_rule_failed``)
   and leaves out the images Pillow cannot read, each rule a named counter of images and references dropped;
2. leaves out, for the pixel and hash equivalences, the references to an image the crawl holds no record of
   (``images_without_a_record``): their pixels cannot be compared. Under ``url`` they stay (§4.6.1 needs
   no pixels);
3. computes every kept image's key under the config's equivalence (§4.6) — the normalized URL, the MD5 of
   the decoded pixels, or a perceptual hash linked within the Hamming threshold (the sets ``group_by_hash``
   finds, found by a join on band keys in the engine, :func:`_linked_groups`) — and expresses it as an identity
   map, a table of the engine both engines join the references with before grouping: image URL → the smallest
   URL of its set (the rows :class:`~builder.filters.identity.IdentityMap` would give);
4. derives §5.1.2's bound on the size of an equivalence set (distinct images per set, z-score over the
   sets that can yield pairs), which the chain applies as a named step (``max_equal_images``).

The references left out go to one exclusion file, read by the engines as they read the cross-lingual
config's local files (:func:`builder.filters.identity.local_files`).

Where the state lives: a crawl's image URLs are counted in billions (Common Crawl 2020-16: 8.4 billion distinct
URLs, Table 4.1), so every per-URL table (the index's first records and their verdicts, each referenced URL's
count and verdict, the sets, their sizes and the identity map of the merged URLs) is a table of the engine
(:class:`ImageTables`), made by one SQL text both engines run: DuckDB under the build's memory limit, spilling to
the work folder, for the local engine (the map then a parquet file its grouping joins); Spark SQL on the executors
for the Spark engine (the map a DataFrame). Python holds the counters and the histogram of set sizes (from which
μ and σ are computed exactly, as ``statistics`` computes them over the sizes).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from builder.common import duckdb_connection, smallest_labels, sql_list, sql_text
from builder.config import DEFAULT_MEMORY_LIMIT, PERCEPTUAL_EQUIVALENCES, PipelineConfig
from builder.filters.identity import Identity, ImageTableStats, MapCounts

__all__ = ["EXCLUSION_SCHEMA", "LEFT_OUT", "DuckDBImageTables", "ImageTables", "WebImages", "web_images"]

# references a config leaves out before grouping: to an image (in every language when ``language`` is null)
EXCLUSION_SCHEMA = pa.schema([("language", pa.string()), ("image", pa.string()), ("reason", pa.string())])
WITHOUT_RECORD = "images_without_a_record"


LEFT_OUT = (
    "unreadable",
    "corrupt",
    "decompression_bomb",
    "unusable_url",
    "too_few_pixels",
    "too_many_pixels",
    "small_file",
    "aspect_ratio",
    "transparent",
    WITHOUT_RECORD,
)


@dataclasses.dataclass
class WebImages:
    """What the core hands on to the engines, and what funnel.json records of the crawl's images."""

    identity: Identity
    excluded: object | None  # what the engine's select reads the exclusions from (ImageTables.exclusions); None: none
    max_equal_images: int | None  # §5.1.2's bound in images per set; None: no set is over it
    record: dict[str, object]


def _facts(text: str):  # noqa: ANN202 - an ImageFacts
    from builder.sources.images import ImageFacts

    data = json.loads(text)
    data["phash_orientations"] = tuple(data["phash_orientations"])
    return ImageFacts(**data)


def _skip_reason(skip: str) -> str:
    """The counter of an image the inspector refused: its ``ImageSkip`` reason (``unreadable: …``)."""
    if skip == "unusable URL":
        return "unusable_url"
    reason = skip.split(":", 1)[0].strip()
    return reason if reason in LEFT_OUT else "unreadable"


def _verdict(facts: str | None, skip: str | None, rules: bool) -> str | None:
    """An image record's verdict: the reason it is left out (the inspector's skip, else the first §4.3.2 rule it
    fails when ``rules``), or None."""
    from builder.filters.images import image_rule_failed

    if skip is not None or facts is None:
        return _skip_reason(skip or "unreadable")
    return image_rule_failed(_facts(facts)) if rules else None


def _key(facts: str | None, kind: str | None) -> str | None:
    """An image record's key under an exact equivalence (``kind``), from its facts."""
    from builder.filters.images import equivalence_key

    return None if facts is None or kind is None else equivalence_key(_facts(facts), kind)


class ImageTables(Protocol):
    """Where an engine keeps a web build's per-image tables and runs :func:`web_images`' SQL on them: DuckDB for
    the local engine (:class:`DuckDBImageTables`), Spark SQL on the executors for the Spark engine.

    It starts with two views, ``records(image, facts, skip, position, record)`` (every image record, ``position``
    its source's place in the input and ``record`` its place in the source) and ``referenced(image, refs)``
    (every referenced image URL and how many references it has). The SQL is the subset both dialects read."""

    def table(self, name: str, query: str) -> None:
        """Make table ``name`` from ``query`` (kept until the stage ends)."""

    def rows(self, query: str) -> list[tuple]:
        """A small result (counters, a histogram), brought to Python."""

    def function(self, name: str, function: Callable[[str | None, str | None], str | None]) -> None:
        """A Python function of two strings that gives a string or null, callable from SQL."""

    def exclusions(self, query: str) -> object:
        """Keep ``query``'s ``(image, reason)`` rows as what the engine's ``select`` leaves out, and return what
        it reads them from (for the local engine, a parquet file of :data:`EXCLUSION_SCHEMA`)."""

    def identity(self, query: str) -> object:
        """Keep ``query``'s ``(file, redirect, image)`` rows as the identity map the engine's ``select`` joins the
        references with, and return what it reads them from (for the local engine, a parquet file)."""


class DuckDBImageTables:
    """:class:`ImageTables` in DuckDB under a memory limit, spilling to the work folder, over the image index
    files and the referenced counts the local engine wrote (parquet)."""

    def __init__(
        self, index_files: Sequence[Path], referenced: Path | None, work: Path, memory_limit: str = DEFAULT_MEMORY_LIMIT
    ) -> None:
        self.work = work
        self.connection = duckdb_connection(work / "duckdb-web", memory_limit)
        self.connection.execute("SET preserve_insertion_order = false")
        if index_files:
            order = pa.table({"filename": [str(file) for file in index_files], "position": range(len(index_files))})
            self.connection.register("index_files", order)
            self.connection.execute(
                "CREATE VIEW records AS SELECT r.image, r.facts, r.skip, f.position, r.file_row_number AS record "
                f"FROM read_parquet({sql_list(index_files)}, filename = true, file_row_number = true) r "
                "JOIN index_files f ON r.filename = f.filename"
            )
        else:
            self.connection.execute(
                "CREATE TABLE records (image VARCHAR, facts VARCHAR, skip VARCHAR, position BIGINT, record BIGINT)"
            )
        if referenced is not None:
            self.connection.execute(
                'CREATE VIEW referenced AS SELECT image, "references" AS refs '
                f"FROM read_parquet({sql_text(referenced)})"
            )
        else:
            self.connection.execute("CREATE TABLE referenced (image VARCHAR, refs BIGINT)")

    def __enter__(self) -> DuckDBImageTables:
        return self

    def __exit__(self, *exception: object) -> None:
        self.connection.close()

    def table(self, name: str, query: str) -> None:
        self.connection.execute(f"CREATE TEMP TABLE {name} AS {query}")

    def rows(self, query: str) -> list[tuple]:
        return self.connection.execute(query).fetchall()

    def register(self, name: str, table: pa.Table) -> None:
        self.connection.register(name, table)

    def function(self, name: str, function: Callable[[str | None, str | None], str | None]) -> None:
        self.connection.create_function(
            name, function, ["VARCHAR", "VARCHAR"], "VARCHAR", null_handling="special", side_effects=False
        )

    def _kept(self, name: str, select: str) -> Path:
        """A table the build keeps past this stage (the connection's tables end with it), as parquet in the work
        folder."""
        path = self.work / f"{name}.parquet"
        self.connection.execute(f"COPY ({select}) TO {sql_text(path)} (FORMAT parquet, COMPRESSION zstd)")
        return path

    def exclusions(self, query: str) -> Path:
        return self._kept(
            "web-excluded", f"SELECT NULL::VARCHAR AS language, image, reason FROM ({query}) ORDER BY image"
        )

    def identity(self, query: str) -> Path:
        return self._kept("web-identity", f"SELECT file, redirect, image FROM ({query}) ORDER BY file")


def _groups(keys: dict[str, str]) -> list[list[str]]:
    """The URLs that share a key, two or more per group, sorted."""
    members: dict[str, list[str]] = {}
    for url, key in keys.items():
        members.setdefault(key, []).append(url)
    return sorted(sorted(group) for group in members.values() if len(group) > 1)


def equivalence_groups(facts: dict[str, object], config: PipelineConfig) -> list[list[str]]:
    """The sets of image URLs that are one image under the config's equivalence (sets of one left out), in
    Python: the reference the engines' grouping in SQL is tested against, and a tool for small sets."""
    from builder.filters.images import equivalence_key, group_by_hash, hash_items

    if config.equivalence == "url":
        return []
    if config.equivalence in PERCEPTUAL_EQUIVALENCES:
        items = hash_items(facts, config.equivalence)  # type: ignore[arg-type]
        return _groups(group_by_hash(items, config.hash_size**2, config.hash_threshold))
    return _groups({url: equivalence_key(one, config.equivalence) for url, one in facts.items()})  # type: ignore[arg-type]


def _sqrt_of_ratio(numerator: int, denominator: int) -> float:
    """√(numerator / denominator), correctly rounded to a float: the integer square root of the ratio scaled to
    at least 64 bits of root, made odd when inexact (round-to-odd keeps the final rounding correct), then divided
    by the scale in Python's correctly rounded integer division. ``statistics.pstdev`` returns this same float."""
    if numerator == 0:
        return 0.0
    shift = max(0, 128 - (numerator.bit_length() - denominator.bit_length()))
    shift += shift % 2
    scaled = numerator << shift
    root = math.isqrt(scaled // denominator)
    root |= root * root * denominator != scaled
    return root / (1 << (shift // 2))


def set_bound_of_counts(histogram: Mapping[int, int], z: float | None) -> tuple[int | None, dict[str, object]]:
    """:func:`set_bound` from how many sets have each size (``size → sets``), computed exactly as ``fmean`` and
    ``pstdev`` compute over the sizes themselves, so that the sets never need to be in one list."""
    sets = sum(histogram.values())
    total = sum(size * count for size, count in histogram.items())
    mean = float(total) / sets if sets else None
    spread = 0.0
    if sets > 1:  # the population variance, exactly: (n·Σs² − (Σs)²) / n²
        squares = sum(size * size * count for size, count in histogram.items())
        spread = _sqrt_of_ratio(sets * squares - total * total, sets * sets)
    bound = None
    if z is not None and mean is not None and spread > 0:
        bound = max(1, math.ceil(mean + z * spread) - 1)
    return bound, {
        "z": z,
        "sets_that_yield_pairs": sets,
        "mean_images": None if mean is None else round(mean, 4),
        "std_images": round(spread, 4) if sets > 1 else None,
        "max_equal_images": bound,
    }


def set_bound(sizes: Iterable[int], z: float | None) -> tuple[int | None, dict[str, object]]:
    """§5.1.2: the largest number of images a set may hold, the largest size whose z-score, (size − μ) / σ over
    the sets that can yield pairs, stays under ``z`` (the thesis: μ = 3.13, σ = 25.87, z < 0.05 → 4), and the
    statistics it came from. None (no bound) with fewer than two such sets or all of one size, as
    ``builder.filters.images.oversized_sets`` drops nothing then, and with no ``z`` (the bound not asked for)."""
    return set_bound_of_counts(Counter(sizes), z)


def _hash(facts: str | None, spec: str | None) -> str | None:
    """The ``number``-th hash (``kind:number:bits``) of an image record, in decimal; None past its last (only
    ``phash-rotation`` has several, its eight orientations)."""
    from builder.filters.images import hash_items

    if facts is None or spec is None:
        return None
    kind, number, bits = spec.split(":")
    items = hash_items({"": _facts(facts)}, kind)
    if int(number) >= len(items):
        return None
    value = items[int(number)][1]
    if not 0 <= value < (1 << int(bits)):
        raise ValueError(f"hash {value:#x} does not fit in {bits} bits: the image index was made with another size")
    return str(value)


def _band(value: str | None, spec: str | None) -> str | None:
    """The bits ``low`` to ``high`` (``low:high``) of a hash given in decimal."""
    if value is None or spec is None:
        return None
    low, high = (int(part) for part in spec.split(":"))
    return str((int(value) >> low) & ((1 << (high - low)) - 1))


def _distance(first: str | None, second: str | None) -> str | None:
    """The Hamming distance of two hashes given in decimal."""
    return None if first is None or second is None else str((int(first) ^ int(second)).bit_count())


def _linked_groups(tables: ImageTables, config: PipelineConfig, kept: str) -> str:
    """The sets of image URLs whose hashes a chain of links within ``config.hash_threshold`` bits joins, as
    :func:`builder.filters.images.group_by_hash` finds them, in the engine's tables: each hash is cut into
    threshold + 1 bands (two hashes within the threshold agree on one band at least, pigeonhole), hashes that
    share a band are compared (a join on band keys), and the links' components are found by passing each URL the
    smallest URL of its neighbours until nothing changes (:func:`builder.common.smallest_labels`). Returns the
    table of each linked URL (``node``) and the smallest URL of its set (``label``); no URL reaches Python."""
    bits, threshold = config.hash_size**2, config.hash_threshold
    orientations = 8 if config.equivalence == "phash-rotation" else 1
    tables.function("image_hash", _hash)
    tables.function("hash_band", _band)
    tables.function("hash_distance", _distance)
    tables.table(
        "hashes",
        " UNION ALL ".join(
            f"SELECT image, image_hash(facts, '{config.equivalence}:{number}:{bits}') AS h {kept}"
            for number in range(orientations)
        ),
    )
    if threshold >= bits:  # every two hashes are within the threshold: one set of every image with a hash
        tables.table("links", "SELECT min(image) OVER () AS a, image AS b FROM hashes WHERE h IS NOT NULL")
    else:
        bands = threshold + 1
        tables.table(
            "bands",
            " UNION ALL ".join(
                f"SELECT image, h, {band} AS band, hash_band(h, '{band * bits // bands}:{(band + 1) * bits // bands}') "
                "AS value FROM hashes WHERE h IS NOT NULL"
                for band in range(bands)
            ),
        )
        tables.table(
            "links",
            "SELECT DISTINCT a, b FROM (SELECT x.image AS a, y.image AS b, x.h AS first, y.h AS second FROM bands x "
            "JOIN bands y ON x.band = y.band AND x.value = y.value AND x.image < y.image) near "
            f"WHERE CAST(hash_distance(first, second) AS INTEGER) <= {threshold}",
        )
    return smallest_labels(tables, "links", "labels")


def web_images(config: PipelineConfig, tables: ImageTables, rules: bool = True) -> WebImages:
    """The crawl's images as the engines need them for ``config`` (the build's configs share one equivalence);
    ``rules``: apply §4.3.2's image rules (not to a dataset's images, which §5.1.1's checks filtered).

    The per-image state (every record's verdict, every referenced URL's count and verdict, the sets and their
    sizes) lives in the engine's ``tables``: what reaches Python is the counters, the histogram of set sizes and,
    never an image URL: the identity map of the merged URLs stays the engine's (:meth:`ImageTables.identity`), and
    funnel.json counts it in SQL."""
    tables.function("image_verdict", lambda facts, skip: _verdict(facts, skip, rules))
    # each image's first record (input order) with its verdict, and how many records the image has: one table
    tables.table(
        "idx",
        "SELECT image, CASE WHEN skip IS NULL THEN facts END AS facts, image_verdict(facts, skip) AS reason, copies "
        "FROM (SELECT image, facts, skip, row_number() OVER (PARTITION BY image ORDER BY position, record) AS n, "
        "count(*) OVER (PARTITION BY image) AS copies FROM records) ranked WHERE n = 1",
    )
    without = "NULL" if config.equivalence == "url" else f"'{WITHOUT_RECORD}'"
    tables.table(
        "verdicts",
        f"SELECT c.image, c.refs, i.facts, CASE WHEN i.image IS NULL THEN {without} ELSE i.reason END AS reason "
        "FROM referenced c LEFT JOIN idx i ON c.image = i.image",
    )
    dropped = {reason: {"images": 0, "references": 0} for reason in LEFT_OUT}
    for table, reason, images, references in tables.rows(  # both tables' reasons in one query
        "SELECT 'idx' AS t, reason, count(*), 0 FROM idx WHERE reason IS NOT NULL GROUP BY reason UNION ALL "
        "SELECT 'verdicts' AS t, reason, count(*), sum(refs) FROM verdicts WHERE reason IS NOT NULL GROUP BY reason"
    ):
        if table == "idx":
            dropped[reason]["images"] += images
            continue
        dropped[reason]["references"] += int(references)
        if reason == WITHOUT_RECORD:
            dropped[reason]["images"] += images
    excluded = None
    if any(counts["references"] for counts in dropped.values()):
        excluded = tables.exclusions("SELECT image, reason FROM verdicts WHERE reason IS NOT NULL")
    kept = "FROM verdicts WHERE reason IS NULL AND facts IS NOT NULL"
    # each merged URL with the smallest URL of its set: no redirects, so a URL's redirect is itself
    merged = "SELECT file, file AS redirect, image FROM ({}) m WHERE image <> file"
    if config.equivalence in PERCEPTUAL_EQUIVALENCES:  # hashes linked within a distance, grouped by the engine
        labels = _linked_groups(tables, config, kept)
        tables.table("identity_map", merged.format(f"SELECT node AS file, label AS image FROM {labels}"))
    elif config.equivalence != "url":  # an exact key (the pixels' MD5): the engine groups
        tables.function("image_key", _key)
        tables.table(
            "identity_map",
            merged.format(
                "SELECT image AS file, min(image) OVER (PARTITION BY key) AS image "
                f"FROM (SELECT image, image_key(facts, '{config.equivalence}') AS key {kept}) images"
            ),
        )
    else:  # the url equivalence merges nothing: URLs were normalized when read
        tables.table("identity_map", merged.format("SELECT image AS file, image FROM verdicts WHERE false"))
    ((changed,),) = tables.rows("SELECT count(*) FROM identity_map")
    tables.table(
        "sets",
        "SELECT coalesce(m.image, v.image) AS image, count(*) AS size, sum(v.refs) AS refs FROM verdicts v "
        "LEFT JOIN identity_map m ON v.image = m.file WHERE v.reason IS NULL GROUP BY coalesce(m.image, v.image)",
    )
    histogram: dict[int, int] = {}
    sets = 0
    for size, count, linked in tables.rows("SELECT size, count(*), refs >= 2 FROM sets GROUP BY size, refs >= 2"):
        sets += count
        if linked:
            histogram[size] = histogram.get(size, 0) + count
    kept_only = "CASE WHEN reason IS NULL THEN {} ELSE 0 END"
    ((images_referenced, references, images_kept, references_kept),) = tables.rows(
        f"SELECT count(*), coalesce(sum(refs), 0), coalesce(sum({kept_only.format(1)}), 0), "
        f"coalesce(sum({kept_only.format('refs')}), 0) FROM verdicts"
    )
    images_kept = int(images_kept)
    ((records, firsts),) = tables.rows("SELECT coalesce(sum(copies), 0), count(*) FROM idx")
    repeated = int(records) - firsts
    bound, statistics_of_sets = set_bound_of_counts(histogram, config.set_size_z)
    record = {
        "equivalence": config.equivalence,
        "identity": config.identity_label,
        "hash_bits": config.hash_size**2 if config.equivalence in PERCEPTUAL_EQUIVALENCES else None,
        "hash_threshold": config.hash_threshold if config.equivalence in PERCEPTUAL_EQUIVALENCES else None,
        "image_records": int(records),
        "image_records_repeated": repeated,
        "images_referenced": images_referenced,
        "references": int(references),
        # a dataset's images were filtered while read (§5.1.1, its own counters): only what happened here
        "left_out": dropped if rules else {reason: n for reason, n in dropped.items() if any(n.values())},
        "images_kept": images_kept,
        "references_kept": int(references_kept),
        "equivalence_sets": sets,
        "images_merged": images_kept - sets,
        "set_bound": statistics_of_sets,
    }
    table = tables.identity("SELECT file, redirect, image FROM identity_map") if changed else None
    identity = Identity((config.equivalence,), MapCounts(changed=changed), ImageTableStats(), table=table)
    return WebImages(identity, excluded, bound, record)
