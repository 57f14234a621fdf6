"""The images of the web source: the §4.3.2 filter heuristics as named steps, the §4.6 image equivalences
(resource identity, pixel equality, perceptual hashes), the grouping of hashes within a Hamming distance,
and §5.1.2's bound on the size of an equivalence set.

The facts these read come from ``builder.sources.images.inspect_image`` (re-exported here), which decodes
an image once; nothing here decodes an image again.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from builder.config import PERCEPTUAL_EQUIVALENCES, WEB_EQUIVALENCES
from builder.sources.images import (
    DEFAULT_HASH_SIZE,
    DEFAULT_MAX_PIXELS,
    SKIP_REASONS,
    ImageFacts,
    ImageSkip,
    inspect_image,
)

__all__ = [
    "DEFAULT_HASH_SIZE",
    "DEFAULT_MAX_PIXELS",
    "DEFAULT_THRESHOLD",
    "IMAGE_EQUIVALENCES",
    "IMAGE_RULES",
    "IMAGE_RULE_NAMES",
    "OVERSIZE_Z",
    "SKIP_REASONS",
    "ImageFacts",
    "ImageRules",
    "ImageSkip",
    "equivalence_key",
    "group_by_hash",
    "hash_items",
    "image_rule_failed",
    "inspect_image",
    "normalize_url",
    "oversized_sets",
    "referenced_too_often",
]

# §4.6: resource identity, pixel equality, the perceptual hashes, and the DCT hash over 8 orientations
IMAGE_EQUIVALENCES = WEB_EQUIVALENCES  # one list for the configs (builder.config) and the keys here
PERCEPTUAL = PERCEPTUAL_EQUIVALENCES
# Hamming distance at or under which two 36-bit hashes are one image: chosen with benchmarks/image_hashes.py
# (docs/web.md, "Image equivalence"): it keeps false matches among unrelated images at zero there.
DEFAULT_THRESHOLD = 4
OVERSIZE_Z = 0.05  # §5.1.2: a set whose size has a z-score of 0.05 or more is a placeholder image's


# ---- §4.3.2: which images may have a caption --------------------------------------------------------


@dataclass(frozen=True)
class ImageRules:
    """The thresholds of §4.3.2, derived there from 3,010 annotated Common Crawl images (Table 4.2)."""

    min_pixels: int = 3_000
    max_pixels: int = 1_000_000
    min_bytes: int = 3_000
    max_aspect_ratio: float = 3.0
    allow_transparency: bool = False
    max_references: int = 10  # an image referenced more often in a crawl is a logo or an icon


IMAGE_RULES = ImageRules()
# The steps in the order they apply; each name is the funnel counter of the images it drops.
IMAGE_RULE_NAMES = ("too_few_pixels", "too_many_pixels", "small_file", "aspect_ratio", "transparent")


def image_rule_failed(facts: ImageFacts, rules: ImageRules = IMAGE_RULES) -> str | None:
    """The name of the first §4.3.2 rule the image fails (``IMAGE_RULE_NAMES``), or None if it passes all."""
    if facts.pixels < rules.min_pixels:
        return "too_few_pixels"
    if facts.pixels > rules.max_pixels:
        return "too_many_pixels"
    if facts.bytes < rules.min_bytes:
        return "small_file"
    if facts.aspect_ratio > rules.max_aspect_ratio:
        return "aspect_ratio"
    if facts.has_transparency and not rules.allow_transparency:
        return "transparent"
    return None


def referenced_too_often(references: Mapping[str, int], rules: ImageRules = IMAGE_RULES) -> set[str]:
    """The images referenced more than ``rules.max_references`` times in a crawl (§4.3.2: logos, icons)."""
    return {image for image, count in references.items() if count > rules.max_references}


# ---- §4.6.1: resource identity ---------------------------------------------------------------------

_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# what a build's task files record of the rules below (builder.extract.web.web_task): files made under other rules
# are not reused by a resumed build
URL_RULES = "whatwg+rfc3986-escapes"


def _percent(text: str) -> str:
    """Escapes of unreserved characters decoded, the others' hex digits upper-cased (RFC 3986 §6.2.2.2)."""

    def one(match: re.Match[str]) -> str:
        character = chr(int(match.group(1), 16))
        return character if character in _UNRESERVED else "%" + match.group(1).upper()

    return _ESCAPE.sub(one, text)


def normalize_url(url: str) -> str:
    """One spelling per resource (§4.6.1), so that a page's reference to an image and the crawl's record of it
    meet however each was written: the one function both sides go through (``builder.engines.core``).

    The URL is parsed as browsers parse it, by the WHATWG URL Standard (``ada_url``): surrounding spaces and
    controls go, and tabs and newlines anywhere; the scheme and host are lower-cased, an internationalized host
    written in ASCII (IDNA: ``bücher.example`` is ``xn--bcher-kva.example``); a backslash is a slash in an
    http(s) URL; "." and ".." segments are resolved (``%2e`` too); a default port is dropped; an empty path is
    "/"; and what the standard's percent-encode sets name is escaped, in UTF-8 (``café.jpg`` is
    ``caf%C3%A9.jpg``, ``a b.jpg`` is ``a%20b.jpg``). Then, as RFC 3986 §6.2.2.2 allows, escapes of unreserved
    characters are decoded and the others' hex digits upper-cased, and the fragment goes (it never reaches the
    server). User info, the query and its order are kept: they can name other images. A URL the standard
    refuses (``http://a b/``, a host with a forbidden character) raises ``ValueError``: the caller counts it
    unusable.
    """
    from ada_url import normalize_url as parse  # the web extra's; imported where a web build needs it

    href = parse(url)
    cut = href.find("#")
    return _percent(href if cut < 0 else href[:cut])


normalize_url.rules = URL_RULES  # type: ignore[attr-defined]


# ---- §4.6: the key of an image under each equivalence -------------------------------------------------


def _hex(value: int, bits: int) -> str:
    return format(value, f"0{(bits + 3) // 4}x")


def equivalence_key(facts_or_url: ImageFacts | str, kind: str) -> str:
    """The key under which images are one for ``kind`` (``IMAGE_EQUIVALENCES``), exactly: the normalized
    URL (``url``, given the image's URL), the MD5 of the decoded pixels (``pixels``), or a perceptual hash
    in hexadecimal. Hashes within a Hamming distance rather than equal are grouped by ``group_by_hash``."""
    if kind not in IMAGE_EQUIVALENCES:
        raise ValueError(f"unknown image equivalence {kind!r}: one of {', '.join(IMAGE_EQUIVALENCES)}")
    if kind == "url":
        if not isinstance(facts_or_url, str):
            raise TypeError("the url equivalence reads the image's URL, not its pixels")
        return normalize_url(facts_or_url)
    if isinstance(facts_or_url, str):
        raise TypeError(f"the {kind} equivalence reads the image's facts (inspect_image), not its URL")
    facts = facts_or_url
    if kind == "pixels":
        return facts.pixels_md5
    value = {"ahash": facts.ahash, "dhash": facts.dhash, "phash": facts.phash}.get(kind, facts.phash_rotation)
    return _hex(value, facts.hash_bits)


def hash_items(facts: Mapping[str, ImageFacts], kind: str) -> list[tuple[str, int]]:
    """The ``(id, hash)`` items ``group_by_hash`` reads for a perceptual ``kind``. For ``phash-rotation``
    every image brings its eight orientations, so two images are near when any orientation of one is near
    the other: a rotation-invariant distance, not only the exact match of the smallest hash."""
    if kind not in PERCEPTUAL:
        raise ValueError(f"{kind!r} is not a perceptual hash: one of {', '.join(PERCEPTUAL)}")
    if kind == "phash-rotation":
        return [(key, value) for key, one in facts.items() for value in one.phash_orientations]
    return [(key, getattr(one, kind)) for key, one in facts.items()]


# ---- grouping hashes within a Hamming distance --------------------------------------------------------

_BYTE_BITS = np.array([bin(value).count("1") for value in range(256)], dtype=np.uint8)
_CHUNK = 1024  # rows of a bucket compared at once: at most 1024 × bucket size distances in memory


def _popcount(values: np.ndarray) -> np.ndarray:
    """The number of set bits of each uint64 (numpy ≥ 2 counts them itself; older numpy by a byte table)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(values)
    return _BYTE_BITS[values.view(np.uint8)].reshape(*values.shape, 8).sum(axis=-1)


def _find(parent: list[int], node: int) -> int:
    root = node
    while parent[root] != root:
        root = parent[root]
    while parent[node] != root:
        parent[node], node = root, parent[node]
    return root


def group_by_hash(items: Iterable[tuple[str, int]], bits: int, threshold: int) -> dict[str, str]:
    """Each item id → the smallest id of its group: ids are one group when a chain of hashes links them,
    each link at most ``threshold`` differing bits (single linkage). An id given with several hashes is
    one node (the orientations of ``phash-rotation``). The result does not depend on the items' order.

    How: equal hashes are merged first; then the distinct hashes are cut into ``threshold + 1`` bands
    of bits. Two hashes within the threshold agree on at least one whole band (pigeonhole), so only
    hashes that share a band's value are compared, in numpy blocks. Every pair within the threshold is
    found (the result equals comparing all pairs); the work is about n × (threshold + 1) × the size of
    a band's bucket, n²·(t+1)/2^(bits/(t+1)) comparisons for uniform hashes, done as vector operations:
    100,000 36-bit hashes at threshold 4 in seconds (benchmarks/image_hashes.py --scale).
    """
    if not 1 <= bits <= 64:
        raise ValueError(f"hashes of 1 to 64 bits are grouped, not {bits}")
    if threshold < 0:
        raise ValueError(f"the Hamming threshold is 0 or more, not {threshold}")
    ids: dict[str, int] = {}
    hashes: dict[int, int] = {}
    links: list[tuple[int, int]] = []  # (id index, distinct hash index)
    for item, value in items:
        if not 0 <= value < (1 << bits):
            raise ValueError(f"{item}: hash {value:#x} does not fit in {bits} bits")
        links.append((ids.setdefault(item, len(ids)), hashes.setdefault(value, len(hashes))))
    names = list(ids)
    # One node per id and per distinct hash; an id joins the nodes of its hashes.
    parent = list(range(len(ids) + len(hashes)))

    def union(first: int, second: int) -> None:
        one, other = _find(parent, first), _find(parent, second)
        if one != other:
            parent[max(one, other)] = min(one, other)

    for id_index, hash_index in links:
        union(id_index, len(ids) + hash_index)
    values = np.fromiter(hashes, dtype=np.uint64, count=len(hashes))
    if threshold >= bits:  # every two hashes are within the threshold
        for hash_index in range(1, len(values)):
            union(len(ids), len(ids) + hash_index)
    elif threshold and len(values) > 1:
        bands = threshold + 1
        for band in range(bands):  # threshold < bits: every band holds a bit at least
            low, high = band * bits // bands, (band + 1) * bits // bands
            part = (values >> np.uint64(low)) & np.uint64((1 << (high - low)) - 1)
            order = np.argsort(part, kind="stable")
            sorted_part = part[order]
            starts = np.flatnonzero(np.r_[True, sorted_part[1:] != sorted_part[:-1]])
            ends = np.r_[starts[1:], len(order)]
            for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
                if end - start < 2:
                    continue
                members = order[start:end]
                bucket = values[members]
                for chunk in range(0, len(members), _CHUNK):
                    rows = bucket[chunk : chunk + _CHUNK]
                    near = _popcount(rows[:, None] ^ bucket[None, chunk:]) <= threshold
                    near[:, : len(rows)] &= np.triu(np.ones((len(rows), len(rows)), dtype=bool), 1)
                    for row, column in zip(*np.nonzero(near), strict=True):
                        union(len(ids) + int(members[chunk + row]), len(ids) + int(members[chunk + column]))
    smallest: dict[int, str] = {}
    for index, name in enumerate(names):
        root = _find(parent, index)
        if root not in smallest or name < smallest[root]:
            smallest[root] = name
    return {name: smallest[_find(parent, index)] for index, name in enumerate(names)}


# ---- §5.1.2: sets too large to be one image's captions -------------------------------------------------


def oversized_sets(sizes: Mapping[str, int], z: float = OVERSIZE_Z) -> set[str]:
    """The equivalence sets to drop whole (§5.1.2): those whose size has a z-score, (size − μ) / σ over
    the given sets (σ of the population), of ``z`` or more. Placeholder images ("image not found") gather
    hundreds of unrelated captions; the thesis kept z < 0.05 (μ = 3.13, σ = 25.87 on Conceptual Captions:
    sets of up to 4 images). Pass the sets that yield pairs (two members or more), as the thesis counted;
    with fewer than two sets, or all of one size, nothing is dropped."""
    if not math.isfinite(z):
        raise ValueError(f"the z-score bound is a finite number, not {z}")
    if len(sizes) < 2:
        return set()
    mean = statistics.fmean(sizes.values())
    spread = statistics.pstdev(sizes.values(), mu=mean)
    if spread == 0:
        return set()
    return {name for name, size in sizes.items() if (size - mean) / spread >= z}
