"""The pipeline's parameters in one place, with the paper's three presets, and a build's options.

Every number here comes from section 3 of Gohsen et al. (EACL 2023): the
reference bounds of the image filter (Table 3, steps 1–2 and 6), the minimum
caption length (step 4), the caption rule (step 5, Table 4) and the dump kind
that separates gold/silver (pages-articles) from bronze (full edit history).
The paper mines the extended image syntax and the ``image`` parameters of
templates; ``<gallery>`` lines are this toolkit's extension, read only when a
config's ``sources`` asks for them.

A config's parameters shape its pairs; :class:`BuildOptions` holds what a build shares across
its configs (the tagger, workers, memory, the tables it reads besides the dumps), and
:class:`ExtractionSettings` what its configs must agree on because they read one extraction.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from builder.common import available_cores

__all__ = [
    "BRONZE",
    "BuildOptions",
    "CAPTION_RULES",
    "CROSSLINGUAL",
    "DEFAULT_FRACTIONS",
    "DEFAULT_MEMORY_LIMIT",
    "MAX_WORKERS",
    "MIN_DUCKDB_MEMORY",
    "DumpKind",
    "ExtractionSettings",
    "GOLD",
    "IDENTITIES",
    "PRESETS",
    "PipelineConfig",
    "SILVER",
    "SOURCES",
    "SPLIT_NAMES",
    "WEB",
    "WEB_EQUIVALENCES",
    "WEB_PRESETS",
    "WEB_SOURCES",
    "CAPTIONS",
    "DATASET_SOURCES",
    "check_fractions",
    "duckdb_memory",
    "memory_bytes",
    "configs_for_languages",
    "default_workers",
    "parse_splits",
    "preset",
    "REFERENCES",
    "RECORD_PRESETS",
    "DEJA",
    "DEJA_KINDS",
    "DEJA_PARACAPTION",
    "with_references",
]

if TYPE_CHECKING:
    from builder.filters.tagging import Tagger

CaptionRule = Literal["sentence", "verb", "none"]
CAPTION_RULES = ("sentence", "verb", "none")
DumpKind = Literal["articles", "history", "web", "dataset"]
DUMP_KINDS = ("articles", "history", "web", "dataset")
# the kinds of input a build reads, by dump kind: MediaWiki dumps, WARC crawls, image–caption datasets
INPUT_KINDS = {
    "articles": "MediaWiki dumps",
    "history": "MediaWiki dumps",
    "web": "web crawls (WARC files)",
    "dataset": "an image–caption dataset (an img2dataset folder)",
}
HistoryReferences = Literal["revision", "first_seen"]
SOURCES = ("link", "template", "gallery")
PAPER_SOURCES = ("link", "template")
# the web source's caption kinds (builder/extract/html.py): <figure>/<figcaption>, the two-cell caption table, alt
WEB_SOURCES = ("figure", "table", "alt")
# an image–caption dataset's captions (builder/extract/datasetrefs.py): the sample's own text, or the caption TSV's
DATASET_SOURCES = ("sample", "tsv")
# thesis §4.6: resource identity (normalized URL), pixel equality (MD5 of the decoded pixels), perceptual hashes
WEB_EQUIVALENCES = ("url", "pixels", "ahash", "dhash", "phash", "phash-rotation")
PERCEPTUAL_EQUIVALENCES = ("ahash", "dhash", "phash", "phash-rotation")
SPLIT_NAMES = ("train", "validation", "test")
# Déjà Image-Captions' outputs (docs/deja.md): its captions in repetition (§2); each caption paired with the caption
# sharing the most physical-object nouns with it, PARAcaption, the text-only variant of its visual paraphrases (§8.2)
DEJA_KINDS = ("captions", "paracaption", "paraphrases")
DEJA_PAIRINGS = ("paracaption", "paraphrases")  # the Déjà configs whose rows are pairs of captions, not edges
# the image features of Déjà's visual paraphrases (§4: GIST, Tinyimage, the two combined; builder.sources.features)
DEJA_FEATURES = ("gist", "tiny", "gist+tiny")
DEFAULT_FRACTIONS = (0.8, 0.1, 0.1)
_TOLERANCE = 1e-9
DEFAULT_MEMORY_LIMIT = "512MB"  # DuckDB's grouping and tagging queries; its own default is 80% of the machine's memory
ROWS_PER_SHARD = 500_000  # pairs per parquet file of the output
_MEMORY_SIZE = re.compile(r"\d+(?:\.\d+)?\s*(?:[KMGT]i?B|bytes)", re.IGNORECASE)
_UNITS = {"bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS.update({"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40})
# DuckDB needs room to sort at all: what it gets when the process already holds nearly all of --memory
MIN_DUCKDB_MEMORY = 128 * 10**6


def memory_bytes(size: str) -> int:
    """``512MB`` in bytes, as DuckDB reads sizes: KB, MB, GB and TB are powers of 1000, KiB … TiB of 1024."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|bytes)\s*", str(size), re.IGNORECASE)
    if match is None:
        raise ValueError(f"memory limit {size!r} is not a size such as 512MB or 4GB")
    return int(float(match.group(1)) * _UNITS[match.group(2).casefold()])


def duckdb_memory(limit: str, held: int) -> int:
    """DuckDB's share of a build's ``--memory``: the limit minus what the process already holds
    (its imports, the extraction's records), and never less than :data:`MIN_DUCKDB_MEMORY`."""
    return max(MIN_DUCKDB_MEMORY, memory_bytes(limit) - held)


# how an image is recognised: its normalized title (the paper), File-namespace redirects, equal SHA-1
IDENTITIES = ("title", "redirect", "sha1")


# the most workers a build takes: a build starts no more processes than its tasks and the cores anyway
# (builder.common.pool_size); past this a number is a typo, not a machine (--workers 200 plans a Spark cluster's parts)
MAX_WORKERS = 1024


def default_workers() -> int:
    """The command line's worker count: the cores this process may use, at most 8 (more rarely pays on one disk)."""
    return max(1, min(available_cores(), 8))


def check_fractions(fractions: Sequence[float]) -> tuple[float, ...]:
    """The fractions as a tuple of floats: empty (one ``train`` split) or three positive ones summing to 1."""
    values = tuple(float(value) for value in fractions)
    if not values:
        return values
    if len(values) != len(SPLIT_NAMES):
        raise ValueError(f"splits need {len(SPLIT_NAMES)} fractions ({'/'.join(SPLIT_NAMES)}), got {list(values)}")
    if not all(math.isfinite(value) and value > 0 for value in values):
        raise ValueError(f"split fractions must be positive numbers, got {list(values)}")
    if abs(sum(values) - 1) > _TOLERANCE:
        raise ValueError(f"split fractions must sum to 1, got {list(values)} (sum {sum(values)})")
    return values


def parse_splits(text: str) -> tuple[float, ...]:
    """The command-line form: ``80/10/10`` (percentages of train/validation/test) or ``none`` (one split)."""
    if text.strip().lower() == "none":
        return ()
    try:
        percentages = [float(part) for part in text.split("/")]
    except ValueError:
        raise ValueError(
            f"splits {text!r}: give percentages as train/validation/test, e.g. 80/10/10, or none"
        ) from None
    if len(percentages) != len(SPLIT_NAMES) or abs(sum(percentages) - 100) > 1e-6:
        raise ValueError(f"splits {text!r}: give three percentages that sum to 100, e.g. 80/10/10, or none")
    try:
        return check_fractions([percentage / 100 for percentage in percentages])
    except ValueError as error:
        raise ValueError(f"splits {text!r}: {error}") from None


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
    """Parameters of one Wikipedia-IPC quality level."""

    name: str
    min_references: int = 2
    max_references: int = 10
    min_words: int = 6
    caption_rule: CaptionRule = "sentence"
    dump_kind: DumpKind = "articles"
    namespaces: tuple[int, ...] = (0,)
    sources: tuple[str, ...] = PAPER_SOURCES
    # history dumps: every revision's use of an image is a reference (the paper's 180 bound
    # assumes it), or "first_seen": once per page and wording, carried by its first revision
    history_references: HistoryReferences = "revision"
    # this toolkit's extension: also merge images by File redirects and by the SHA-1 of their files
    identities: tuple[str, ...] = ("title",)
    # train/validation/test fractions (builder.publish.splits); () writes the paper's single set as one train split
    splits: tuple[float, ...] = DEFAULT_FRACTIONS
    # beyond the paper: the language whose references the config reads ("": every reference of a
    # one-language build), and cross-lingual pairing of the captions of different editions
    language: str = ""
    crosslingual: bool = False
    # the web source (dump_kind "web", thesis chapter 4): when two images are one (§4.6), the perceptual hashes'
    # side (imagehash's grid: hash_size² bits) and Hamming threshold, and §5.1.2's z-score bound on the number of
    # images in one equivalence set (None: no such step, a crawl's default: the thesis derived it for the placeholders
    # of downloaded datasets); ``max_equal_images`` is that bound in images, set by the build from the crawl
    equivalence: str = "url"
    hash_size: int = 6
    hash_threshold: int = 4
    set_size_z: float | None = 0.05
    max_equal_images: int | None = None
    # beyond the paper: publish the image–text records step 0 counts (one row per reference and text), not pairs
    references: bool = False
    # beyond the paper: Déjà Image-Captions (Chen et al., NAACL 2015; docs/deja.md) over the records step 0 counts:
    # "captions", its §2 MAIN SET (sentences that name a visible thing, repeated in canonical form for at least
    # ``min_images`` distinct images by at least ``min_users`` users: a wiki's pages, a crawl's sites; a dataset's rows
    # name no user, so there the images rule applies alone)
    deja: str = ""
    min_images: int = 2
    min_users: int = 2
    # "paraphrases" (§5): the feature whose φ reranks the candidates (Table 6's best, Tinyimage, by default) and σ
    # (0: chosen on a held-out development set of the graph's images, as footnote 5 does)
    deja_feature: str = "tiny"
    deja_sigma: int = 0
    # beyond the paper, which is silent: whether the query image i is among the images of p that φ compares with i
    # (left out by default: another writer's caption of i itself would win every time, at φ = 0)
    deja_query_image: bool = False
    # an image–caption dataset's column naming each sample's user (its writer, owner or author), for §2's "more than
    # one user" rule: given (--deja-user-column), or set by the build to the column it found (RedCaps's ``author``,
    # YFCC100M's ``user_nsid`` or ``owner``, a plain ``user``: builder.sources.img2dataset.user_column); "": none
    deja_user_column: str = ""

    @property
    def records(self) -> bool:
        """Whether the config reads every image–text record step 0 counts, whatever the build's pairing configs
        filter: ``references`` and the Déjà configs, which take the build's input kind and image identity."""
        return self.references or bool(self.deja)

    @property
    def deja_pairs(self) -> bool:
        """Whether the config is a Déjà config whose rows are pairs (§5's visual paraphrases, §8.2's PARAcaption)."""
        return self.deja in DEJA_PAIRINGS

    @property
    def web(self) -> bool:
        """Whether the config is of the thesis's web family (chapters 4–5: images compared by their pixels or
        URLs, §5.1.2's bound): it reads web crawls (WARC files) or an image–caption dataset, not MediaWiki dumps."""
        return self.dump_kind in ("web", "dataset")

    @property
    def dataset(self) -> bool:
        """Whether the config reads an image–caption dataset (thesis §5.1) as img2dataset wrote it."""
        return self.dump_kind == "dataset"

    @property
    def deja_users(self) -> bool:
        """Whether a Déjà config's records name their users, so that §2's "more than one user" rule applies: a
        wiki's pages and a crawl's sites always; a dataset's only through its user column."""
        return not self.dataset or bool(self.deja_user_column)

    @property
    def identity_label(self) -> str:
        """A web config's equivalence as its pairs' ``identity`` column names it: ``url``, ``pixels``, ``phash≤4``."""
        if self.equivalence in PERCEPTUAL_EQUIVALENCES:
            return f"{self.equivalence}≤{self.hash_threshold}"
        return self.equivalence

    def __post_init__(self) -> None:
        if self.caption_rule not in CAPTION_RULES:
            raise ValueError(f"caption_rule must be one of {list(CAPTION_RULES)}, not {self.caption_rule!r}")
        if self.crosslingual and self.language:
            raise ValueError("a cross-lingual config reads every language; it cannot be restricted to one")
        if self.dump_kind not in DUMP_KINDS:
            raise ValueError(f"dump_kind must be one of {list(DUMP_KINDS)}, not {self.dump_kind!r}")
        self._check_web()
        self._check_deja()
        if self.history_references not in ("revision", "first_seen"):
            raise ValueError(f"history_references must be 'revision' or 'first_seen', not {self.history_references!r}")
        if self.min_words < 0:
            raise ValueError(f"min_words must be 0 or more, not {self.min_words}")
        if not 1 <= self.min_references <= self.max_references:
            raise ValueError("need 1 <= min_references <= max_references")
        known_sources = DATASET_SOURCES if self.dataset else WEB_SOURCES if self.web else SOURCES
        unknown = set(self.sources) - set(known_sources)
        if unknown:
            raise ValueError(f"unknown reference sources {sorted(unknown)}; known: {list(known_sources)}")
        if not self.sources:
            raise ValueError(f"sources must name at least one of {list(known_sources)}")
        # One spelling per set of sources, so the card and funnel.json of equal configs are equal.
        object.__setattr__(self, "sources", tuple(source for source in known_sources if source in self.sources))
        unknown = set(self.identities) - set(IDENTITIES)
        if unknown:
            raise ValueError(f"unknown image identities {sorted(unknown)}; known: {list(IDENTITIES)}")
        # the title is always an identity; one spelling per set, as for the sources
        wanted = {"title", *self.identities}
        object.__setattr__(self, "identities", tuple(kind for kind in IDENTITIES if kind in wanted))
        object.__setattr__(self, "splits", check_fractions(self.splits))

    def _check_web(self) -> None:
        """The web fields: a known equivalence, a hash grid imagehash computes, a threshold and a z-score."""
        if self.equivalence not in WEB_EQUIVALENCES:
            raise ValueError(f"unknown image equivalence {self.equivalence!r}; known: {list(WEB_EQUIVALENCES)}")
        if not 2 <= self.hash_size <= 8:
            raise ValueError(f"hash_size is the side of imagehash's square grid: 2 to 8, not {self.hash_size}")
        if not 0 <= self.hash_threshold <= self.hash_size**2:
            raise ValueError(f"hash_threshold must be 0 to {self.hash_size**2} bits, not {self.hash_threshold}")
        if self.set_size_z is not None and not math.isfinite(self.set_size_z):
            raise ValueError(f"set_size_z must be a finite number, not {self.set_size_z}")
        if self.max_equal_images is not None and self.max_equal_images < 1:
            raise ValueError(f"max_equal_images must be 1 or more, not {self.max_equal_images}")
        if self.web and (self.crosslingual or self.history_references != "revision"):
            raise ValueError(
                "a web or dataset config reads images with captions: it cannot be cross-lingual or count history "
                "references"
            )
        if self.web and set(self.identities) - {"title"}:
            raise ValueError(
                f"image identities {sorted(set(self.identities) - {'title'})} are MediaWiki's (File redirects, the "
                "image table's SHA-1); a web or dataset config compares its images by its equivalence (--equivalence)"
            )

    def _check_deja(self) -> None:
        if self.deja not in ("", *DEJA_KINDS):
            raise ValueError(f"deja must be one of {list(DEJA_KINDS)} or empty, not {self.deja!r}")
        if self.deja and (self.references or self.crosslingual):
            raise ValueError("a Déjà config reads one language's records: neither a references nor a cross-lingual one")
        if self.min_images < 1 or self.min_users < 1:
            raise ValueError(f"min_images and min_users must be 1 or more, not {self.min_images}, {self.min_users}")
        if self.deja_feature not in DEJA_FEATURES:
            raise ValueError(f"deja_feature must be one of {list(DEJA_FEATURES)}, not {self.deja_feature!r}")
        if self.deja_sigma < 0:
            raise ValueError(f"deja_sigma is a number of images (0: chosen on a dev set), not {self.deja_sigma}")
        column = self.deja_user_column
        if column and (column != column.strip() or not column.isprintable() or "\t" in column):
            raise ValueError(f"deja_user_column must name a column (no surrounding spaces or tabs), not {column!r}")

    def parameters(self) -> dict[str, object]:
        """The parameters as plain data, for the dataset card and funnel.json.

        The multilingual fields appear when set, the web fields in a web config: the card of a one-language
        Wikipedia build stays as it was.
        """
        parameters = dataclasses.asdict(self)
        for name, unset in (("language", ""), ("crosslingual", False)):
            if parameters[name] == unset:
                del parameters[name]
        web_fields = ("equivalence", "hash_size", "hash_threshold", "set_size_z", "max_equal_images")
        if not self.references:
            del parameters["references"]
        if self.deja != "paraphrases":
            for name in ("deja_feature", "deja_sigma", "deja_query_image"):
                del parameters[name]
        if not (self.deja and self.dataset and self.deja_user_column):  # a dataset's users: the column that names them
            del parameters["deja_user_column"]
        if not self.deja:
            for name in ("deja", "min_images", "min_users"):
                del parameters[name]
        else:  # a Déjà config has none of Table 3's steps: its own are §2's (builder.filters.repetition)
            for name in ("min_references", "max_references", "min_words", "caption_rule"):
                del parameters[name]
            if self.dataset and not self.deja_user_column:  # a dataset's rows without a user column name no user
                del parameters["min_users"]
        if not self.web:
            for name in web_fields:
                del parameters[name]
        else:
            for name in ("namespaces", "history_references", "identities"):
                del parameters[name]
        if self.dataset and "max_references" in parameters:  # no such step in a dataset's chain
            del parameters["max_references"]
        return parameters


GOLD = PipelineConfig(name="gold", caption_rule="sentence")
SILVER = PipelineConfig(name="silver", caption_rule="verb")
# Bronze: 18 revisions per page on average x 10 references = 180 (paper, section 3).
BRONZE = PipelineConfig(name="bronze", caption_rule="verb", max_references=180, dump_kind="history")

# Beyond the paper: the captions that different language editions wrote for one Commons file, paired across
# languages; the verb rule of silver, each caption in its own language.
CROSSLINGUAL = PipelineConfig(name="crosslingual", caption_rule="verb", crosslingual=True)

PRESETS: dict[str, PipelineConfig] = {c.name: c for c in (GOLD, SILVER, BRONZE, CROSSLINGUAL)}

# The thesis's pipeline over web crawls (chapter 4): captions of ≥ 10 words (§4.5.2) that are sentences (Table 4.3,
# the paper's Table 4: gold's rule), at most 10 references per image in the crawl (§4.3.2, step 2) and the pair steps
# 7–9 as they are. §5.1.2's bound on the size of an equivalence set is the datasets' (placeholders among downloaded
# Conceptual Captions images, "this issue does not exist when we acquire paraphrases from web crawls", §5.2.2): opt-in
# here (set_size_z, --set-bound). Images are one by their normalized URL (§4.6.1) by default: it needs no pixels (a
# Common Crawl WARC file holds few image records) and makes no false match; --equivalence pixels/phash/... compares
# the crawl's image records instead.
WEB = PipelineConfig(
    name="web",
    dump_kind="web",
    min_words=10,
    caption_rule="sentence",
    max_references=10,
    sources=WEB_SOURCES,
    set_size_z=None,
)
# The thesis's prototype over Conceptual Captions (§5.1): an image–caption dataset as img2dataset wrote it, its
# images checked as §5.1.1 says (while reading), equal images by the MD5 of their pixels (§5.1.2 compared the files'
# MD5), §5.1.2's bound on the size of an equivalence set, and only "identical pairs and seen candidates discarded":
# no caption length, no caption rule, no references bound and no near-duplicate step, since the dataset's creators
# had filtered its captions already.
CAPTIONS = PipelineConfig(
    name="captions",
    dump_kind="dataset",
    min_words=0,
    caption_rule="none",
    equivalence="pixels",
    sources=DATASET_SOURCES,
)
WEB_PRESETS: dict[str, PipelineConfig] = {WEB.name: WEB, CAPTIONS.name: CAPTIONS}
# Beyond the paper and the thesis: every image–text record that step 0 counts, in whatever a build reads (a dump, a
# crawl, a dataset): the references of every source, each text a row with its page and provenance, for users who want
# WIT- or Conceptual-Captions-like data, or want to see why an image gave no pair. It takes the build's input kind and
# image identity from the other configs of the build (or from its inputs, alone): :func:`with_references`.
REFERENCES = PipelineConfig(
    name="references", min_references=1, min_words=0, caption_rule="none", sources=SOURCES, splits=(), references=True
)
# Beyond the paper and the thesis: Déjà Image-Captions' MAIN SET (§2) from the same records, the caption–image edges of
# the captions that different users repeat for distinct images; like ``references`` it reads what the build reads.
DEJA = PipelineConfig(
    name="deja", min_references=1, min_words=0, caption_rule="none", sources=SOURCES, splits=(), deja="captions"
)


# §5's visual paraphrases without the images: PARAcaption (§8.2), for a build of any source
DEJA_PARACAPTION = dataclasses.replace(DEJA, name="deja-paracaption", deja="paracaption")
# §5's visual paraphrases: each caption's candidates by shared nouns, reranked by φ over the images' features; a build
# with pixels only (a crawl, an image–caption dataset)
DEJA_PARAPHRASES = dataclasses.replace(DEJA, name="deja-paraphrases", deja="paraphrases")
# the configs of records, which read whatever the build reads
RECORD_PRESETS: dict[str, PipelineConfig] = {
    config.name: config for config in (REFERENCES, DEJA, DEJA_PARACAPTION, DEJA_PARAPHRASES)
}


def with_references(configs: Sequence[PipelineConfig], input_kind: str = "articles") -> list[PipelineConfig]:
    """The configs with each config of records (``references``, ``deja``) made to read what the build reads: the
    dump kind, the image identity and equivalence of the build's other configs, or, alone, of its inputs
    (``input_kind``: ``articles``, ``history``, ``web`` or ``dataset``); its sources are every source of that kind."""
    others = [config for config in configs if not config.records]
    if len(others) == len(configs):
        return list(configs)
    if others:
        like = others[0]
    else:  # alone: the input's kind, with the image equivalence it was given (else the kind's default)
        own = next(config for config in configs if config.records)
        like = (
            WEB_PRESETS["captions" if input_kind == "dataset" else "web"]
            if input_kind in ("web", "dataset")
            else dataclasses.replace(PRESETS["gold"], dump_kind=input_kind)
        )
        changed = {name: getattr(own, name) for name in ("equivalence", "hash_size", "hash_threshold")}
        like = dataclasses.replace(
            like, **{name: value for name, value in changed.items() if value != getattr(REFERENCES, name)}
        )
    sources = DATASET_SOURCES if like.dataset else WEB_SOURCES if like.web else SOURCES
    adapted = []
    for config in configs:
        if config.records:
            config = dataclasses.replace(
                config,
                dump_kind=like.dump_kind,
                history_references=like.history_references,
                namespaces=like.namespaces,
                identities=like.identities,
                equivalence=like.equivalence,
                hash_size=like.hash_size,
                hash_threshold=like.hash_threshold,
                sources=sources,
                set_size_z=None,
            )
        adapted.append(config)
    return adapted


def configs_for_languages(configs: Sequence[PipelineConfig], languages: Sequence[str]) -> list[PipelineConfig]:
    """The configs of a build over dumps of the given languages.

    A one-language build keeps the names (``gold``), so ``load_dataset(path, "gold")`` works
    as for English; a build over several languages builds each monolingual config once per
    language (``de.gold``, ``fr.gold``), reading that language's references only. The
    cross-lingual config reads every language and needs two at least.
    """
    crosslingual = [config.name for config in configs if config.crosslingual]
    if crosslingual and len(languages) < 2:
        raise ValueError(
            f"{crosslingual[0]} pairs captions across languages, but the dumps are of one language "
            f"({', '.join(languages)}); give dumps of two or more language editions (and --language where their "
            "<dbname> does not tell)"
        )
    if len(languages) < 2:
        return list(configs)
    expanded = []
    for config in configs:
        if config.crosslingual or config.language or config.records:
            expanded.append(config)
            continue
        expanded.extend(dataclasses.replace(config, name=f"{code}.{config.name}", language=code) for code in languages)
    return expanded


def preset(name: str) -> PipelineConfig:
    """Look up a preset by name with an error that lists the choices."""
    if name in RECORD_PRESETS:
        return RECORD_PRESETS[name]
    try:
        return PRESETS[name] if name in PRESETS else WEB_PRESETS[name]
    except KeyError:
        choices = sorted({*PRESETS, *WEB_PRESETS, *RECORD_PRESETS})
        raise ValueError(f"unknown config {name!r}; choose from {choices}") from None


@dataclasses.dataclass(frozen=True)
class ExtractionSettings:
    """What the configs of one build must agree on, since they read one extraction of the dumps."""

    dump_kind: DumpKind = "articles"
    history_references: HistoryReferences = "revision"
    namespaces: tuple[int, ...] = (0,)
    identities: tuple[str, ...] = ("title",)
    equivalence: str = "url"  # web builds: how images are one (one image index per build)
    hash_size: int = 6
    hash_threshold: int = 4
    feature: str = ""  # the feature vector every decoded image keeps (a Déjà paraphrases config's); "": none
    user_column: str = ""  # a dataset's column of users every sample carries (its Déjà configs'); "": none

    @classmethod
    def of(cls, configs: Sequence[PipelineConfig]) -> ExtractionSettings:
        """The settings of a build's configs, or a ValueError naming the configs that disagree."""
        if not configs:
            raise ValueError("no configs given")
        kinds: dict[str, list[str]] = {}
        for config in configs:
            kinds.setdefault(INPUT_KINDS[config.dump_kind], []).append(config.name)
        if len(kinds) > 1:  # web and dataset first, so that the message names what the user added to the dumps
            order = sorted(kinds, key=lambda kind: kind == INPUT_KINDS["articles"])
            first, *others = ((", ".join(kinds[kind]), kind) for kind in order)
            raise ValueError(
                f"configs of one build read one kind of input: {first[0]} read {first[1]}, "
                + ", ".join(f"{names} {kind}" for names, kind in others)
                + "; build them in two runs"
            )
        for field, what in (
            ("identities", "identify images the same way"),
            ("dump_kind", "read the same kind of dump"),
            ("history_references", "count history references the same way"),
            ("namespaces", "read the same namespaces"),
            ("equivalence", "compare images the same way"),
            ("hash_size", "hash images to the same length"),
            ("hash_threshold", "compare image hashes with the same threshold"),
        ):
            if len({getattr(config, field) for config in configs}) > 1:
                names = ", ".join(f"{config.name} ({_plain(getattr(config, field))})" for config in configs)
                raise ValueError(f"configs of one build must {what}; got {names}")
        features = {config.name: config.deja_feature for config in configs if config.deja == "paraphrases"}
        if len(set(features.values())) > 1:
            names = ", ".join(f"{name} ({feature})" for name, feature in features.items())
            raise ValueError(f"configs of one build must describe images by the same feature; got {names}")
        users = {config.name: config.deja_user_column for config in configs if config.deja and config.dataset}
        if len(set(users.values())) > 1:
            names = ", ".join(f"{name} ({column or 'none'})" for name, column in users.items())
            raise ValueError(f"configs of one build must read their users from the same column; got {names}")
        first = configs[0]
        return cls(
            first.dump_kind,
            first.history_references,
            first.namespaces,
            first.identities,
            first.equivalence,
            first.hash_size,
            first.hash_threshold,
            next(iter(features.values()), ""),
            next(iter(users.values()), ""),
        )

    @property
    def history(self) -> bool:
        return self.dump_kind == "history"

    @property
    def web(self) -> bool:
        """The thesis's web family: WARC crawls or an image–caption dataset (one task per WARC file or shard)."""
        return self.dump_kind in ("web", "dataset")

    @property
    def dataset(self) -> bool:
        return self.dump_kind == "dataset"

    @property
    def first_seen(self) -> bool:
        """Whether extraction drops the references that an earlier revision of the page had."""
        return self.history and self.history_references == "first_seen"

    @property
    def file_redirects(self) -> bool:
        """Whether extraction collects the File-namespace redirects (for the ``redirect`` identity)."""
        return "redirect" in self.identities


def _plain(value: object) -> str:
    return ", ".join(str(item) for item in value) if isinstance(value, tuple) else str(value)


# the URL schemes a crawl's *.paths.gz listing may name (builder.sources.warc): a listing comes from anywhere, so it
# never makes a build read a local file the user did not give
LISTING_SCHEMES: tuple[str, ...] = ("http", "https")


@dataclasses.dataclass(frozen=True)
class BuildOptions:
    """How one build runs, whatever its configs: the options of ``wikipedia-ipc build``, for every engine.

    ``tagger`` is a tagger name (``auto``, ``perceptron``, …) or a tagger object; ``memory_limit``
    bounds the build's process while it groups and tags (DuckDB gets it minus what the process holds,
    at least 128 MB; past it, DuckDB spills to the work folder); ``image_tables``
    are the MySQL dumps of ``image`` tables (for the ``sha1`` identity and the cross-lingual config);
    ``languages`` is one language code for every dump or a code per dump (as given); without it
    each dump's ``<dbname>`` decides; ``template_parameters`` a user's table that extends the shipped
    one, ``inline_templates`` likewise for inline templates; ``unrendered_templates`` is the no-hole rule's
    policy (``auto``: every edition but English drops a caption holding a template nothing renders; ``drop``:
    English too; ``cut``: none does, the authors' cleaning); ``captions_tsv`` a dataset build's Conceptual
    Captions–style TSV, joined to the samples by URL; ``listing_schemes`` the URL schemes a crawl's ``*.paths.gz``
    listing may name besides paths relative to its base (``file`` never unless given). With ``work_dir`` and
    ``resume`` a build reuses the reference shards an interrupted build finished; ``overwrite`` allows a non-empty
    output folder that holds no earlier build. ``spark_one_task_bytes``: a Spark build whose inputs are local files of
    at most this many bytes runs as one task, the local engine's stages on one executor core
    (:mod:`builder.engines.spark.one_task`; ``None``: its default bound, ``0``: every build spread); the local engine
    ignores it.
    """

    tagger: str | Tagger = "auto"
    workers: int = 1
    memory_limit: str = DEFAULT_MEMORY_LIMIT
    image_tables: tuple[str | Path, ...] = ()
    languages: str | Mapping[str, str] | None = None
    template_parameters: str | Path | None = None
    inline_templates: str | Path | None = None
    unrendered_templates: str = "auto"
    captions_tsv: str | Path | None = None
    listing_schemes: tuple[str, ...] = LISTING_SCHEMES
    work_dir: str | Path | None = None
    resume: bool = False
    overwrite: bool = False
    show_progress: bool = True
    rows_per_shard: int = ROWS_PER_SHARD
    spark_one_task_bytes: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers must be 1 or more, not {self.workers}")
        if self.workers > MAX_WORKERS:
            raise ValueError(f"workers must be at most {MAX_WORKERS}, not {self.workers}")
        if self.resume and not self.work_dir:
            raise ValueError("resume needs the work_dir of the interrupted build")
        if not _MEMORY_SIZE.fullmatch(str(self.memory_limit)):
            raise ValueError(f"memory limit {self.memory_limit!r} is not a size such as 512MB or 4GB")
        if memory_bytes(self.memory_limit) < MIN_DUCKDB_MEMORY:
            raise ValueError(
                f"memory limit {self.memory_limit!r} is below the {MIN_DUCKDB_MEMORY // 10**6}MB a build needs to "
                "group and sort at all; give 128MB or more (default 512MB)"
            )
        if self.unrendered_templates not in ("auto", "drop", "cut"):
            raise ValueError(f"unrendered_templates must be auto, drop or cut, not {self.unrendered_templates!r}")
        if self.rows_per_shard < 1:
            raise ValueError(f"rows_per_shard must be 1 or more, not {self.rows_per_shard}")
        if self.spark_one_task_bytes is not None and self.spark_one_task_bytes < 0:
            raise ValueError(f"spark_one_task_bytes must be 0 or more, not {self.spark_one_task_bytes}")
        if isinstance(self.image_tables, (str, Path)):
            raise ValueError("image_tables is a list of files, not one path")
        object.__setattr__(self, "image_tables", tuple(self.image_tables))

    @classmethod
    def of(cls, options: BuildOptions | None, settings: Mapping[str, object]) -> BuildOptions:
        """``options`` with the keyword ``settings`` of a call (``build(..., workers=2)``) applied."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise TypeError(f"unknown build option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return dataclasses.replace(options or cls(), **settings)  # type: ignore[arg-type]
