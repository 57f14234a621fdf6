"""Déjà Image-Captions (Chen et al., NAACL 2015): captioning by the association structure (§3), its INSTANCE
baseline (§4) and visual paraphrasing (§5), over feature matrices.

The corpus is a bipartite graph of captions and images (§2); a caption's visual neighbourhood N_c is the set of
its images. Everything here takes image features as numpy matrices (one row an image), so it does not depend on
how they were computed (Tinyimage, GIST, their combination: ``builder.sources.features``). Similarity is the
paper's ``sim(Q, I) = −‖Q − I‖²``, in float64 so that equal images tie exactly.

Ties are broken the same way everywhere, so the same input gives the same answer: captions by their id (the
string that names them, ascending), images by their row. The paper chooses at random where it needs a choice
(PARAcaption, §8.2); here that choice is the first by id, so a rerun gives the same rows.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = [
    "CANDIDATE_FEATURE",
    "DEFAULT_K",
    "SIGMA_CANDIDATES",
    "DevQuery",
    "Pool",
    "Scored",
    "Shared",
    "affinity",
    "assoc",
    "assoc_ranking",
    "best_sigma",
    "bleu1",
    "choose_sigma",
    "draw",
    "instance",
    "paraphrase_candidates",
    "similarities",
    "text_only_paraphrase",
    "visual_paraphrase",
]

DEFAULT_K = 100  # §3 footnote 5: the K closest images give the candidate captions
CANDIDATE_FEATURE = "gist+tiny"  # §4: INSTANCE and ASSOC's candidates use the combination of the two features
# σ values tried on the development set (footnote 5 gives none; None = the whole neighbourhood, "ASSOC w/ all")
SIGMA_CANDIDATES: tuple[int | None, ...] = (1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50, None)
_CHUNK = 1 << 22  # float64 cells held at once by the difference Q − I of a batch (32 MiB)


@dataclass(frozen=True)
class Scored:
    """A caption and its affinity to the query image (higher is closer; 0 is an identical image)."""

    caption: str
    affinity: float


@dataclass(frozen=True)
class Shared:
    """A paraphrase candidate and the physical-object nouns it shares with the original caption."""

    caption: str
    nouns: frozenset[str]


def similarities(Q: np.ndarray, I: np.ndarray) -> np.ndarray:  # noqa: E741 - the paper's sim(Q, I)
    """``−‖Q − I‖²`` of a query (d,) or a batch (m, d) against images (n, d): shape (n,) or (m, n), float64.

    Computed from the differences, not from ``‖Q‖² − 2Q·I + ‖I‖²``, so an identical image scores exactly 0 and
    equal distances tie exactly (the tie rules depend on it); a batch goes in chunks to bound memory.
    """
    images = np.asarray(I, dtype=np.float64)
    query = np.asarray(Q, dtype=np.float64)
    if images.ndim != 2:
        raise ValueError(f"images must be a matrix (n, d), not of shape {images.shape}")
    if query.shape[-1] != images.shape[1]:
        raise ValueError(f"query has {query.shape[-1]} dimensions, the images {images.shape[1]}")
    if query.ndim == 1:
        return -np.square(images - query).sum(axis=1)
    if query.ndim != 2:
        raise ValueError(f"query must be a vector (d,) or a batch (m, d), not of shape {query.shape}")
    out = np.empty((query.shape[0], images.shape[0]), dtype=np.float64)
    step = max(1, _CHUNK // max(1, images.size))
    for start in range(0, query.shape[0], step):
        block = query[start : start + step]
        out[start : start + step] = -np.square(block[:, None, :] - images[None, :, :]).sum(axis=2)
    return out


def _top_mean(values: np.ndarray, sigma: int | None) -> float:
    if values.size == 0:
        raise ValueError("a caption's visual neighbourhood is empty: φ is undefined")
    if sigma is None or sigma >= values.size:
        return float(values.mean())
    if sigma < 1:
        raise ValueError(f"σ must be a positive number of images or None (all), not {sigma}")
    return float(np.partition(values, values.size - sigma)[values.size - sigma :].mean())


def affinity(q: np.ndarray, neighbourhood: np.ndarray, sigma: int | None) -> float:
    """φ(q, N_c) (equation 2): the mean of the σ largest similarities of q to the images of N_c.

    A neighbourhood smaller than σ uses all its images (footnote 5); ``sigma=None`` always uses all.
    """
    return _top_mean(similarities(q, neighbourhood), sigma)


@dataclass(frozen=True)
class Pool:
    """The retrieval pool: captions (sorted ids), their images (edges), and the images' feature matrices.

    ``features`` maps a feature name to an (n_images, d) matrix whose rows are the images; ``active`` marks the
    images the pool still holds (``excluding`` masks, it does not copy the matrices).
    """

    captions: tuple[str, ...]
    edge_caption: np.ndarray  # per edge: the caption's index in ``captions``
    edge_image: np.ndarray  # per edge: the image's row in the feature matrices
    features: Mapping[str, np.ndarray]
    active: np.ndarray = field(repr=False)

    @classmethod
    def build(cls, edges: Iterable[tuple[str, int]], features: Mapping[str, np.ndarray]) -> Pool:
        """A pool from (caption id, image row) edges; duplicate edges count once."""
        pairs = sorted(set(edges))
        sizes = {np.asarray(matrix).shape[0] for matrix in features.values()}
        if len(sizes) != 1:
            raise ValueError(f"the feature matrices disagree on the number of images: {sorted(sizes)}")
        (count,) = sizes
        bad = [image for _, image in pairs if not 0 <= image < count]
        if bad:
            raise ValueError(f"edge to image row {bad[0]}, but the feature matrices have {count} rows")
        captions = tuple(sorted({caption for caption, _ in pairs}))
        index = {caption: position for position, caption in enumerate(captions)}
        return cls(
            captions=captions,
            edge_caption=np.array([index[caption] for caption, _ in pairs], dtype=np.int64),
            edge_image=np.array([image for _, image in pairs], dtype=np.int64),
            features={name: np.asarray(matrix, dtype=np.float64) for name, matrix in features.items()},
            active=np.ones(count, dtype=bool),
        )

    def excluding(self, captions: Iterable[str]) -> Pool:
        """The pool without these captions and without every image of theirs (§4 "Dataset"): a query's own
        caption cannot be retrieved, nor reached through one of its images."""
        gone = np.zeros(len(self.captions), dtype=bool)
        gone[[self.position[caption] for caption in set(captions) if caption in self.position]] = True
        active = self.active.copy()
        if gone.any():
            active[self.edge_image[gone[self.edge_caption]]] = False
        keep = active[self.edge_image] & ~gone[self.edge_caption]
        used = np.unique(self.edge_caption[keep])
        renumber = np.full(len(self.captions), -1, dtype=np.int64)
        renumber[used] = np.arange(used.size)
        return Pool(
            captions=tuple(self.captions[position] for position in used),
            edge_caption=renumber[self.edge_caption[keep]],
            edge_image=self.edge_image[keep],
            features=self.features,
            active=active,
        )

    @cached_property
    def position(self) -> dict[str, int]:
        """Each caption's index in ``captions``."""
        return {caption: index for index, caption in enumerate(self.captions)}

    def neighbourhood(self, caption: str) -> np.ndarray:
        """The image rows of a caption (N_c), ascending."""
        return np.sort(self.edge_image[self.edge_caption == self.position[caption]])

    def matrix(self, feature: str) -> np.ndarray:
        if feature not in self.features:
            raise KeyError(f"the pool has no feature {feature!r}; it has {sorted(self.features)}")
        return self.features[feature]


def _query(q: np.ndarray | Mapping[str, np.ndarray], feature: str) -> np.ndarray:
    """A query is one vector, or its vectors by feature name (ASSOC needs two features)."""
    if isinstance(q, Mapping):
        if feature not in q:
            raise KeyError(f"the query has no feature {feature!r}; it has {sorted(q)}")
        return np.asarray(q[feature], dtype=np.float64)
    return np.asarray(q, dtype=np.float64)


def _phi_all(sims: np.ndarray, pool: Pool, sigma: int | None, only: np.ndarray | None = None) -> np.ndarray:
    """φ of every caption of the pool (or of those flagged in ``only``) at once, from the query's similarities
    to every image: edges sorted by caption then by similarity (descending), the first σ of each caption kept."""
    if sigma is not None and sigma < 1:
        raise ValueError(f"σ must be a positive number of images or None (all), not {sigma}")
    caption, image = pool.edge_caption, pool.edge_image
    if only is not None:
        chosen = only[caption]
        caption, image = caption[chosen], image[chosen]
    values = sims[image]
    order = np.lexsort((-values, caption))
    caption, values = caption[order], values[order]
    starts = np.flatnonzero(np.r_[True, caption[1:] != caption[:-1]]) if caption.size else np.array([], int)
    rank = np.arange(caption.size) - np.repeat(starts, np.diff(np.r_[starts, caption.size]))
    kept = np.ones(caption.size, dtype=bool) if sigma is None else rank < sigma
    total = np.bincount(caption[kept], weights=values[kept], minlength=len(pool.captions))
    count = np.bincount(caption[kept], minlength=len(pool.captions))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), -np.inf)


def _ranked(scores: np.ndarray, pool: Pool) -> list[Scored]:
    """Captions with a score, best first; equal scores by caption id (the pool's order)."""
    present = np.flatnonzero(np.isfinite(scores))
    order = present[np.lexsort((present, -scores[present]))]
    return [Scored(pool.captions[position], float(scores[position])) for position in order]


def instance(q: np.ndarray | Mapping[str, np.ndarray], pool: Pool, feature: str = CANDIDATE_FEATURE) -> Scored:
    """INSTANCE (Ordonez et al. 2011): the caption of the single most similar image.

    That is φ with σ = 1 over every caption (the best caption's best image is the nearest image), so an image
    with several captions, or several equally near images, give the smallest caption id.
    """
    sims = similarities(_query(q, feature), pool.matrix(feature))
    ranking = _ranked(_phi_all(sims, pool, 1), pool)
    if not ranking:
        raise ValueError("the pool holds no caption")
    return ranking[0]


def assoc_ranking(
    q: np.ndarray | Mapping[str, np.ndarray],
    pool: Pool,
    K: int = DEFAULT_K,
    sigma: int | None = None,
    rerank_feature: str = CANDIDATE_FEATURE,
    candidate_feature: str = CANDIDATE_FEATURE,
) -> list[Scored]:
    """ASSOC's whole ranking (Figure 4b): the captions of the K images closest by ``candidate_feature``,
    reranked by φ(q, N_c) over each candidate's whole neighbourhood in the pool, with ``rerank_feature``."""
    if K < 1:
        raise ValueError(f"K must be a positive number of images, not {K}")
    near = similarities(_query(q, candidate_feature), pool.matrix(candidate_feature))
    rows = np.flatnonzero(pool.active)
    closest = rows[np.lexsort((rows, -near[rows]))[:K]]
    picked = np.zeros(pool.active.size, dtype=bool)
    picked[closest] = True
    candidates = np.zeros(len(pool.captions), dtype=bool)
    candidates[pool.edge_caption[picked[pool.edge_image]]] = True
    sims = (
        near
        if rerank_feature == candidate_feature
        else similarities(_query(q, rerank_feature), pool.matrix(rerank_feature))
    )
    return _ranked(_phi_all(sims, pool, sigma, only=candidates), pool)


def assoc(
    q: np.ndarray | Mapping[str, np.ndarray],
    pool: Pool,
    K: int = DEFAULT_K,
    sigma: int | None = None,
    rerank_feature: str = CANDIDATE_FEATURE,
    candidate_feature: str = CANDIDATE_FEATURE,
) -> Scored:
    """ASSOC (§3): the candidate caption with the highest neighbourhood affinity φ(q, N_c)."""
    ranking = assoc_ranking(q, pool, K, sigma, rerank_feature, candidate_feature)
    if not ranking:
        raise ValueError("the pool holds no caption")
    return ranking[0]


@dataclass(frozen=True)
class DevQuery:
    """One development image: its features, the pool it retrieves from (its own captions excluded), and how
    good a retrieved caption is for it (e.g. BLEU against its references)."""

    query: Mapping[str, np.ndarray]
    pool: Pool
    score: Callable[[str], float]


def choose_sigma(
    dev: Sequence[DevQuery],
    candidates: Sequence[int | None] = SIGMA_CANDIDATES,
    *,
    K: int = DEFAULT_K,
    rerank_feature: str = CANDIDATE_FEATURE,
    candidate_feature: str = CANDIDATE_FEATURE,
) -> tuple[int | None, dict[int | None, float]]:
    """σ as footnote 5 chooses it: the value whose ASSOC captions score best on average over a held-out
    development set. Returns it and every candidate's mean score; equal means go to the smaller σ (None, all
    images, counts as the largest)."""
    if not dev:
        raise ValueError("the development set is empty: σ cannot be chosen")
    if not candidates:
        raise ValueError("no σ to choose from")
    means: dict[int | None, float] = {}
    for sigma in candidates:
        total = 0.0
        for case in dev:
            total += case.score(assoc(case.query, case.pool, K, sigma, rerank_feature, candidate_feature).caption)
        means[sigma] = total / len(dev)
    return best_sigma(means), means


def best_sigma(means: Mapping[int | None, float]) -> int | None:
    """The σ of the best mean score; equal means go to the smaller σ (None, all images, counts as the largest)."""
    if not means:
        raise ValueError("no σ was scored")

    def order(sigma: int | None) -> tuple[float, float]:
        return (-means[sigma], float("inf") if sigma is None else float(sigma))

    return min(means, key=order)


def bleu1(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> tuple[float, list[float]]:
    """BLEU@1 without brevity penalty, as Table 6 reports it: corpus-level and per sentence (sacrebleu's clipped
    unigram precision, lower-cased, before the brevity penalty multiplies it)."""
    try:
        from sacrebleu.metrics import BLEU
    except ImportError:
        raise ImportError(
            'Déjà chooses σ by BLEU@1 (sacrebleu): pip install "wikipedia-ipc[web]" (or sacrebleu)'
        ) from None
    # force: captions are scored as their writers wrote them, some already tokenised (Flickr8k's " ."); it only
    # silences sacrebleu's warning about such lines, into every build's output, and changes no score
    metric = BLEU(max_ngram_order=1, lowercase=True, effective_order=True, force=True)
    width = max(len(refs) for refs in references)
    streams = [[refs[k] if k < len(refs) else "" for refs in references] for k in range(width)]
    corpus = metric.corpus_score(list(hypotheses), streams).precisions[0] / 100
    per = [metric.sentence_score(h, list(r)).precisions[0] / 100 for h, r in zip(hypotheses, references, strict=True)]
    return corpus, per


# ---- §5: visual paraphrasing ------------------------------------------------------------------------------


def draw(c: str, p: str) -> str:
    """A random but fixed order of the candidates p of caption c: the MD5 of the pair, as SQL's
    ``md5(concat(c, chr(31), p))`` (the engines' :data:`builder.filters.situated` draw)."""
    return hashlib.md5(f"{c}\x1f{p}".encode()).hexdigest()


def paraphrase_candidates(
    nouns_of_c: Iterable[str],
    nouns_by_caption: Mapping[str, Iterable[str]],
    K: int = DEFAULT_K,
    own: str | None = None,
) -> list[Shared]:
    """The K captions sharing the most physical-object nouns with c (§5 (2)), most first, equal counts drawn at
    random (:func:`draw`, as the builds' SQL draws them); a caption sharing none is no candidate, and ``own`` (c
    itself) never is. Counted through an inverted index over c's nouns, so the cost follows c's nouns' postings,
    not the corpus."""
    if K < 1:
        raise ValueError(f"K must be a positive number of captions, not {K}")
    wanted = frozenset(nouns_of_c)
    postings: dict[str, list[str]] = {noun: [] for noun in wanted}
    shared: dict[str, set[str]] = {}
    for caption, nouns in nouns_by_caption.items():
        if caption == own:
            continue
        for noun in wanted.intersection(nouns):
            postings[noun].append(caption)
    counts: Counter[str] = Counter()
    for noun, captions in postings.items():
        for caption in captions:
            counts[caption] += 1
            shared.setdefault(caption, set()).add(noun)
    best = sorted(counts, key=lambda caption: (-counts[caption], draw(own or "", caption), caption))[:K]
    return [Shared(caption, frozenset(shared[caption])) for caption in best]


def visual_paraphrase(
    i: np.ndarray,
    c: str,
    candidates: Sequence[str | Shared],
    features: Mapping[str, np.ndarray],
    sigma: int | None,
) -> list[Scored]:
    """The candidates reranked by φ(i, N_p) (§5 (2)): p describes image i as its neighbourhood does. ``features``
    maps each candidate to the feature matrix of its images (N_p, in the feature chosen for reranking). The
    original caption c is never its own paraphrase; a candidate without images cannot be scored and is left out.
    Best first, equal affinities by caption id."""
    query = np.asarray(i, dtype=np.float64)
    scored = []
    for candidate in candidates:
        caption = candidate.caption if isinstance(candidate, Shared) else candidate
        if caption == c or caption not in features or np.asarray(features[caption]).shape[0] == 0:
            continue
        scored.append(Scored(caption, affinity(query, np.asarray(features[caption]), sigma)))
    return sorted(scored, key=lambda item: (-item.affinity, item.caption))


def text_only_paraphrase(c: str, candidates: Sequence[Shared]) -> str | None:
    """PARAcaption (§8.2), the text-only variant: a caption sharing the most nouns with c, without pixels.

    The paper picks one at random among them; here the first by :func:`draw` among those sharing the most, so
    the same corpus gives the same pairs, as the builds' SQL does. None when there is none.
    """
    ranked = sorted(
        (-len(candidate.nouns), draw(c, candidate.caption), candidate.caption)
        for candidate in candidates
        if candidate.caption != c
    )
    return ranked[0][2] if ranked else None
