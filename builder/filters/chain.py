"""The filter pipeline of Table 3, step by step, with a counter after every step.

Steps 0–4 and 6 act on image clusters, step 5 applies the caption rule (whose
verdicts come from a batch tagging pass over the unique texts), and steps 7–9
act on the paraphrase candidates built from each cluster. Each step is a :class:`Step`
under its Table 3 number and name, with its own counter (a row of the :class:`Funnel`);
a new step goes into the list in :class:`FilterChain` at its place. Engines call
:meth:`FilterChain.before_rule`, :meth:`FilterChain.apply_rule` and
:meth:`FilterChain.filter_pairs` per cluster; the :class:`Funnel` adds up what
remains after every step. Step 7 keeps state across clusters (a candidate is
unique in the whole build), so :meth:`FilterChain.filter_pairs` must see the
clusters of a build in image order, in one chain.
"""

from __future__ import annotations

import dataclasses
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
from builder.filters.funnel import Funnel, FunnelRow
from builder.filters.pairs import UniqueCandidates, divergent_captions, significant_difference
from builder.filters.repetition import deja_step_names
from builder.lang.segmenters import has_min_words

__all__ = ["FilterChain"]

ClusterStep = Callable[[Cluster], Cluster | None]
PairStep = Callable[[list[Pair]], list[Pair]]

RULE_NAMES = {"sentence": "Caption is sentence", "verb": "Caption has verb", "none": "No caption rule"}
# Table 3's steps act, in this order, on clusters before the tagger (0–4), the caption rule (5) and the bound
# after it (6), and on the candidate pairs (7–9); engines call the chain's methods in this order.
# A web config has one step more, after step 2: §5.1.2's bound on the images of one equivalence set; a dataset
# config has that step and fewer others (see FilterChain).
SET_BOUND_NAME = "Equal images ≤ {bound} (§5.1.2, z < {z:g})"


def _in_graph(*_: object) -> None:
    raise RuntimeError("a Déjà step runs in the engine's SQL (builder.filters.repetition.deja_graph), not per cluster")


@dataclasses.dataclass
class Step:
    """One row of Table 3: its number, its name as the paper prints it, what it does, and its counter."""

    number: int
    name: str
    run: Callable
    row: FunnelRow


class FilterChain:
    """Table 3's steps for one config, each under its paper name and number, each counted.

    A cross-lingual config runs the same funnel with its image bounds read across
    languages: references in at least two languages (before and after the caption rule),
    and the upper bound per language; only pairs of texts of two languages are built.
    Each text is measured and judged in the language of its own wiki.

    A dataset config (and a web config that asks, ``set_size_z``) inserts, after step 2, §5.1.2's bound on the
    size of an equivalence set: a cluster of more distinct images (URLs) than ``config.max_equal_images`` is a
    placeholder image's and dropped whole; the steps after it move one number down.

    A dataset config (thesis §5.1.2, Conceptual Captions) has that bound but neither the references bound
    (step 2), nor the caption length when ``min_words`` is 0, nor the near-duplicate step (9): the thesis only
    discarded identical pairs and candidates already seen, the dataset's creators having filtered its captions.

    A references config (``config.references``) has step 0 alone: it publishes the references it counts. A Déjà
    config (``config.deja``) has step 0 and the steps of :func:`builder.filters.repetition.deja_step_names`, which
    its engine runs in SQL over every sentence (:func:`builder.filters.repetition.deja_graph`); its funnel counts
    caption–image edges.
    """

    def __init__(self, config: PipelineConfig) -> None:
        self.config = config
        self.across_languages = config.crosslingual
        if config.crosslingual:
            lower: tuple[str, ClusterStep] = (
                f"References in ≥ {config.min_references} languages",
                languages_at_least(config.min_references),
            )
            upper: tuple[str, ClusterStep] = (
                f"References ≤ {config.max_references} per language",
                max_references_per_language(config.max_references),
            )
        else:
            lower = (f"References ≥ {config.min_references}", min_references(config.min_references))
            upper = (f"References ≤ {config.max_references}", max_references(config.max_references))
        # (name, run, role): the role says which of the engines' calls runs the step
        steps: list[tuple[str, Callable, str]] = (
            [("No filter", lambda cluster: cluster, "before")] if config.references else self._steps(lower, upper)
        )
        unit = "records" if config.references else "pairs"
        if config.deja:  # step 0 as a references config reads it; §2's steps in the engine's SQL (filters.repetition)
            names = deja_step_names(config)
            steps = [
                ("No filter", lambda cluster: cluster, "before"),
                *((name, _in_graph, "graph") for name in names[1:]),
            ]
            unit = "edges"
        self.funnel = Funnel([name for name, _, _ in steps], unit)
        self.steps = {
            number: Step(number, name, run, row)
            for (number, (name, run, _)), row in zip(enumerate(steps), self.funnel.rows, strict=True)
        }
        roles = [role for _, _, role in steps]
        self.before = tuple(number for number, role in enumerate(roles) if role == "before")
        self.caption_rule = roles.index("rule") if "rule" in roles else -1
        self.bound_after_rule = roles.index("after rule") if "after rule" in roles else -1
        self.pair_filters = tuple(number for number, role in enumerate(roles) if role == "pairs")

    def _steps(self, lower: tuple[str, ClusterStep], upper: tuple[str, ClusterStep]) -> list[tuple[str, Callable, str]]:
        """The steps of a config that pairs captions, each with its role."""
        config = self.config
        dataset = config.dataset
        return [
            ("No filter", lambda cluster: cluster, "before"),  # 0
            (*lower, "before"),  # 1
            *([] if dataset else [(*upper, "before")]),  # 2
            *([(*self._set_bound(), "before")] if config.web and config.set_size_z is not None else []),  # 2 + 1
            ("Has caption", has_caption, "before"),  # 3
            *([] if dataset and not config.min_words else [(*self._length(), "before")]),  # 4
            (RULE_NAMES[config.caption_rule], filter_texts, "rule"),  # 5: with the verdicts of the tagged texts
            (*lower, "after rule"),  # 6
            ("Unique candidates", UniqueCandidates(), "pairs"),  # 7
            ("Divergent captions", divergent_captions, "pairs"),  # 8
            *([] if dataset else [("Significant caption diff", significant_difference, "pairs")]),  # 9
        ]

    def _set_bound(self) -> tuple[str, ClusterStep]:
        """§5.1.2: a set of more equal images than the crawl's z-score bound is dropped (no bound: none is)."""
        bound = self.config.max_equal_images
        name = SET_BOUND_NAME.format(bound="∞" if bound is None else f"{bound:,}", z=self.config.set_size_z)

        def keep(cluster: Cluster) -> Cluster | None:
            if bound is None:
                return cluster
            return cluster if len({reference.file for reference in cluster.references}) <= bound else None

        return name, keep

    def _length(self) -> tuple[str, ClusterStep]:
        return f"Caption words ≥ {self.config.min_words}", self._min_words

    def _min_words(self, cluster: Cluster) -> Cluster | None:
        return filter_texts(cluster, lambda text, language: has_min_words(text, self.config.min_words, language))

    def _cluster_step(self, number: int, cluster: Cluster, *arguments: object) -> Cluster | None:
        step = self.steps[number]
        survivor = step.run(cluster, *arguments)
        if survivor is not None:
            step.row.count_cluster(survivor, self.across_languages)
        return survivor

    def before_rule(self, cluster: Cluster) -> Cluster | None:
        """Steps 0–4; the surviving texts then go to the tagger."""
        current: Cluster | None = cluster
        for number in self.before:
            current = self._cluster_step(number, current)  # type: ignore[arg-type]
            if current is None:
                return None
        return current

    def apply_rule(self, cluster: Cluster, passes_rule: Callable[[str, str], bool]) -> Cluster | None:
        """Steps 5–6: the caption rule (``passes_rule(text, language)``), then the lower references bound again."""
        current = self._cluster_step(self.caption_rule, cluster, passes_rule)
        return self._cluster_step(self.bound_after_rule, current) if current is not None else None

    def filter_pairs(self, cluster: Cluster, unique: PairStep | None = None) -> list[Pair]:
        """Steps 7–9 on the cluster's candidate pairs; call in image order (step 7 remembers pairs).

        ``unique`` replaces step 7 for an engine that decides the build-wide first of each
        candidate elsewhere: it gets the cluster's pairs in :func:`build_pairs` order and
        returns those that are first; clusters may then come in any order.
        """
        pairs = build_pairs(cluster, self.across_languages)
        for number in self.pair_filters:
            step = self.steps[number]
            run = unique if unique is not None and number == self.pair_filters[0] else step.run
            pairs = run(pairs)
            step.row.count_pairs(pairs)
        return pairs

    def after_rule(self, cluster: Cluster, passes_rule: Callable[[str, str], bool]) -> list[Pair]:
        """Steps 5–9 for an engine that has the whole build's clusters in image order."""
        current = self.apply_rule(cluster, passes_rule)
        return self.filter_pairs(current) if current is not None else []
