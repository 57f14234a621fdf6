"""Image clustering, the image filter, and paraphrase construction.

All references to the same normalized ``File:`` title form one cluster (image
equivalence by resource identity, paper section 3); an identity map
(:mod:`builder.filters.identity`) may first give titles of one image a common name. The image filter bounds the
number of references per cluster; paraphrase candidates are all unordered pairs
of texts of the same caption type within a cluster.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from collections.abc import Callable, Iterable

__all__ = [
    "Cluster",
    "Pair",
    "SORT_COLUMNS",
    "build_pairs",
    "cluster_from_rows",
    "cluster_rows",
    "count_pairs",
    "filter_texts",
    "has_caption",
    "languages_at_least",
    "max_references",
    "max_references_per_language",
    "min_references",
    "sort_key",
]

CAPTION_TYPES = ("caption", "alt")
# the order of references within a cluster (and of clusters: by image first), in every engine
SORT_COLUMNS = ("image", "page_id", "revision_id", "position", "file", "language")


@dataclasses.dataclass(frozen=True)
class Reference:
    """One use of an image on one page (revision), with its cleaned texts."""

    page: str
    page_id: int
    revision_id: int
    position: int
    source: str
    caption: str
    alt: str
    file: str  # the title the page used
    redirect: str  # that title with File redirects followed (the title itself without redirects)
    language: str = "en"  # the language of the wiki whose page holds the reference
    # a web reference's page record: its WARC-Record-ID and WARC-Date, and the page's <html lang> (None elsewhere)
    record: str | None = None
    date: str | None = None
    page_language: str | None = None
    user: str | None = None  # a dataset sample's user, from the build's user column (None elsewhere)

    @property
    def page_key(self) -> tuple[str, int]:
        """The page, told apart from the page of another wiki with the same id."""
        return self.language, self.page_id

    def text(self, caption_type: str) -> str:
        return self.caption if caption_type == "caption" else self.alt

    def texts(self) -> list[tuple[str, str]]:
        """The non-empty ``(caption_type, text)`` pairs of this reference."""
        return [(kind, self.text(kind)) for kind in CAPTION_TYPES if self.text(kind)]


@dataclasses.dataclass(frozen=True)
class Cluster:
    """All references to one image."""

    image: str
    references: tuple[Reference, ...]

    def with_references(self, references: Iterable[Reference]) -> Cluster:
        return Cluster(self.image, tuple(references))


@dataclasses.dataclass(frozen=True)
class Pair:
    """A paraphrase candidate: two texts of one caption type for one image."""

    image: str
    caption_type: str
    first: Reference
    second: Reference

    @property
    def sentence1(self) -> str:
        return self.first.text(self.caption_type)

    @property
    def sentence2(self) -> str:
        return self.second.text(self.caption_type)

    @property
    def identity(self) -> str:
        """What made the two references one image: the same title, a redirect, or equal files (SHA-1)."""
        if self.first.file == self.second.file:
            return "title"
        if self.first.redirect == self.second.redirect:
            return "redirect"
        return "sha1"


def min_references(bound: int) -> Callable[[Cluster], Cluster | None]:
    """Image filter: an image needs ``bound`` references to yield any pair."""

    def keep(cluster: Cluster) -> Cluster | None:
        return cluster if len(cluster.references) >= bound else None

    return keep


def max_references(bound: int) -> Callable[[Cluster], Cluster | None]:
    """Image filter: icons, flags and pictograms are referenced far more often than pictures."""

    def keep(cluster: Cluster) -> Cluster | None:
        return cluster if len(cluster.references) <= bound else None

    return keep


def filter_texts(cluster: Cluster, keep_text: Callable[[str, str], bool]) -> Cluster | None:
    """Blank the texts that fail ``keep_text(text, language)``; drop references left without any text.

    Each text is judged in the language of its reference's wiki.
    """
    kept = []
    for reference in cluster.references:
        language = reference.language
        caption = reference.caption if reference.caption and keep_text(reference.caption, language) else ""
        alt = reference.alt if reference.alt and keep_text(reference.alt, language) else ""
        if caption or alt:
            kept.append(dataclasses.replace(reference, caption=caption, alt=alt))
    return cluster.with_references(kept) if kept else None


def has_caption(cluster: Cluster) -> Cluster | None:
    """Keep the references that carry a caption or an alternative text."""
    return filter_texts(cluster, lambda text, _: bool(text))


def languages_at_least(bound: int) -> Callable[[Cluster], Cluster | None]:
    """Cross-lingual image filter: an image needs references in ``bound`` languages to yield any pair."""

    def keep(cluster: Cluster) -> Cluster | None:
        return cluster if len({reference.language for reference in cluster.references}) >= bound else None

    return keep


def max_references_per_language(bound: int) -> Callable[[Cluster], Cluster | None]:
    """Cross-lingual upper bound: an icon or flag is used often within one edition, a picture is not."""

    def keep(cluster: Cluster) -> Cluster | None:
        counts = collections.Counter(reference.language for reference in cluster.references)
        return cluster if max(counts.values()) <= bound else None

    return keep


def count_pairs(cluster: Cluster, across_languages: bool = False) -> int:
    """Number of candidate pairs the cluster would give: C(n, 2) per caption type.

    ``across_languages`` counts only the pairs of texts from two languages.
    """
    total = 0
    for kind in CAPTION_TYPES:
        holders = collections.Counter(reference.language for reference in cluster.references if reference.text(kind))
        n = sum(holders.values())
        total += n * (n - 1) // 2
        if across_languages:
            total -= sum(count * (count - 1) // 2 for count in holders.values())
    return total


def build_pairs(cluster: Cluster, across_languages: bool = False) -> list[Pair]:
    """All unordered pairs of texts of the same caption type, in reference order.

    ``across_languages`` pairs only texts of two languages, the one of the language first
    in alphabetical order first, so that a language pair always reads the same way.
    """
    pairs = []
    for kind in CAPTION_TYPES:
        holders = [reference for reference in cluster.references if reference.text(kind)]
        for a, b in itertools.combinations(holders, 2):
            if not across_languages:
                pairs.append(Pair(cluster.image, kind, a, b))
            elif a.language != b.language:
                pairs.append(Pair(cluster.image, kind, *sorted((a, b), key=lambda reference: reference.language)))
    return pairs


def reference_from_row(row: dict) -> Reference:
    """A reference from a row of the reference shards (a missing text is an empty one)."""
    return Reference(
        page=row["page"],
        page_id=row["page_id"],
        revision_id=row["revision_id"],
        position=row["position"],
        source=row["source"],
        caption=row["caption"] or "",
        alt=row["alt"] or "",
        file=row["file"],
        redirect=row["redirect"],
        language=row["language"],
        record=row.get("record"),
        date=row.get("date"),
        page_language=row.get("page_language"),
        user=row.get("user"),
    )


def cluster_rows(cluster: Cluster) -> list[dict]:
    """The reference rows of a cluster: the inverse of :func:`cluster_from_rows`."""
    return [{"image": cluster.image, **dataclasses.asdict(reference)} for reference in cluster.references]


def cluster_from_rows(image: str, rows: list[dict]) -> Cluster:
    """A cluster from its reference rows, already in :data:`SORT_COLUMNS` order."""
    return Cluster(image, tuple(reference_from_row(row) for row in rows))


def sort_key(row: dict) -> tuple:
    """:data:`SORT_COLUMNS` of a reference row, for engines that group without sorting."""
    return tuple(row[column] for column in SORT_COLUMNS)
