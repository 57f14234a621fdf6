"""Déjà's visually situated paraphrases (Chen et al. 2015, §5) as pairs of a build: a triple (i, c, p) says that
caption p describes image i as well as i's own caption c does.

§5 prepares, for an image–caption edge (i, c) of the graph, the captions that share the most physical-object nouns
with c, and reranks them by the neighbourhood affinity of i (:mod:`builder.filters.association`); §8.2's
PARAcaption is its text-only variant, which picks among those captions without looking at the image. Both run in
the SQL both engines run, over the graph that :func:`builder.filters.repetition.deja_graph` left in the engine's
tables, and their rows have a pair's columns (:data:`builder.publish.writer.DEJA_PAIR_SCHEMA`), so ``metrics
score`` and ``benchmarks/compare.py`` read them as they read gold's.

- ``deja-paracaption``: for each kept caption c, the caption p sharing the most nouns with it (ties drawn at random
  as the paper draws them, by the MD5 of the pair: the same in every run and on both engines), situated in c's
  first image (image order).
- ``deja-paraphrases`` (§5 (2)): for each kept caption c, two of its images i (the paper samples two at random;
  here the two first by the MD5 of caption and image, so a rerun and the other engine pick the same), the K = 100
  captions sharing the most nouns with c (footnote 5's K; ties drawn by the MD5 of the pair), and among them the p
  of the highest φ(i, N_p): the mean of the σ largest similarities ``−‖i − j‖²`` between i and p's images j, in the
  build's feature (the image index's vectors, :class:`builder.sources.features.Describer`). σ is chosen as
  footnote 5 chooses it, on a held-out development set of 300 of the graph's images (the first by MD5): each is
  captioned by ASSOC from the graph without its own captions and their images, and σ is the value whose captions
  score the best mean BLEU@1 (no brevity penalty) against its own captions. A similarity is quantised to 2⁻³²
  before it is summed, so a sum is exact in any order and φ, its ties and the rows are the same on both engines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np
import pyarrow as pa

from builder.config import PipelineConfig
from builder.filters.funnel import FunnelRow
from builder.filters.repetition import NOUN_SEPARATOR, PARACAPTION_STEP, VECTOR_STEP, VISUAL_STEP, DejaTables
from builder.sources.features import similarities, vector_bytes, vector_kind

__all__ = [
    "DEV_IMAGES",
    "SituatedPairs",
    "deja_pairs",
    "paracaption",
    "paracaption_row",
    "quantised_similarities",
    "visual_paraphrases",
]

_EDGE = "canonical, image, text, page, source, kind, revision_id, file, nouns, images"
DEV_IMAGES = 300  # footnote 5: σ chosen on a held-out development set of 300 images
QUERIES_PER_CAPTION = 2  # §5: "for each caption in our corpus, we randomly sample two of its associated images"


@dataclass(frozen=True)
class SituatedPairs:
    """What a pairing config of the graph computed: its funnel rows after the graph's, the query of its rows (in
    the order ``order`` names), and what its card and funnel.json say of it (σ and how it was chosen)."""

    funnel: list[FunnelRow]
    query: str
    order: tuple[str, ...]
    statistics: dict[str, object]


def deja_pairs(config: PipelineConfig, tables: DejaTables) -> SituatedPairs:
    """The pairs of a Déjà pairing config (``paracaption`` or ``paraphrases``) over the graph's tables."""
    if config.deja == "paracaption":
        row, query = paracaption(tables)
        return SituatedPairs([row], query, ("canonical1",), {})
    if config.deja == "paraphrases":
        return visual_paraphrases(config, tables)
    raise ValueError(f"{config.name}: a Déjà config of edges ({config.deja!r}) has no pairs")


# The captions a noun offers as candidates to each caption that holds it: at most this many, drawn by MD5. Every
# caption's pool grows with the captions sharing its nouns, so pairs grew with their square (4,000 captions
# sharing "dog": 33 s); bounded, they grow linearly, and a caption still sees 1,000 per noun, ten times K.
PARTNERS_PER_NOUN = 1000


def _shared_nouns(tables: DejaTables) -> None:
    """Table ``deja_shared(c, p, shared)``: two kept captions sharing a physical-object noun, and how many, p among
    the :data:`PARTNERS_PER_NOUN` captions that each of c's nouns offers."""
    tables.split("deja_caption_nouns", "SELECT canonical, nouns FROM deja_captions", "canonical", "nouns")
    tables.table(
        "deja_noun_partners",
        "SELECT canonical, part FROM (SELECT n.*, row_number() OVER (PARTITION BY part ORDER BY md5(canonical), "
        f"canonical) AS draw FROM deja_caption_nouns n) d WHERE draw <= {PARTNERS_PER_NOUN}",
    )
    tables.table(
        "deja_shared",
        "SELECT a.canonical AS c, b.canonical AS p, count(*) AS shared FROM deja_caption_nouns a "
        "JOIN deja_noun_partners b ON a.part = b.part AND a.canonical <> b.canonical GROUP BY a.canonical, b.canonical",
    )


def _first_edges(tables: DejaTables) -> None:
    """Table ``deja_first``: each caption's first edge (image order), the one a pair shows for the paraphrase."""
    tables.table(
        "deja_first",
        f"SELECT {_EDGE}, first_reference FROM (SELECT e.*, row_number() OVER (PARTITION BY canonical ORDER BY image) "
        "AS nth, concat_ws(chr(31), page, CAST(revision_id AS STRING), CAST(position AS STRING), kind) "
        "AS first_reference FROM deja_edges e) f WHERE nth = 1",
    )


def _pair_columns() -> str:
    return ", ".join(f"{side}.{name} AS {name}{number}" for side, number in (("x", 1), ("y", 2)) for name in
                     _EDGE.split(", "))  # fmt: skip


# Ties among the captions that share as many nouns with c are drawn at random, as the paper draws them: by the MD5
# of the pair, a draw that is the same in every run and on both engines (the alphabetical first gave 59 of
# Flickr8k's 446 captions one paraphrase, "a black and brown dog running in a field").
_DRAW = "md5(concat(c, chr(31), p)), p"


def paracaption(tables: DejaTables) -> tuple[FunnelRow, str]:
    """PARAcaption over the graph's tables: its funnel row (the captions with a paraphrase, their images and
    records, the pairs) and the query of its rows, in caption order."""
    _shared_nouns(tables)
    tables.table(
        "deja_best",
        f"SELECT c, p FROM (SELECT c, p, row_number() OVER (PARTITION BY c ORDER BY shared DESC, {_DRAW}) AS nth "
        "FROM deja_shared) s WHERE nth = 1",
    )
    _first_edges(tables)
    tables.table(
        "deja_paracaption",
        f"SELECT {_pair_columns()}, x.first_reference AS reference, CAST(NULL AS DOUBLE) AS affinity FROM deja_best b "
        "JOIN deja_first x ON x.canonical = b.c JOIN deja_first y ON y.canonical = b.p",
    )
    (images, references, captions, pairs) = tables.rows(
        "SELECT count(DISTINCT image1), count(DISTINCT reference), count(DISTINCT canonical1), count(*) "
        "FROM deja_paracaption"
    )[0]
    row = FunnelRow(0, PARACAPTION_STEP, int(images), int(references), int(captions), int(pairs))
    return row, "SELECT * FROM deja_paracaption ORDER BY canonical1"


def _vector(kind: str, facts: str | None, _: str | None = None) -> bytes | None:
    """The feature vector in an image record's facts as raw bytes of the build's ``kind`` (None: the record has
    none): decoded once per image, so that the similarity reads a block of rows as one matrix."""
    if not facts:
        return None
    vector = json.loads(facts).get("vector")
    return vector_bytes(vector, kind) if isinstance(vector, str) else None


def quantised_similarities(kind: str, first: pa.Array, second: pa.Array) -> pa.Array:
    """φ's similarities of a block of rows, each on a grid of 2⁻³² (so that sums are exact in any order), null
    where an image has no vector."""
    values = similarities(first, second, kind)
    missing = np.isnan(values)
    return pa.array(np.round(values * 2.0**32) / 2.0**32, type=pa.float64(), mask=missing)


def _phi(sigma: int | None, column: str = "sim", rank: str = "r") -> str:
    """φ's SQL over ranked similarities: the mean of the σ largest (all: ``None``), as a sum over a count."""
    if sigma is None:
        return f"sum({column}) / count(*)"
    return f"sum(CASE WHEN {rank} <= {sigma} THEN {column} END) / count(CASE WHEN {rank} <= {sigma} THEN 1 END)"


def visual_paraphrases(config: PipelineConfig, tables: DejaTables) -> SituatedPairs:
    """§5 (2) over the graph's tables and the image records' vectors (view ``deja_image_records(image, facts,
    position, record)``, which the engine provides): funnel rows, the rows' query, σ and its development set."""
    from builder.filters.association import DEFAULT_K

    kind = vector_kind(config.deja_feature)
    tables.function("deja_vector", partial(_vector, kind), returns="binary")
    tables.block_function("deja_similarity", partial(quantised_similarities, kind))
    tables.table(
        "deja_vectors",
        "SELECT image, vector FROM (SELECT r.image, deja_vector(r.facts, CAST(NULL AS STRING)) AS vector, "
        "row_number() OVER (PARTITION BY r.image ORDER BY r.position, r.record) AS nth "
        "FROM deja_image_records r JOIN (SELECT DISTINCT image FROM deja_edges) g ON r.image = g.image "
        "WHERE r.facts IS NOT NULL) f WHERE nth = 1 AND vector IS NOT NULL",
    )
    tables.table(
        "deja_seen",
        "SELECT e.canonical, e.image, v.vector, concat_ws(chr(31), e.page, CAST(e.revision_id AS STRING), "
        "CAST(e.position AS STRING), e.kind) AS reference FROM deja_edges e JOIN deja_vectors v ON e.image = v.image",
    )
    (vector_row,) = tables.rows(
        "SELECT count(DISTINCT image), count(DISTINCT reference), count(DISTINCT canonical), count(*) FROM deja_seen"
    )
    _shared_nouns(tables)
    _first_edges(tables)
    sigma, development = (config.deja_sigma, {"given": True}) if config.deja_sigma else _choose_sigma(tables, DEFAULT_K)
    tables.table(
        "deja_queries",
        f"SELECT canonical AS c, image AS i, vector FROM (SELECT s.*, row_number() OVER (PARTITION BY canonical "
        "ORDER BY md5(concat(canonical, chr(31), image)), image) AS nth FROM deja_seen s) q "
        f"WHERE nth <= {QUERIES_PER_CAPTION}",
    )
    tables.table(
        "deja_candidates",
        f"SELECT c, p, shared FROM (SELECT s.*, row_number() OVER (PARTITION BY c ORDER BY shared DESC, {_DRAW}) "
        f"AS nth FROM deja_shared s) k WHERE nth <= {DEFAULT_K}",
    )
    tables.table(
        "deja_ranked",
        "SELECT c, i, p, sim, row_number() OVER (PARTITION BY c, i, p ORDER BY sim DESC, j) AS r FROM ("
        "SELECT q.c, q.i, k.p, n.image AS j, deja_similarity(q.vector, n.vector) AS sim "
        "FROM deja_queries q JOIN deja_candidates k ON q.c = k.c JOIN deja_seen n ON n.canonical = k.p"
        f"{'' if config.deja_query_image else ' WHERE n.image <> q.i'}) s",
    )
    tables.table(
        "deja_visual",
        "SELECT c, i, p, affinity FROM (SELECT c, i, p, affinity, row_number() OVER (PARTITION BY c, i "
        f"ORDER BY affinity DESC, p) AS nth FROM (SELECT c, i, p, {_phi(sigma)} AS affinity FROM deja_ranked "
        "GROUP BY c, i, p) a) b WHERE nth = 1",
    )
    columns = _pair_columns()
    tables.table(
        "deja_paraphrases",
        f"SELECT {columns}, concat_ws(chr(31), x.page, CAST(x.revision_id AS STRING), CAST(x.position AS STRING), "
        "x.kind) AS reference, b.affinity FROM deja_visual b JOIN deja_edges x ON x.canonical = b.c AND x.image = b.i "
        "JOIN deja_first y ON y.canonical = b.p",
    )
    (images, references, captions, pairs) = tables.rows(
        "SELECT count(DISTINCT image1), count(DISTINCT reference), count(DISTINCT canonical1), count(*) "
        "FROM deja_paraphrases"
    )[0]
    funnel = [
        FunnelRow(0, VECTOR_STEP, *(int(value) for value in vector_row)),
        FunnelRow(0, VISUAL_STEP, int(images), int(references), int(captions), int(pairs)),
    ]
    statistics = {
        "feature": config.deja_feature,
        "K": DEFAULT_K,
        "partners_per_noun": PARTNERS_PER_NOUN,
        "sigma": "all" if sigma is None else sigma,
        "queries_per_caption": QUERIES_PER_CAPTION,
        "query_image": config.deja_query_image,
        "development": development,
    }
    return SituatedPairs(funnel, "SELECT * FROM deja_paraphrases ORDER BY canonical1, image1", ("canonical1", "image1"),
                         statistics)  # fmt: skip


def _choose_sigma(tables: DejaTables, K: int) -> tuple[int | None, dict[str, object]]:  # noqa: N803 - the paper's K
    """σ by footnote 5: ASSOC captions each development image from the graph without its own captions and their
    images (K nearest images' captions, reranked by φ at each σ of ``SIGMA_CANDIDATES``), and the σ whose captions
    score the best mean BLEU@1 against its own captions wins. Only the development set's φ values and texts come
    to the driver (at most 300 images × their candidates), never the graph."""
    from builder.filters.association import SIGMA_CANDIDATES, best_sigma, bleu1

    tables.table(
        "deja_dev",
        f"SELECT image AS d, vector FROM deja_vectors ORDER BY md5(image), image LIMIT {DEV_IMAGES}",
    )
    tables.table(
        "deja_dev_own", "SELECT DISTINCT d.d, e.canonical, e.text FROM deja_dev d JOIN deja_edges e ON e.image = d.d"
    )
    tables.table(
        "deja_dev_gone",
        "SELECT DISTINCT o.d, e.image FROM deja_dev_own o JOIN deja_edges e ON e.canonical = o.canonical",
    )
    # the development images' vectors go to every task beside the graph's (a broadcast: 300 vectors), and each
    # similarity is computed before the join that drops the images left out, so no vector crosses a shuffle
    tables.table(
        "deja_dev_sims",
        "SELECT s.d, s.j, s.sim FROM (SELECT /*+ BROADCAST(d) */ d.d, v.image AS j, "
        "deja_similarity(d.vector, v.vector) AS sim FROM deja_dev d CROSS JOIN deja_vectors v) s "
        "LEFT JOIN deja_dev_gone g ON g.d = s.d AND g.image = s.j WHERE g.image IS NULL",
    )
    tables.table(
        "deja_dev_near",
        f"SELECT d, j FROM (SELECT s.*, row_number() OVER (PARTITION BY d ORDER BY sim DESC, j) AS nth "
        f"FROM deja_dev_sims s) n WHERE nth <= {K}",
    )
    tables.table(
        "deja_dev_ranked",
        "SELECT k.d, k.p, s.sim, row_number() OVER (PARTITION BY k.d, k.p ORDER BY s.sim DESC, s.j) AS r FROM "
        "(SELECT DISTINCT n.d, e.canonical AS p FROM deja_dev_near n JOIN deja_edges e ON e.image = n.j) k "
        "JOIN deja_edges e ON e.canonical = k.p JOIN deja_dev_sims s ON s.d = k.d AND s.j = e.image",
    )
    phis = ", ".join(_phi(sigma) for sigma in SIGMA_CANDIDATES)
    rows = tables.rows(f"SELECT d, p, {phis} FROM deja_dev_ranked GROUP BY d, p")
    wanted = "SELECT DISTINCT p FROM deja_dev_ranked"
    texts = dict(tables.rows(f"SELECT f.canonical, f.text FROM deja_first f JOIN ({wanted}) k ON f.canonical = k.p"))
    references: dict[str, list[str]] = {}
    for image, text in sorted(tables.rows("SELECT d, text FROM deja_dev_own")):
        references.setdefault(image, []).append(text)
    ((chosen,),) = tables.rows("SELECT count(*) FROM deja_dev")
    scored = sorted({row[0] for row in rows})
    means: dict[int | None, float] = {}
    if scored:
        for number, sigma in enumerate(SIGMA_CANDIDATES):
            best: dict[str, tuple[float, str]] = {}
            for row in rows:
                phi, caption = row[2 + number], row[1]
                if phi is None:
                    continue
                held = best.get(row[0])
                if held is None or (-phi, caption) < (-held[0], held[1]):
                    best[row[0]] = (phi, caption)
            hypotheses = [texts[best[image][1]] for image in scored]
            _, per_image = bleu1(hypotheses, [references[image] for image in scored])
            means[sigma] = sum(per_image) / len(per_image)
    sigma = best_sigma(means) if means else None
    return sigma, {
        "images": int(chosen),
        "scored": len(scored),  # with a candidate once their own captions and images are out of the pool
        "bleu1": {("all" if key is None else str(key)): round(value, 6) for key, value in means.items()},
    }


def paracaption_row(row: Mapping[str, object]) -> dict[str, object]:
    """A row of the ``deja_paracaption`` or ``deja_paraphrases`` table as a published pair
    (:data:`builder.publish.writer.DEJA_PAIR_SCHEMA`); a visual paraphrase carries its affinity φ."""
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
        "identity": "paracaption" if row.get("affinity") is None else "visual",
        "canonical1": row["canonical1"],
        "canonical2": row["canonical2"],
        "shared_nouns": shared,
        "images1": row["images1"],
        "images2": row["images2"],
        "affinity": row.get("affinity"),
    }
