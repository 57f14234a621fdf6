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

import contextlib
import dataclasses
import importlib.metadata
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from builder.captions import has_min_words, word_counter_signature
from builder.clusters import (
    Cluster,
    Pair,
    build_pairs,
    count_pairs,
    filter_texts,
    has_caption,
    languages_at_least,
    max_references,
    max_references_per_language,
    min_references,
)
from builder.config import PipelineConfig
from builder.extraction import Extraction
from builder.pairs import UniqueCandidates, divergent_captions, significant_difference
from builder.tagging import Tagger, get_tagger

ClusterStep = Callable[[Cluster], Cluster | None]
PairStep = Callable[[list[Pair]], list[Pair]]


@dataclasses.dataclass
class FunnelRow:
    """What remains after one step (the columns of Table 3)."""

    step: int
    name: str
    images: int = 0
    references: int = 0
    captions: int = 0
    pairs: int = 0
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

    def __init__(self, names: list[str]) -> None:
        self.rows = [FunnelRow(step, name) for step, name in enumerate(names)]

    def add(self, other: Funnel) -> None:
        for mine, theirs in zip(self.rows, other.rows, strict=True):
            mine.add(theirs)

    def to_list(self) -> list[dict[str, object]]:
        return [dataclasses.asdict(row) for row in self.rows]

    @classmethod
    def from_list(cls, rows: list[dict[str, object]]) -> Funnel:
        funnel = cls([str(row["name"]) for row in rows])
        funnel.rows = [FunnelRow(**row) for row in rows]  # type: ignore[arg-type]
        return funnel

    def markdown(self) -> str:
        """Table 3's layout: remaining counts and the change against the previous step."""
        header = (
            "| Step | Filter | Images | Δ | Refs. ≥ 2 | Refs. ≥ 5 | References | Δ | μ_img "
            "| Captions | Δ | Pairs | Δ |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
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


STAGES = ("extraction", "grouping", "tagging", "pair filters", "writing")


@dataclasses.dataclass
class StageClock:
    """Where a build's time goes, stage by stage, for the summary and the scale benchmark.

    ``spans`` keeps each run of a stage as wall-clock ``(start, end)`` (``time.time()``), so
    that a memory sampler outside the process can tell the stages apart. Writing happens
    inside the pair-filter pass, cluster by cluster: the writer's own time is moved from
    that stage to ``writing`` with :meth:`move`.
    """

    spans: list[tuple[str, float, float]] = dataclasses.field(default_factory=list)
    moved: dict[str, float] = dataclasses.field(default_factory=dict)

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.time()
        try:
            yield
        finally:
            self.spans.append((name, started, time.time()))

    def move(self, seconds: float, source: str, target: str) -> None:
        self.moved[source] = self.moved.get(source, 0.0) - seconds
        self.moved[target] = self.moved.get(target, 0.0) + seconds

    def seconds(self) -> dict[str, float]:
        """Time per stage, in :data:`STAGES` order."""
        spent = dict(self.moved)
        for name, start, end in self.spans:
            spent[name] = spent.get(name, 0.0) + end - start
        return {name: spent[name] for name in STAGES if name in spent}


def library_versions() -> dict[str, str]:
    """Versions of the libraries that shape the output, for the dataset card."""
    versions = {"python": sys.version.split()[0]}
    for package in ("mwparserfromhell", "nltk", "stanza", "duckdb", "pyarrow", "datasets"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


@dataclasses.dataclass
class BuildReport:
    """What a build produced, per config."""

    output: Path
    rows: dict[str, int]
    funnels: dict[str, FilterChain]
    extraction: Extraction
    clock: StageClock = dataclasses.field(default_factory=StageClock)
    identities: dict[str, dict] = dataclasses.field(default_factory=dict)  # funnel.json's identity, per config
    splits: dict[str, dict[str, object]] = dataclasses.field(default_factory=dict)  # per config, as in funnel.json


def config_languages(config: PipelineConfig, languages: Sequence[str]) -> list[str]:
    """The languages whose references a config reads: its own, or every language of the build."""
    return [config.language] if config.language else list(languages)


def taggers_for(configs: Sequence[PipelineConfig], languages: Sequence[str], spec: str | Tagger) -> dict[str, Tagger]:
    """One tagger per language that a config's caption rule needs, built before any dump is read.

    A language no installed tagger covers stops the build here, with what would cover it
    (:class:`builder.tagging.TaggerUnavailable`); configs without a caption rule need none.
    """
    needed = {
        language
        for config in configs
        if config.caption_rule != "none"
        for language in config_languages(config, languages)
    }
    return {language: get_tagger(spec, language) for language in sorted(needed)}


def tagger_tagset(tagger: Tagger) -> str:
    """The tag set a tagger writes: ``ud`` or ``ptb`` (a tagger object that does not say tags in PTB, as before)."""
    return getattr(tagger, "tagset", "ptb")


def tagger_signature(config: PipelineConfig, taggers: Mapping[str, Tagger], languages: Sequence[str]) -> str:
    """The tagger line of a config's card: its language's tagger, or each language's."""
    if config.caption_rule == "none":
        return "none: the config has no caption rule"
    chosen = config_languages(config, languages)
    if len(chosen) == 1:
        return taggers[chosen[0]].signature()
    return "; ".join(f"{language}: {taggers[language].signature()}" for language in chosen)


def funnel_record(
    chain: FilterChain,
    rows: int,
    extraction: Extraction,
    tagger: str,
    identity: dict[str, object],
    splits: dict[str, object] | None,
    languages: Sequence[str] = (),
) -> dict[str, object]:
    """A config's ``funnel.json`` content: its Table 3 counts and everything that shaped them.

    ``tagger`` is its :func:`tagger_signature`; ``identity`` is :meth:`builder.identity.Identity.record`
    for the config; ``splits`` is
    :func:`builder.splits.split_record`, or None for a config written as one ``train`` split.
    ``languages`` are the config's languages, recorded with how their words were counted,
    in every build but an English one (whose record stays as it was).
    """
    skipped = {
        "redirects": extraction.read.skipped_redirect,
        "redirect_revisions": extraction.read.redirect_revisions,
        "other_namespaces": extraction.read.skipped_namespace,
        "invalid_utf8_bytes": extraction.read.invalid_utf8_bytes,
        "unclosed_image_markup": extraction.extract.unclosed,
        "unparsable_image_references": extraction.extract.unparsed,
        "pages_that_failed_to_parse": extraction.extract.failed_pages,
        "captions_the_cleaner_could_not_render": extraction.extract.captions_dropped,
        "captions_with_invalid_utf8": extraction.extract.invalid_utf8_captions,
        "references_repeated_by_later_revisions": extraction.extract.repeated_in_history,
        "malformed_pages": extraction.read.malformed_pages,
        "malformed_revisions": extraction.read.malformed_revisions,
        "pages_whose_ns_contradicts_their_title": extraction.read.namespace_mismatches,
        "content_outside_pages": extraction.read.content_outside_pages,
        "xml_entities_left_out": extraction.read.entities_left_out,
        "dumps_with_a_wrong_root_element": extraction.read.wrong_root_element,
        "dumps_that_failed": len(extraction.failures),
    }
    record: dict[str, object] = {
        "config": chain.config.name,
        "rows": rows,
        "parameters": chain.config.parameters(),
        "dumps": extraction.dumps,
        "tagger": tagger,
        "versions": library_versions(),
        "failures": extraction.failures,
        "problems": extraction.problems,
        "pages": extraction.read.pages,
        "revisions": extraction.read.revisions,
        "skipped": skipped,
        "identity": identity,
        "funnel": chain.funnel.to_list(),
    }
    if splits is not None:
        record["splits"] = splits
    if languages:
        record["languages"] = {language: word_counter_signature(language) for language in languages}
    return record
