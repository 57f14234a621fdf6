"""The funnel of Table 3: what remains after each step (images, references, captions, pairs),
added up over clusters and partitions, and printed in the paper's layout.

A references config pairs nothing: its last column counts its records (its rows, one per reference and text), as
its headline does, named ``records`` in ``funnel.json`` and "Records" in the table; a Déjà config's counts its
caption–image edges (``edges``), and its captions column its captions in canonical form.
"""

from __future__ import annotations

import dataclasses

from builder.filters.clusters import (
    Cluster,
    Pair,
    count_pairs,
)

__all__ = ["Funnel", "FunnelRow", "UNITS"]

# what a funnel's last column counts: pairs; a references config's records; a Déjà config's caption–image edges
UNITS = ("pairs", "records", "edges")


@dataclasses.dataclass
class FunnelRow:
    """What remains after one step (the columns of Table 3)."""

    step: int
    name: str
    images: int = 0
    references: int = 0
    captions: int = 0
    pairs: int = 0  # a references config's: its records (``Funnel.unit``)
    images_refs_ge2: int = 0
    images_refs_ge5: int = 0

    def count_cluster(self, cluster: Cluster, across_languages: bool = False) -> None:
        n = len(cluster.references)
        self.images += 1
        self.references += n
        self.captions += sum(len(reference.texts()) for reference in cluster.references)
        self.pairs += count_pairs(cluster, across_languages)
        self.images_refs_ge2 += n >= 2
        self.images_refs_ge5 += n >= 5

    def count_pairs(self, pairs: list[Pair]) -> None:
        """After pair filters, an image, reference or text counts while some pair still uses it."""
        if not pairs:
            return
        references = {id(pair.first) for pair in pairs} | {id(pair.second) for pair in pairs}
        texts = {(id(p.first), p.caption_type) for p in pairs} | {(id(p.second), p.caption_type) for p in pairs}
        self.images += 1
        self.references += len(references)
        self.captions += len(texts)
        self.pairs += len(pairs)
        self.images_refs_ge2 += len(references) >= 2
        self.images_refs_ge5 += len(references) >= 5

    def add(self, other: FunnelRow) -> None:
        for field in ("images", "references", "captions", "pairs", "images_refs_ge2", "images_refs_ge5"):
            setattr(self, field, getattr(self, field) + getattr(other, field))


class Funnel:
    """The rows of Table 3 for one build."""

    def __init__(self, names: list[str], unit: str = "pairs") -> None:
        self.rows = [FunnelRow(step, name) for step, name in enumerate(names)]
        self.unit = unit  # what the last column counts (:data:`UNITS`)

    def add(self, other: Funnel) -> None:
        for mine, theirs in zip(self.rows, other.rows, strict=True):
            mine.add(theirs)

    def set_rows(self, rows: list[FunnelRow]) -> None:
        """Every step's counts as an engine computed them in one place (a Déjà config's graph), in place, so that
        the chain's steps keep their rows."""
        for mine, theirs in zip(self.rows, rows, strict=True):
            for field in dataclasses.fields(FunnelRow):
                if field.name not in ("step", "name"):
                    setattr(mine, field.name, getattr(theirs, field.name))

    def to_list(self) -> list[dict[str, object]]:
        rows = [dataclasses.asdict(row) for row in self.rows]
        if self.unit != "pairs":
            rows = [{(self.unit if key == "pairs" else key): value for key, value in row.items()} for row in rows]
        return rows

    @classmethod
    def from_list(cls, rows: list[dict[str, object]]) -> Funnel:
        unit = next((name for name in UNITS if rows and name in rows[0]), "pairs")
        funnel = cls([str(row["name"]) for row in rows], unit)
        named = [{("pairs" if key == unit else key): value for key, value in row.items()} for row in rows]
        funnel.rows = [FunnelRow(**row) for row in named]  # type: ignore[arg-type]
        return funnel

    def markdown(self) -> str:
        """Table 3's layout: remaining counts and the change against the previous step."""
        header = (
            "| Step | Filter | Images | Δ | Refs. ≥ 2 | Refs. ≥ 5 | References | Δ | μ_img "
            f"| Captions | Δ | {self.unit.capitalize()} | Δ |\n"
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        )
        lines = []
        previous: FunnelRow | None = None
        for row in self.rows:
            mean = f"{row.references / row.images:.2f}" if row.images else "–"
            lines.append(
                f"| {row.step} | {row.name} | {row.images:,} | {_change(previous, row, 'images')} "
                f"| {row.images_refs_ge2:,} | {row.images_refs_ge5:,} "
                f"| {row.references:,} | {_change(previous, row, 'references')} | {mean} "
                f"| {row.captions:,} | {_change(previous, row, 'captions')} "
                f"| {row.pairs:,} | {_change(previous, row, 'pairs')} |"
            )
            previous = row
        return header + "\n".join(lines) + "\n"


def _change(previous: FunnelRow | None, row: FunnelRow, field: str) -> str:
    if previous is None:
        return "–"
    before = getattr(previous, field)
    if before == 0:
        return "0%"
    return f"{(getattr(row, field) - before) / before:+.0%}"
