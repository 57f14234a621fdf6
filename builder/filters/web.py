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
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.config import PERCEPTUAL_EQUIVALENCES, PipelineConfig
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


def read_index(files: Sequence[Path], rules: bool = True) -> tuple[dict[str, tuple[str | None, object]], int]:
    """URL → (the reason it is left out or None, its facts or None), from the first record of each URL in
    source and record order; and how many later records of a URL the crawl repeats (ignored). ``rules``: apply
    §4.3.2's rules (a dataset's images were checked by §5.1.1's while they were read)."""
    from builder.filters.images import image_rule_failed

    index: dict[str, tuple[str | None, object]] = {}
    repeated = 0
    for file in files:
        table = pq.read_table(file, columns=["image", "facts", "skip"])
        columns = (table.column(name).to_pylist() for name in ("image", "facts", "skip"))
        for image, facts, skip in zip(*columns, strict=True):
            if image in index:
                repeated += 1
                continue
            if skip is not None or facts is None:
                index[image] = (_skip_reason(skip or "unreadable"), None)
                continue
            decoded = _facts(facts)
            index[image] = (image_rule_failed(decoded) if rules else None, decoded)
    return index, repeated


def read_referenced(path: Path | None) -> dict[str, int]:
    """Image URL → its references in the crawl."""
    if path is None:
        return {}
    table = pq.read_table(path, columns=["image", "references"])
    return dict(zip(table.column("image").to_pylist(), table.column("references").to_pylist(), strict=True))


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


def set_bound(sizes: Iterable[int], z: float | None) -> tuple[int | None, dict[str, object]]:
    """§5.1.2: the largest number of images a set may hold, the largest size whose z-score, (size − μ) / σ over
    the sets that can yield pairs, stays under ``z`` (the thesis: μ = 3.13, σ = 25.87, z < 0.05 → 4), and the
    statistics it came from. None (no bound) with fewer than two such sets or all of one size, as
    ``builder.filters.images.oversized_sets`` drops nothing then, and with no ``z`` (the bound not asked for)."""
    values = list(sizes)
    mean = statistics.fmean(values) if values else None
    spread = statistics.pstdev(values) if len(values) > 1 else 0.0
    bound = None
    if z is not None and mean is not None and spread > 0:
        bound = max(1, math.ceil(mean + z * spread) - 1)
    return bound, {
        "z": z,
        "sets_that_yield_pairs": len(values),
        "mean_images": None if mean is None else round(mean, 4),
        "std_images": round(spread, 4) if len(values) > 1 else None,
        "max_equal_images": bound,
    }


def web_images(
    config: PipelineConfig, index_files: Sequence[Path], referenced: Path | None, work: Path, rules: bool = True
) -> WebImages:
    """The crawl's images as the engines need them for ``config`` (the build's configs share one equivalence);
    ``rules``: apply §4.3.2's image rules (not to a dataset's images, which §5.1.1's checks filtered)."""
    index, repeated = read_index(index_files, rules)
    counts = read_referenced(referenced)
    dropped = {reason: {"images": 0, "references": 0} for reason in LEFT_OUT}
    for reason, _ in index.values():
        if reason is not None:
            dropped[reason]["images"] += 1
    excluded: list[dict[str, str | None]] = []
    kept: dict[str, object] = {}  # referenced URLs that stay, with their facts (None: no record, url equivalence)
    for url, references in sorted(counts.items()):
        reason, facts = index.get(url, (WITHOUT_RECORD, None))
        if reason == WITHOUT_RECORD and config.equivalence == "url":
            reason = None
        if reason is None:
            kept[url] = facts
            continue
        dropped[reason]["references"] += references
        if reason == WITHOUT_RECORD:
            dropped[reason]["images"] += 1
        excluded.append({"language": None, "image": url, "reason": reason})
    with_pixels = {url: facts for url, facts in kept.items() if facts is not None}
    mapping = IdentityMap([], equivalence_groups(with_pixels, config))
    sets: dict[str, list[str]] = {}
    for url in kept:
        sets.setdefault(mapping.image_of(url), []).append(url)
    sizes = [len(urls) for urls in sets.values() if sum(counts[url] for url in urls) >= 2]
    bound, statistics_of_sets = set_bound(sizes, config.set_size_z)
    path = None
    if excluded:
        path = work / "web-excluded.parquet"
        pq.write_table(pa.Table.from_pylist(excluded, schema=EXCLUSION_SCHEMA), path, compression="zstd")
    record = {
        "equivalence": config.equivalence,
        "identity": config.identity_label,
        "hash_bits": config.hash_size**2 if config.equivalence in PERCEPTUAL_EQUIVALENCES else None,
        "hash_threshold": config.hash_threshold if config.equivalence in PERCEPTUAL_EQUIVALENCES else None,
        "image_records": len(index) + repeated,
        "image_records_repeated": repeated,
        "images_referenced": len(counts),
        "references": sum(counts.values()),
        # a dataset's images were filtered while read (§5.1.1, its own counters): only what happened here
        "left_out": dropped if rules else {reason: n for reason, n in dropped.items() if any(n.values())},
        "images_kept": len(kept),
        "references_kept": sum(counts[url] for url in kept),
        "equivalence_sets": len(sets),
        "images_merged": len(kept) - len(sets),
        "set_bound": statistics_of_sets,
    }
    identity = Identity((config.equivalence,), mapping, ImageTableStats())
    return WebImages(identity, path, bound, record)
