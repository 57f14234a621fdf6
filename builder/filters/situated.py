"""Déjà's visually situated paraphrases (Chen et al. 2015, §5) as pairs of a build: a triple (i, c, p) says that
caption p describes image i as well as i's own caption c does.

§5 prepares, for an image–caption edge (i, c) of the graph, the captions that share the most physical-object nouns
with c, and reranks them by the neighbourhood affinity of i (:mod:`builder.filters.association`); §8.2's
PARAcaption is its text-only variant, which picks among those captions without looking at the image. This module
builds PARAcaption (the ``deja-paracaption`` config) in the SQL both engines run, over the graph that
:func:`builder.filters.repetition.deja_graph` left in the engine's tables: for each kept caption c, the caption p
sharing the most nouns with it (ties: the first in canonical order, where the paper draws at random), situated in
c's first image (image order). Its rows have a pair's columns (:data:`builder.publish.writer.DEJA_PAIR_SCHEMA`),
so ``metrics score`` and ``benchmarks/compare.py`` read them as they read gold's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from builder.filters.funnel import FunnelRow
from builder.filters.repetition import NOUN_SEPARATOR, PARACAPTION_STEP, DejaTables

__all__ = ["paracaption", "paracaption_row"]

_EDGE = "canonical, image, text, page, source, kind, revision_id, file, nouns, images"


def paracaption(tables: DejaTables) -> tuple[FunnelRow, str]:
    """PARAcaption over the graph's tables: its funnel row (the captions with a paraphrase, their images and
    records, the pairs) and the query of its rows, in caption order."""
    tables.split("deja_caption_nouns", "SELECT canonical, nouns FROM deja_captions", "canonical", "nouns")
    tables.table(
        "deja_shared",
        "SELECT a.canonical AS c, b.canonical AS p, count(*) AS shared FROM deja_caption_nouns a "
        "JOIN deja_caption_nouns b ON a.part = b.part AND a.canonical <> b.canonical GROUP BY a.canonical, b.canonical",
    )
    tables.table(
        "deja_best",
        "SELECT c, p FROM (SELECT c, p, row_number() OVER (PARTITION BY c ORDER BY shared DESC, p) AS nth "
        "FROM deja_shared) s WHERE nth = 1",
    )
    tables.table(
        "deja_first",
        f"SELECT {_EDGE}, first_reference FROM (SELECT e.*, row_number() OVER (PARTITION BY canonical ORDER BY image) "
        "AS nth, concat_ws(chr(31), page, CAST(revision_id AS STRING), CAST(position AS STRING), kind) "
        "AS first_reference FROM deja_edges e) f WHERE nth = 1",
    )
    columns = ", ".join(f"{side}.{name} AS {name}{number}" for side, number in (("x", 1), ("y", 2)) for name in
                        _EDGE.split(", "))  # fmt: skip
    tables.table(
        "deja_paracaption",
        f"SELECT {columns}, x.first_reference AS reference FROM deja_best b "
        "JOIN deja_first x ON x.canonical = b.c JOIN deja_first y ON y.canonical = b.p",
    )
    (images, references, captions, pairs) = tables.rows(
        "SELECT count(DISTINCT image1), count(DISTINCT reference), count(DISTINCT canonical1), count(*) "
        "FROM deja_paracaption"
    )[0]
    row = FunnelRow(0, PARACAPTION_STEP, int(images), int(references), int(captions), int(pairs))
    return row, "SELECT * FROM deja_paracaption ORDER BY canonical1"


def paracaption_row(row: Mapping[str, object]) -> dict[str, object]:
    """A row of the ``deja_paracaption`` table as a published pair (:data:`builder.publish.writer.DEJA_PAIR_SCHEMA`)."""
    first, second = str(row["nouns1"] or ""), str(row["nouns2"] or "")
    shared = sorted(set(first.split(NOUN_SEPARATOR)) & set(second.split(NOUN_SEPARATOR)) - {""})
    key = f"{row['image1']}\x1f{row['canonical1']}\x1f{row['canonical2']}"
    return {
        "id": hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest(),
        "image": row["image1"],
        "caption_type": row["kind1"],
        "sentence1": row["text1"],
        "sentence2": row["text2"],
        "page1": row["page1"],
        "page2": row["page2"],
        "source1": row["source1"],
        "source2": row["source2"],
        "revision1": row["revision_id1"],
        "revision2": row["revision_id2"],
        "same_page": row["page1"] == row["page2"],
        "file1": row["file1"],
        "file2": row["file2"],
        "identity": "paracaption",
        "canonical1": row["canonical1"],
        "canonical2": row["canonical2"],
        "shared_nouns": shared,
        "images1": row["images1"],
        "images2": row["images2"],
        "affinity": None,
    }
