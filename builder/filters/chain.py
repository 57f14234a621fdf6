"""The filter pipeline of Table 3, step by step, with a counter after every step.

Steps 0–4 and 6 act on image clusters, step 5 applies the caption rule (whose
verdicts come from a batch tagging pass over the unique texts), and steps 7–9
act on the paraphrase candidates built from each cluster. Engines call
:meth:`FilterChain.before_rule`, :meth:`FilterChain.apply_rule` and
:meth:`FilterChain.filter_pairs` per cluster; the :class:`Funnel` adds up what
remains after every step. Step 7 keeps state across clusters (a candidate is
unique in the whole build), so :meth:`FilterChain.filter_pairs` must see the
clusters of a build in image order, in one chain.
"""

from __future__ import annotations

from collections.abc import Callable

from builder.config import PipelineConfig
from builder.filters.clusters import (
    Cluster,
    Pair,
    build_pairs,
    filter_texts,
    has_caption,
    languages_at_least,
    max_references,
    max_references_per_language,
    min_references,
)
from builder.filters.funnel import Funnel
from builder.filters.pairs import UniqueCandidates, divergent_captions, significant_difference
from builder.lang.segmenters import has_min_words

ClusterStep = Callable[[Cluster], Cluster | None]
PairStep = Callable[[list[Pair]], list[Pair]]


RULE_NAMES = {"sentence": "Caption is sentence", "verb": "Caption has verb", "none": "No caption rule"}


class FilterChain:
    """Table 3's steps for one config, each under its paper name, each counted.

    A cross-lingual config runs the same funnel with its image bounds read across
    languages: references in at least two languages (before and after the caption rule),
    and the upper bound per language; only pairs of texts of two languages are built.
    Each text is measured and judged in the language of its own wiki.
    """

    def __init__(self, config: PipelineConfig) -> None:
        self.config = config
        self.across_languages = config.crosslingual
        rule_name = RULE_NAMES[config.caption_rule]
        if config.crosslingual:
            self._lower_bound: tuple[str, ClusterStep] = (
                f"References in ≥ {config.min_references} languages",
                languages_at_least(config.min_references),
            )
            upper: tuple[str, ClusterStep] = (
                f"References ≤ {config.max_references} per language",
                max_references_per_language(config.max_references),
            )
        else:
            self._lower_bound = (f"References ≥ {config.min_references}", min_references(config.min_references))
            upper = (f"References ≤ {config.max_references}", max_references(config.max_references))
        self.cluster_steps: list[tuple[str, ClusterStep]] = [
            ("No filter", lambda cluster: cluster),
            self._lower_bound,
            upper,
            ("Has caption", has_caption),
            (f"Caption words ≥ {config.min_words}", self._min_words),
        ]
        self.pair_steps: list[tuple[str, PairStep]] = [
            ("Unique candidates", UniqueCandidates()),
            ("Divergent captions", divergent_captions),
            ("Significant caption diff", significant_difference),
        ]
        names = [name for name, _ in self.cluster_steps]
        names += [rule_name, self._lower_bound[0]]
        names += [name for name, _ in self.pair_steps]
        self.funnel = Funnel(names)

    def _min_words(self, cluster: Cluster) -> Cluster | None:
        return filter_texts(cluster, lambda text, language: has_min_words(text, self.config.min_words, language))

    def before_rule(self, cluster: Cluster) -> Cluster | None:
        """Steps 0–4; the surviving texts then go to the tagger."""
        current: Cluster | None = cluster
        for row, (_, step) in zip(self.funnel.rows, self.cluster_steps, strict=False):
            current = step(current)  # type: ignore[arg-type]
            if current is None:
                return None
            row.count_cluster(current, self.across_languages)
        return current

    def apply_rule(self, cluster: Cluster, passes_rule: Callable[[str, str], bool]) -> Cluster | None:
        """Steps 5–6: the caption rule (``passes_rule(text, language)``), then the lower references bound again."""
        rule_row, bound_row = self.funnel.rows[len(self.cluster_steps) : len(self.cluster_steps) + 2]
        current = filter_texts(cluster, passes_rule)
        if current is None:
            return None
        rule_row.count_cluster(current, self.across_languages)
        current = self._lower_bound[1](current)
        if current is None:
            return None
        bound_row.count_cluster(current, self.across_languages)
        return current

    def filter_pairs(self, cluster: Cluster, unique: PairStep | None = None) -> list[Pair]:
        """Steps 7–9 on the cluster's candidate pairs; call in image order (step 7 remembers pairs).

        ``unique`` replaces step 7 for an engine that decides the build-wide first of each
        candidate elsewhere: it gets the cluster's pairs in :func:`build_pairs` order and
        returns those that are first; clusters may then come in any order.
        """
        pair_rows = self.funnel.rows[len(self.cluster_steps) + 2 :]
        steps = [step for _, step in self.pair_steps]
        if unique is not None:
            steps[0] = unique
        pairs = build_pairs(cluster, self.across_languages)
        for row, step in zip(pair_rows, steps, strict=True):
            pairs = step(pairs)
            row.count_pairs(pairs)
        return pairs

    def after_rule(self, cluster: Cluster, passes_rule: Callable[[str, str], bool]) -> list[Pair]:
        """Steps 5–9 for an engine that has the whole build's clusters in image order."""
        current = self.apply_rule(cluster, passes_rule)
        return self.filter_pairs(current) if current is not None else []
