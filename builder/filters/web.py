"""The image side of a web build, between extraction and grouping, the same for every engine.

From the crawl's image index (§4.2) and the number of references each image URL has, :func:`web_images`

1. applies the §4.3.2 rules to every image record with pixels (``builder.filters.images.image_rule_failed``)
   and leaves out the images Pillow cannot read, each rule a named counter of images and references dropped;
2. leaves out, for the pixel and hash equivalences, the references to an image the crawl holds no record of
   (``images_without_a_record``): their pixels cannot be compared. Under ``url`` they stay (§4.6.1 needs
   no pixels);
3. computes every kept image's key under the config's equivalence (§4.6) — the normalized URL, the MD5 of
   the decoded pixels, or a perceptual hash grouped within the Hamming threshold (``group_by_hash``) — and
   expresses it as the :class:`~builder.filters.identity.IdentityMap` both engines already apply before
   grouping: image URL → the smallest URL of its set;
4. derives §5.1.2's bound on the size of an equivalence set (distinct images per set, z-score over the
   sets that can yield pairs), which the chain applies as a named step (``max_equal_images``).

The references left out go to one exclusion file, read by the engines as they read the cross-lingual
config's local files (:func:`builder.filters.identity.local_files`).

Where the state lives: a crawl's image URLs are counted in billions (Common Crawl 2020-16: 8.4 billion distinct
URLs, Table 4.1), so every per-URL table (the index's first records and their verdicts, each referenced URL's
count and verdict, the sets and their sizes) is a DuckDB table under the build's memory limit, spilling to the
work folder. Python holds the counters, the histogram of set sizes (from which μ and σ are computed exactly, as
``statistics`` computes them over the sizes) and the image records whose pixels an equivalence compares.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa

from builder.config import DEFAULT_MEMORY_LIMIT, PERCEPTUAL_EQUIVALENCES, PipelineConfig
from builder.filters.identity import Identity, IdentityMap, ImageTableStats

__all__ = ["EXCLUSION_SCHEMA", "LEFT_OUT", "WebImages", "web_images"]

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
    excluded: Path | None  # the exclusion file (EXCLUSION_SCHEMA); None when nothing is left out
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


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _index_tables(connection, files: Sequence[Path], rules: bool) -> int:  # noqa: ANN001 - a DuckDB connection
    """Table ``idx``: the first record of each URL in source and record order, its facts and its verdict; returns
    how many later records of a URL the crawl repeats (ignored)."""
    connection.create_function(
        "image_verdict", lambda facts, skip: _verdict(facts, skip, rules), ["VARCHAR", "VARCHAR"], "VARCHAR",
        null_handling="special", side_effects=False,
    )  # fmt: skip
    order = pa.table({"filename": [str(file) for file in files], "position": list(range(len(files)))})
    connection.register("index_files", order)
    listed = "[" + ", ".join(_quoted(file) for file in files) + "]"
    records = (
        f"SELECT r.image, r.facts, r.skip, f.position, r.file_row_number FROM read_parquet({listed}, "
        "filename = true, file_row_number = true) r JOIN index_files f USING (filename)"
        if files
        else "SELECT NULL::VARCHAR AS image, NULL::VARCHAR AS facts, NULL::VARCHAR AS skip, 0 AS position, "
        "0 AS file_row_number WHERE false"
    )
    connection.execute(
        "CREATE TEMP TABLE firsts AS SELECT image, facts, skip FROM ("
        "SELECT *, row_number() OVER (PARTITION BY image ORDER BY position, file_row_number) AS n FROM "
        f"({records})) WHERE n = 1"
    )
    connection.execute(
        "CREATE TEMP TABLE idx AS SELECT image, CASE WHEN skip IS NULL THEN facts END AS facts, "
        "image_verdict(facts, skip) AS reason FROM firsts"
    )
    total = connection.execute(f"SELECT count(*) FROM ({records})").fetchall()[0][0]
    firsts = connection.execute("SELECT count(*) FROM firsts").fetchall()[0][0]
    connection.execute("DROP TABLE firsts")
    connection.unregister("index_files")
    return total - firsts


def _groups(keys: dict[str, str]) -> list[list[str]]:
    """The URLs that share a key, two or more per group, sorted."""
    members: dict[str, list[str]] = {}
    for url, key in keys.items():
        members.setdefault(key, []).append(url)
    return sorted(sorted(group) for group in members.values() if len(group) > 1)


def equivalence_groups(facts: dict[str, object], config: PipelineConfig) -> list[list[str]]:
    """The sets of image URLs that are one image under the config's equivalence (sets of one left out)."""
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


def web_images(
    config: PipelineConfig,
    index_files: Sequence[Path],
    referenced: Path | None,
    work: Path,
    rules: bool = True,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> WebImages:
    """The crawl's images as the engines need them for ``config`` (the build's configs share one equivalence);
    ``rules``: apply §4.3.2's image rules (not to a dataset's images, which §5.1.1's checks filtered).

    The per-image state (every record's verdict, every referenced URL's count and verdict, the sets and their
    sizes) lives in DuckDB under ``memory_limit``, spilling to ``work``: what reaches Python is the counters, the
    histogram of set sizes and the images with pixels of the pixel and hash equivalences (one per image record,
    of which a crawl holds few: Common Crawl 2020-16 one per 2,000 image URLs)."""
    with duckdb.connect() as connection:
        connection.execute(f"SET temp_directory = {_quoted(work / 'duckdb-web')}")
        connection.execute(f"SET memory_limit = '{memory_limit}'")
        connection.execute("SET preserve_insertion_order = false")
        repeated = _index_tables(connection, index_files, rules)
        counted = (
            f'SELECT image, "references" FROM read_parquet({_quoted(referenced)})'
            if referenced is not None
            else 'SELECT NULL::VARCHAR AS image, 0::BIGINT AS "references" WHERE false'
        )
        without = "NULL" if config.equivalence == "url" else f"'{WITHOUT_RECORD}'"
        connection.execute(
            'CREATE TEMP TABLE verdicts AS SELECT c.image, c."references", i.facts, '
            f"CASE WHEN i.image IS NULL THEN {without} ELSE i.reason END AS reason "
            f"FROM ({counted}) c LEFT JOIN idx i USING (image)"
        )
        dropped = {reason: {"images": 0, "references": 0} for reason in LEFT_OUT}
        for reason, images in connection.execute(
            "SELECT reason, count(*) FROM idx WHERE reason IS NOT NULL GROUP BY reason"
        ).fetchall():
            dropped[reason]["images"] += images
        for reason, images, references in connection.execute(
            'SELECT reason, count(*), sum("references") FROM verdicts WHERE reason IS NOT NULL GROUP BY reason'
        ).fetchall():
            dropped[reason]["references"] += int(references)
            if reason == WITHOUT_RECORD:
                dropped[reason]["images"] += images
        path = None
        if connection.execute("SELECT count(*) FROM verdicts WHERE reason IS NOT NULL").fetchall()[0][0]:
            path = work / "web-excluded.parquet"
            connection.execute(
                "COPY (SELECT NULL::VARCHAR AS language, image, reason FROM verdicts WHERE reason IS NOT NULL "
                f"ORDER BY image) TO {_quoted(path)} (FORMAT parquet, COMPRESSION zstd)"
            )
        with_pixels = {
            image: _facts(facts)
            for image, facts in connection.execute(
                "SELECT image, facts FROM verdicts WHERE reason IS NULL AND facts IS NOT NULL"
            ).fetchall()
        }
        mapping = IdentityMap([], equivalence_groups(with_pixels, config))
        del with_pixels
        connection.register("identity_map", mapping.table())
        connection.execute(
            "CREATE TEMP TABLE sets AS SELECT coalesce(m.image, v.image) AS image, count(*) AS size, "
            'sum(v."references") AS "references" FROM verdicts v LEFT JOIN identity_map m ON v.image = m.file '
            "WHERE v.reason IS NULL GROUP BY 1"
        )
        histogram = dict(
            connection.execute('SELECT size, count(*) FROM sets WHERE "references" >= 2 GROUP BY size').fetchall()
        )
        images_referenced, references = connection.execute(
            'SELECT count(*), coalesce(sum("references"), 0) FROM verdicts'
        ).fetchall()[0]
        images_kept, references_kept = connection.execute(
            'SELECT count(*), coalesce(sum("references"), 0) FROM verdicts WHERE reason IS NULL'
        ).fetchall()[0]
        sets = connection.execute("SELECT count(*) FROM sets").fetchall()[0][0]
        records = connection.execute("SELECT count(*) FROM idx").fetchall()[0][0]
        connection.unregister("identity_map")
    bound, statistics_of_sets = set_bound_of_counts(histogram, config.set_size_z)
    record = {
        "equivalence": config.equivalence,
        "identity": config.identity_label,
        "hash_bits": config.hash_size**2 if config.equivalence in PERCEPTUAL_EQUIVALENCES else None,
        "hash_threshold": config.hash_threshold if config.equivalence in PERCEPTUAL_EQUIVALENCES else None,
        "image_records": records + repeated,
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
    identity = Identity((config.equivalence,), mapping, ImageTableStats())
    return WebImages(identity, path, bound, record)
