"""The core of every build, whatever engine runs it: prepare, extract, group, tag, filter, publish.

:func:`run` is the one way a build happens. It checks everything that can be checked before any
dump is read (:func:`prepare`: the dumps, the options, the languages and their taggers and word
segmenters, the image tables), opens the output folder, and then asks an :class:`Engine` to carry
out the stages in order, timing each: extract the references of every dump, group them by image
and run steps 0–4 of Table 3 per config, tag the surviving texts, run steps 5–9 and write the
pairs. What a config's ``funnel.json`` records, and the publishing of the folder, happen here, so
that every engine gives the same rows and the same records. An engine only decides *how* a stage
runs: :class:`builder.engines.local.LocalEngine` with worker processes and DuckDB,
:class:`builder.engines.spark.engine.SparkEngine` on a Spark cluster.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import importlib.util
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from builder.common import refuse_in_bootstrap
from builder.config import BuildOptions, ExtractionSettings, PipelineConfig, configs_for_languages, with_references
from builder.extract.inline import caption_rules, read_inline_table
from builder.extract.parameters import read_parameter_table
from builder.extract.tasks import Extraction, check_dump_kinds, dump_languages, kind_from_name
from builder.filters.chain import FilterChain
from builder.filters.identity import Identity, ImageIdentity, check_identities, pairs_per_identity
from builder.filters.tagging import Tagger, check_taggers
from builder.lang.dumps import language_overrides
from builder.lang.segmenters import word_counter_signature
from builder.publish.bucket import publisher_for
from builder.publish.publisher import Publisher
from builder.sources.files import check_dump_path
from builder.storage import absent, as_path, exists, is_url

if TYPE_CHECKING:
    from builder.filters.web import ImageTables, WebImages

__all__ = ["BuildPlan", "BuildReport", "STAGES", "Selected", "WebLibrariesMissing", "Written", "run"]

STAGES = ("extraction", "grouping", "tagging", "pair filters", "writing")
# what a web build imports (module → distribution): WARC records, HTML5 parsing, charsets, and the images' pixels
WEB_LIBRARIES = {
    "fastwarc": "fastwarc",
    "selectolax": "selectolax",
    "charset_normalizer": "charset-normalizer",
    "webencodings": "webencodings",
    "brotli": "brotli",
    "PIL": "Pillow",
    "imagehash": "imagehash",
    "ada_url": "ada-url",  # the WHATWG URL Standard: image URLs resolved and keyed (builder.filters.images)
}
# what a dataset build imports: the images' pixels and their URLs' keys (the shards are tar and parquet files)
DATASET_LIBRARIES = {module: WEB_LIBRARIES[module] for module in ("PIL", "imagehash", "ada_url")}


class WebLibrariesMissing(ValueError):
    """A web build without the libraries of the ``web`` extra; raised before any input is read."""


def check_web_libraries(libraries: Mapping[str, str] = WEB_LIBRARIES) -> None:
    """Stop a web build before it reads a crawl when a library of the ``web`` extra is not installed."""
    missing = [name for module, name in libraries.items() if importlib.util.find_spec(module) is None]
    if missing:
        what = "image–caption datasets" if libraries is DATASET_LIBRARIES else "web crawls"
        raise WebLibrariesMissing(f'building from {what} needs {", ".join(missing)}: pip install "wikipedia-ipc[web]"')


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


# the libraries whose versions decide a config's rows (the card names them, the build id hashes them): the parquet
# writer and the grouping; the reader of each kind of input; NLTK (step 4's Penn Treebank words, the perceptron)
_ROW_LIBRARIES = ("pyarrow", "duckdb", "nltk")
_INPUT_LIBRARIES = {
    "wiki": ("mwparserfromhell",),
    "web": ("fastwarc", "selectolax", "charset-normalizer", "webencodings", "brotli", "Pillow", "imagehash", "ada-url"),
    "dataset": ("Pillow", "imagehash", "ada-url"),
}
_TAGGER_LIBRARIES = {"stanza": ("stanza",), "spacy": ("spacy",)}  # a tagger library counts only when it tagged
_SEGMENTER_LIBRARIES = {"zh": ("jieba",), "ja": ("sudachipy", "sudachidict-core"), "th": ("pythainlp",)}


def library_versions(config: PipelineConfig, tagger: str, languages: Sequence[str] = ()) -> dict[str, str]:
    """Versions of the libraries that decide the config's rows, for the card and the build id: an extra installed
    beside them (a tagger no language used) changes neither."""
    kind = "dataset" if config.dataset else "web" if config.web else "wiki"
    packages = [*_ROW_LIBRARIES, *_INPUT_LIBRARIES[kind]]
    for name, libraries in _TAGGER_LIBRARIES.items():
        if name in tagger.lower():
            packages += libraries
    for language in languages:
        packages += _SEGMENTER_LIBRARIES.get(language, ())
    versions = {"python": sys.version.split()[0]}
    for package in sorted(set(packages), key=packages.index):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


@dataclasses.dataclass
class BuildReport:
    """What a build produced, per config."""

    output: Path | str  # a URL for a folder on an object store
    rows: dict[str, int]
    funnels: dict[str, FilterChain]
    extraction: Extraction
    clock: StageClock = dataclasses.field(default_factory=StageClock)
    identities: dict[str, dict] = dataclasses.field(default_factory=dict)  # funnel.json's identity, per config
    splits: dict[str, dict[str, object]] = dataclasses.field(default_factory=dict)  # per config, as in funnel.json
    build: str | None = None  # the build's id, as the card and every funnel.json give it


def config_languages(config: PipelineConfig, languages: Sequence[str]) -> list[str]:
    """The languages whose references a config reads: its own, or every language of the build."""
    return [config.language] if config.language else list(languages)


def taggers_for(configs: Sequence[PipelineConfig], languages: Sequence[str], spec: str | Tagger) -> dict[str, Tagger]:
    """One tagger per language that a config's caption rule needs, built before any dump is read.

    A language no installed tagger covers stops the build here, with what would cover it
    (:class:`builder.filters.tagging.TaggerUnavailable`); configs without a caption rule need none.
    """
    needed = {
        language
        for config in configs
        if config.caption_rule != "none" or config.deja  # Déjà's rules read the tags of every sentence (§2)
        for language in config_languages(config, languages)
    }
    return check_taggers(spec, sorted(needed))


def tagger_tagset(tagger: Tagger) -> str:
    """The tag set a tagger writes: ``ud`` or ``ptb`` (a tagger object that does not say tags in PTB, as before)."""
    return getattr(tagger, "tagset", "ptb")


def tagger_signature(config: PipelineConfig, taggers: Mapping[str, Tagger], languages: Sequence[str]) -> str:
    """The tagger line of a config's card: its language's tagger, or each language's."""
    if config.deja:  # §2's rules: the tagger of the build's one language (English), and WordNet's nouns
        from builder.lang.wordnet import load_wordnet

        return f"{taggers[languages[0]].signature()}; wordnet: {load_wordnet().signature()}"
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

    ``tagger`` is its :func:`tagger_signature`; ``identity`` is :meth:`builder.filters.identity.Identity.record`
    for the config; ``splits`` is
    :func:`builder.publish.splits.split_record`, or None for a config written as one ``train`` split.
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
        "captions_with_an_unrendered_template": extraction.extract.captions_with_an_unrendered_template,
        "references_repeated_by_later_revisions": extraction.extract.repeated_in_history,
        "malformed_pages": extraction.read.malformed_pages,
        "malformed_revisions": extraction.read.malformed_revisions,
        "pages_whose_ns_contradicts_their_title": extraction.read.namespace_mismatches,
        "content_outside_pages": extraction.read.content_outside_pages,
        "xml_entities_left_out": extraction.read.entities_left_out,
        "dumps_with_a_wrong_root_element": extraction.read.wrong_root_element,
        "dumps_that_failed": len(extraction.failures),
        "later_copies_of_pages": extraction.later_copies,
        "repeated_revision_ids": extraction.reused_revision_ids,
    }
    record: dict[str, object] = {
        "config": chain.config.name,
        "rows": rows,
        "parameters": chain.config.parameters(),
        "dumps": extraction.dumps,
        "tagger": tagger,
        "versions": library_versions(chain.config, tagger, languages or config_languages(chain.config, ["en"])),
        "failures": extraction.failures,
        "problems": extraction.problems,
        "pages": extraction.read.pages,
        "revisions": extraction.read.revisions,
        "skipped": skipped,
        "identity": identity,
        "funnel": chain.funnel.to_list(),
    }
    if extraction.web is None:  # a crawl's or a dataset's reading is recorded by web_record
        record["read"] = extraction.reading()
    unrendered = extraction.extract.unrendered_templates
    if unrendered:  # which templates to add to the inline table (--inline-templates), most frequent first
        record["unrendered_templates"] = dict(sorted(unrendered.items(), key=lambda item: (-item[1], item[0])))
    if splits is not None:
        record["splits"] = splits
    if languages:
        record["languages"] = {language: word_counter_signature(language) for language in languages}
    return record


@dataclasses.dataclass
class BuildPlan:
    """A build as checked before any dump is read: its dumps, configs per language, options and taggers."""

    dumps: list[str | Path]
    configs: list[PipelineConfig]  # per language in a build over several (``de.gold``)
    options: BuildOptions
    settings: ExtractionSettings
    languages: list[str]  # of the dumps, sorted
    given: dict[str, str]  # the language given per dump (``--language``), by its resolved name
    taggers: dict[str, Tagger]  # one per language a caption rule needs

    @property
    def crosslingual(self) -> bool:
        return any(config.crosslingual for config in self.configs)

    @property
    def unrendered(self) -> str:
        """The no-hole rule's policy extraction applies: a cross-lingual build holds English captions to it too."""
        policy = self.options.unrendered_templates
        return "drop" if policy == "auto" and self.crosslingual else policy

    def caption_cleaning(self) -> dict[str, str]:
        """Per language, the rules its captions were rendered by (for funnel.json and the card)."""
        source = str(self.options.inline_templates or "")
        return {
            language: caption_rules(language, self.unrendered, user_source=source).describe()
            for language in self.languages
        }

    @property
    def tagger_name(self) -> str | None:
        """The tagger as a name that a worker process or executor can build again (None: an object was given)."""
        return self.options.tagger if isinstance(self.options.tagger, str) else None

    def tagsets(self) -> dict[str, str]:
        return {language: tagger_tagset(tagger) for language, tagger in self.taggers.items()}


def prepare(dumps: Sequence[str | Path], configs: Sequence[PipelineConfig], options: BuildOptions) -> BuildPlan:
    """The build's one check step: every check a build can make before it reads a page, each room's own
    (inputs, storage, identities, languages, Déjà, templates, taggers), cheapest first, so that it fails in seconds,
    not after hours, and a refusal never waits for a model to load."""
    configs = with_references(configs, references_input_kind(dumps) if any(c.records for c in configs) else "")
    settings = ExtractionSettings.of(configs)
    if settings.web:
        return prepare_web(dumps, configs, options, settings)
    if not dumps:
        raise ValueError("no dump files given")
    if options.captions_tsv is not None:
        raise ValueError("a caption TSV (--captions-tsv) belongs to an image–caption dataset (--configs captions)")
    check_input_kinds(dumps, "dump", [config.name for config in configs])
    for dump in dumps:
        check_dump_path(dump)
    check_dump_kinds(dumps, settings.history)
    check_memory_limit(options.memory_limit)
    crosslingual = any(config.crosslingual for config in configs)
    check_identities(settings.identities, options.image_tables, crosslingual)
    given = language_overrides(dumps, options.languages)
    languages = dump_languages(dumps, given)
    expanded = configs_for_languages(configs, languages)
    check_deja(expanded, languages)  # before the taggers load: Déjà reads English only, whatever is installed
    if options.template_parameters:
        read_parameter_table(options.template_parameters)
    if options.inline_templates:
        read_inline_table(options.inline_templates)
    for language in languages:
        word_counter_signature(language)  # a language written without spaces needs its segmenter
    taggers = taggers_for(expanded, languages, options.tagger)  # last: loading a tagger takes seconds
    return BuildPlan(list(dumps), expanded, options, settings, languages, given, taggers)


def check_deja(configs: Sequence[PipelineConfig], languages: Sequence[str]) -> None:
    """A Déjà config reads English with WordNet (§2); another language, a missing WordNet or, for a crawl's sites,
    a missing Public Suffix List stop the build here, in one line."""
    deja = [config for config in configs if config.deja]
    if not deja:
        return
    visual = [config.name for config in deja if config.deja == "paraphrases"]
    if visual and not deja[0].web:  # a dump names its images; it holds no pixels to describe
        raise ValueError(
            f"{visual[0]} reranks by the images' pixels (§5), which a Wikipedia dump does not hold: build "
            "deja-paracaption, its text-only variant (§8.2), or give a crawl or an image–caption dataset"
        )
    if visual and any(importlib.util.find_spec(name) is None for name in ("PIL", "sacrebleu")):
        raise WebLibrariesMissing(
            f"{visual[0]} describes images (Pillow) and chooses σ by BLEU@1 (sacrebleu): "
            'pip install "wikipedia-ipc[web]"'
        )
    from builder.filters.deja import check_deja_language
    from builder.lang.wordnet import load_wordnet

    for language in languages:
        try:
            check_deja_language(language)
        except ValueError as error:
            raise ValueError(f"{deja[0].name}: {error}") from None
    load_wordnet()  # WordNetUnavailable says what is missing
    given = next((config.deja_user_column for config in deja if config.deja_user_column and not config.dataset), "")
    if given:
        raise ValueError(
            f"--deja-user-column {given}: a column of users belongs to an image–caption dataset; a wiki's users are "
            "its pages, a crawl's the registered domains of its pages"
        )
    crawl = any(config.web and not config.dataset for config in deja)
    if crawl and importlib.util.find_spec("publicsuffixlist") is None:
        raise WebLibrariesMissing(
            f'{deja[0].name} counts a crawl\'s users by their registered domains: pip install "wikipedia-ipc[web]" '
            "(publicsuffixlist)"
        )


def references_input_kind(inputs: Sequence[str | Path]) -> str:
    """What a references config alone reads, from its inputs: ``web``, ``dataset``, ``history`` or ``articles``."""
    from builder.sources.kinds import input_kind

    kinds = {input_kind(given) for given in inputs} - {"unknown"}
    if kinds <= {"dump"}:  # a history dump by its name (pages-meta-history), as the dump checks tell it
        return "history" if all(kind_from_name(given) == "history" for given in inputs) else "articles"
    return kinds.pop() if len(kinds) == 1 else "articles"


def check_input_kinds(inputs: Sequence[str | Path], wanted: str, names: Sequence[str]) -> None:
    """Refuse, before reading, an input of another kind than the configs read (a crawl given to gold, a dump to
    web), naming the input and the config that reads it."""
    from builder.sources.kinds import CONFIG_OF_KIND, input_kind

    described = {"dump": "a MediaWiki dump", "web": "a web crawl (WARC or ARC)", "dataset": "an img2dataset folder"}
    plural = {"dump": "MediaWiki dumps", "web": "web crawls", "dataset": "img2dataset folders"}
    for given in inputs:
        kind = input_kind(given)
        if kind not in (wanted, "unknown"):
            reads = f"--configs {CONFIG_OF_KIND[kind]}" if kind in CONFIG_OF_KIND else "a dump config (gold, silver…)"
            also = "; a build reads one kind of input" if len(inputs) > 1 else ""
            raise ValueError(
                f"{given} is {described[kind]}, but {', '.join(names)} read{'s' if len(names) == 1 else ''} "
                f"{plural[wanted]}: build it with {reads}{also}"
            )


def prepare_web(
    inputs: Sequence[str | Path], configs: Sequence[PipelineConfig], options: BuildOptions, settings: ExtractionSettings
) -> BuildPlan:
    """The checks of a web build: its libraries, its WARC sources (folders and listings expanded), its options;
    or, for a dataset build, its img2dataset folder and caption TSV.

    A crawl carries no wiki language: the captions are counted and tagged as ``--language`` says (English by
    default, as the thesis kept English captions); each page's ``<html lang>`` is kept in the rows.
    """
    names = [config.name for config in configs]
    if settings.dataset:
        check_web_libraries(DATASET_LIBRARIES)
        check_input_kinds(inputs, "dataset", names)
        sources = dataset_input(inputs, options.captions_tsv)
        configs = dataset_users(configs, sources[0], options.captions_tsv)
        settings = ExtractionSettings.of(configs)
    else:
        check_web_libraries()
        check_input_kinds(inputs, "web", names)
        if not inputs:
            raise ValueError("a web build reads WARC files: give .warc/.warc.gz files, folders, *.paths.gz or URLs")
        if options.captions_tsv is not None:
            raise ValueError("a caption TSV (--captions-tsv) belongs to an image–caption dataset (--configs captions)")
        from builder.sources.warc import WarcError, expand_warc_inputs

        try:
            sources = expand_warc_inputs(inputs, listing_schemes=options.listing_schemes)
        except WarcError as error:
            raise ValueError(str(error)) from None
    if options.image_tables:
        raise ValueError("image tables (--image-table) are MediaWiki's: a web build compares the crawl's own images")
    check_memory_limit(options.memory_limit)
    language = options.languages if isinstance(options.languages, str) else "en"
    check_deja(configs, [language])
    word_counter_signature(language)
    taggers = taggers_for(configs, [language], options.tagger)
    return BuildPlan(list(sources), list(configs), options, settings, [language], {}, taggers)


def dataset_users(configs: Sequence[PipelineConfig], folder: str, tsv: str | Path | None) -> list[PipelineConfig]:
    """A dataset build's Déjà configs with the column that names the samples' users (§2's "more than one user"):
    the one given, refused before any shard is read when the dataset lacks it, else the one found
    (:func:`builder.sources.img2dataset.user_column`); "" when there is none."""
    from builder.sources.img2dataset import user_column

    deja = [config for config in configs if config.deja]
    if not deja:
        return list(configs)
    column = user_column(folder, tsv, deja[0].deja_user_column)
    return [dataclasses.replace(config, deja_user_column=column) if config.deja else config for config in configs]


def dataset_input(inputs: Sequence[str | Path], tsv: str | Path | None) -> list[str]:
    """A dataset build's one img2dataset folder, its layout recognised, and its caption TSV found, before reading."""
    from builder.sources.img2dataset import dataset_layout

    if len(inputs) != 1:
        given = ", ".join(str(path) for path in inputs) or "none"
        raise ValueError(f"an image–caption dataset build reads one img2dataset output folder; got {given}")
    if is_url(inputs[0]) and not exists(inputs[0]):  # on a store: the bucket or the folder that is missing, named
        raise ValueError(f"{inputs[0]}: no such img2dataset folder ({absent(str(inputs[0]).rstrip('/') + '/')})")
    dataset_layout(inputs[0])  # ValueError names the folder when it holds none of img2dataset's layouts
    if tsv is not None and is_url(tsv) and not exists(tsv):
        raise ValueError(f"{tsv}: no such caption TSV ({absent(str(tsv))})")
    if tsv is not None and not as_path(tsv).is_file():
        raise ValueError(f"{tsv}: no such caption TSV")
    return [str(inputs[0])]


def check_memory_limit(memory_limit: str) -> None:
    """A memory size DuckDB accepts, such as ``512MB``, checked before any dump is read."""
    import duckdb  # imported where it is used: a plan needs it only for this check

    with duckdb.connect() as connection:
        try:
            connection.execute(f"SET memory_limit = '{memory_limit}'")
        except duckdb.Error as error:
            raise ValueError(f"memory limit {memory_limit!r} is not a size such as 512MB or 4GB ({error})") from None


@dataclasses.dataclass
class Selected:
    """What steps 0–4 of one config left, as the core records it."""

    titles: int | None = None  # distinct titles before the identity map (None: the map changes no title)
    kept_apart: int = 0  # references left out before step 0 (files local to a wiki, web images that failed a rule)


@dataclasses.dataclass
class Written:
    """A config's pairs as written into its staging folder."""

    rows: int
    files: list[Path | str]  # a URL where executors wrote to an object store
    splits: dict[str, object] | None = None  # :func:`builder.publish.splits.split_record`; None without splits
    writing_seconds: float = 0.0  # of the pair-filter stage, spent writing
    statistics: dict[str, object] | None = None  # a Déjà config's Tables 1, 2 and 5 (builder.filters.repetition)


class Engine(Protocol):
    """What runs the stages of a build; :func:`run` calls them in this order, once per build."""

    def open(self, plan: BuildPlan) -> contextlib.AbstractContextManager[Path]:
        """The engine's resources for the build (a work folder, a session); yields the work folder."""
        ...

    def image_identity(self, plan: BuildPlan, work: Path) -> ImageIdentity:
        """A Wikipedia build's image tables (``--image-table``), read before any dump, as what makes its identity
        map and a cross-lingual config's local files after extraction (:class:`builder.filters.identity.
        ImageIdentity`); the map and the local files are the engine's, applied in its ``select``."""
        ...

    def extract(self, plan: BuildPlan, work: Path) -> Extraction:
        """Every dump's image references, kept by the engine for the stages after."""
        ...

    def image_stage(
        self, plan: BuildPlan, extraction: Extraction, work: Path, images: Callable[[ImageTables], WebImages]
    ) -> WebImages:
        """A web build's image stage: ``images`` (:func:`builder.filters.web.web_images` for the build) run over
        the per-image tables (:class:`builder.filters.web.ImageTables`) of what ``extract`` read, its image records
        and each referenced image URL's count, held by the engine, never in the driver's process."""
        ...

    def select(
        self, plan: BuildPlan, chains: Mapping[str, FilterChain], identity: Identity, excluded: Mapping[str, object]
    ) -> dict[str, Selected]:
        """Group each config's references by image (after the identity map) and run steps 0–4.

        ``excluded`` names, per config, the images whose references the config leaves out before step 0
        (``language``, ``image``; a null language: in every language), counted in :attr:`Selected.kept_apart`:
        a cross-lingual config's files local to one wiki (a parquet file), a web config's images that failed a
        §4.3.2 rule or that have no record to compare (what the engine's image tables kept them as).
        """
        ...

    def tag(self, plan: BuildPlan, chains: Mapping[str, FilterChain]) -> None:
        """Tag every text that survived step 4 once per language, for the caption rule of step 5."""
        ...

    def write(self, plan: BuildPlan, chain: FilterChain, publisher: Publisher) -> Written:
        """Steps 5–9 of one config, its pairs written (split when the config asks) into the publisher."""
        ...


def run(
    engine: Engine,
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    output: str | Path,
    options: BuildOptions,
) -> BuildReport:
    """Build ``configs`` from ``dumps`` into the dataset folder ``output`` with ``engine``.

    The output is published as :class:`builder.publish.publisher.Publisher` describes: locked and
    checked before any dump is read, written to the side, and switched in one step at the end.
    """
    refuse_in_bootstrap()
    plan = prepare(dumps, configs, options)
    output = output if is_url(output) else Path(output)
    publisher = publisher_for(output, [config.name for config in plan.configs], options.overwrite)
    clock = StageClock()
    try:
        publisher.open()  # locked and writable before any dump is read, or the work folder touched
        with engine.open(plan) as work:
            web = None
            with clock.stage("extraction"):
                if plan.settings.web:
                    extraction = engine.extract(plan, work)
                    web = web_stage(plan, engine, extraction, work)
                    identity, wiki_files = web.identity, {}
                    excluded = dict.fromkeys((c.name for c in plan.configs), web.excluded) if web.excluded else {}
                else:
                    tables = engine.image_identity(plan, work)  # read before the dumps: a bad table fails first
                    extraction = engine.extract(plan, work)
                    identity = tables.identity(extraction)
                    wiki_files, local = tables.local_files(extraction.wikis) if plan.crosslingual else ({}, None)
                    excluded = {c.name: local for c in plan.configs if c.crosslingual} if wiki_files else {}
            chains = {config.name: FilterChain(config) for config in plan.configs}
            with clock.stage("grouping"):
                selected = engine.select(plan, chains, identity, excluded)
            with clock.stage("tagging"):
                engine.tag(plan, chains)
            rows, merged, splits = {}, {}, {}
            for name, chain in chains.items():
                with clock.stage("pair filters"):
                    written = engine.write(plan, chain, publisher)
                clock.move(written.writing_seconds, "pair filters", "writing")
                rows[name] = written.rows
                if chain.config.references:  # its records are its rows: the headline and the funnel say one thing
                    chain.funnel.rows[0].pairs = written.rows
                pairs = {} if chain.config.records else pairs_per_identity(written.files)
                if web is not None:
                    merged[name] = {**web.record, "pairs": {kind: n for kind, n in pairs.items() if n}}
                else:
                    merged[name] = identity.record(selected[name].titles, chain.funnel.rows[0].images, pairs)
                if written.splits is not None:
                    splits[name] = written.splits
                record = config_record(plan, chain, written, extraction, merged[name])
                if written.statistics is not None:
                    record["deja"] = written.statistics
                if web is not None:
                    web_record(record, extraction, selected[name].kept_apart)
                if chain.config.crosslingual and wiki_files:
                    kept_apart = selected[name].kept_apart
                    record["local_files"] = {"image_tables": wiki_files, "references_kept_apart": kept_apart}
                publisher.add_config(name, record, written.files)
        with clock.stage("writing"):  # the engine's work folder and session are gone: only the staged files are left
            publisher.publish()
    finally:
        publisher.close()
    return BuildReport(output, rows, chains, extraction, clock, merged, splits, publisher.build)


def web_tasks(plan: BuildPlan, folder: Path) -> list:
    """One task per WARC source, or per shard of a dataset (the unit of work of both engines): image URLs
    normalized (§4.6.1) and image records inspected at the configs' hash length, so that every equivalence reads
    one index."""
    from builder.filters.images import normalize_url

    if plan.settings.dataset:
        from builder.extract.datasetrefs import dataset_tasks

        tsv = plan.options.captions_tsv is not None
        settings = plan.settings
        feature, user = settings.feature, settings.user_column
        return dataset_tasks(plan.dumps[0], tsv, settings.hash_size, folder, normalize_url, feature=feature, user=user)
    from builder.extract.web import web_task
    from builder.extract.webrefs import PixelInspector, WebBuildTask

    inspector = PixelInspector(plan.settings.hash_size, plan.settings.feature)
    return [
        WebBuildTask(number, web_task(source, folder, normalize=normalize_url, inspect=inspector), plan.languages[0])
        for number, source in enumerate(plan.dumps)
    ]


def web_read(plan: BuildPlan, tasks: list, results: list, index: list[Path], referenced: Path):  # noqa: ANN201
    """What a web extraction read, for the stages after it: a :class:`builder.extract.webrefs.WebCrawl`."""
    from builder.extract.webrefs import WebCrawl

    return WebCrawl(list(plan.dumps), results, index, referenced)


def dataset_parts(plan: BuildPlan, folder: Path) -> list:
    """A dataset build's caption TSV as tasks (:class:`builder.extract.captiontsv.TsvPartTask`), each a part cut
    at line ends, read where the engine runs its tasks; none without a TSV."""
    from builder.extract.captiontsv import tsv_part_tasks

    return tsv_part_tasks(plan.options.captions_tsv, folder, plan.options.workers, plan.settings.user_column)


def dataset_read(  # noqa: ANN201 - a DatasetRead
    plan: BuildPlan,
    tasks: list,
    results: list,
    parts: list,
    join,  # noqa: ANN001 - a CaptionJoin
    index: list[Path],
    referenced: Path | None,
):
    """What a dataset build's extraction read, for the stages after it: the shards' results, the TSV's parts'
    (its rows and bad rows, named by their line in the file) and what the engine's join of the two counted
    (:func:`builder.extract.captiontsv.join_captions`)."""
    from builder.extract.captiontsv import tsv_totals
    from builder.extract.datasetrefs import DatasetRead, with_unusable_urls
    from builder.sources.img2dataset import dataset_layout

    tsv = plan.options.captions_tsv
    rows, unreadable, problems = tsv_totals(tsv, parts) if tsv is not None else (0, 0, [])
    with_unusable_urls(results, join.unusable)
    folder = str(plan.dumps[0])
    shards = [task.shard_name for task in tasks]
    text = None if tsv is None else str(tsv)
    layout = dataset_layout(folder)
    return DatasetRead(
        folder, layout, text, rows, unreadable, problems, shards, results, join.counts, index, referenced
    )


def web_extraction(
    plan: BuildPlan,
    crawl,  # noqa: ANN001 - a WebCrawl or DatasetRead
    shards: list[Path],
    seconds: float,
    copies: int = 0,
    copied: int = 0,
) -> Extraction:
    """A web build's :class:`Extraction`: its reference shards (the local engine's), the crawl or dataset, each
    source that could not be read among the failures, the later captures of pages (``copies``: left out by the
    engine) and their references (``copied``) counted, so that the crawl's counters add up with step 0; the
    problems are warned of, file and record named, as a dump build's are."""
    from builder.extract.wikitext import ExtractStats
    from builder.sources.files import MAX_PROBLEMS, DumpWarning, ReadStats

    problems = crawl.problems()[:MAX_PROBLEMS]
    if copies:
        problems.append(
            f"{copies:,} later capture(s) of pages already read skipped: a page (its URL) captured twice, in one "
            "WARC file or several, is read once, from its first successful capture in input order"
        )
    for problem in problems:
        warnings.warn(problem, DumpWarning, stacklevel=3)
    extraction = Extraction(
        shards, ReadStats(), ExtractStats(), crawl.dumps(), seconds, crawl.failures(), problems, web=crawl
    )
    extraction.later_copies = copies
    if copies:  # a crawl's (a dataset has no later captures)
        crawl.later_captures, crawl.later_capture_references = copies, copied
    return extraction


def web_stage(plan: BuildPlan, engine: Engine, extraction: Extraction, work: Path):  # noqa: ANN201 - a WebImages
    """The crawl's images between extraction and grouping (:func:`builder.filters.web.web_images`), computed in the
    engine's tables; the configs get §5.1.2's bound it derived, so that every engine's chain applies the same one."""
    from builder.filters.web import web_images

    config, rules = plan.configs[0], not plan.settings.dataset  # the configs share one equivalence
    web = engine.image_stage(plan, extraction, work, lambda tables: web_images(config, tables, rules=rules))
    plan.configs = [dataclasses.replace(config, max_equal_images=web.max_equal_images) for config in plan.configs]
    return web


def web_record(record: dict[str, object], extraction: Extraction, left_out: int) -> None:
    """A web config's ``funnel.json`` in the thesis's terms: what the crawl's reading and its images counted. The
    crawl's references add up with step 0: ``references`` = step 0's + ``references_of_later_captures`` +
    ``references_left_out_before_step_0``."""
    if record["parameters"]["dump_kind"] == "dataset":  # type: ignore[index]
        dataset_record(record, extraction)
        return
    counts = extraction.web.counts()
    reader, html = counts["reader"], counts["html"]
    record["pages"] = counts["html_pages"]
    record["revisions"] = 0
    record["skipped"] = {
        "records_too_large": reader.get("too_large", 0),
        "truncated_records": reader.get("truncated_records", 0),
        "records_with_a_wrong_digest": reader.get("digest_mismatches", 0),
        "malformed_records": reader.get("malformed_records", 0),
        "warc_files_that_stopped_early": reader.get("files_stopped", 0),
        "gzip_members_skipped": reader.get("members_skipped", 0),
        "bodies_in_an_unsupported_encoding": reader.get("unsupported_encodings", 0),
        "responses_of_other_types": reader.get("other_types", 0),
        "unsuccessful_responses": reader.get("unsuccessful", 0),
        "later_captures_of_pages": extraction.later_copies,
        "undecodable_pages": html.get("undecodable_pages", 0),
        "pages_nested_too_deep": html.get("too_deep_pages", 0),
        "damaged_captions": html.get("damaged_captions", 0),
        "empty_captions": html.get("empty_captions", 0),
        "figures_with_several_images": html.get("figures_with_several_images", 0),
        "images_without_src": html.get("no_src", 0),
        "inline_data_images": html.get("data_uris", 0),
        "unusable_image_urls": html.get("unusable_urls", 0) + counts["unusable_urls"],
        "warc_files_that_failed": counts["warc_files_failed"],
    }
    record["crawl"] = {key: value for key, value in counts.items() if key not in ("reader", "html")}
    record["crawl"]["references_left_out_before_step_0"] = left_out  # type: ignore[index]


def dataset_record(record: dict[str, object], extraction: Extraction) -> None:
    """A dataset config's ``funnel.json``: the folder, its layout, its records and each §5.1.1 reason (a skipped
    sample is no reference: step 0 starts from the images kept), the TSV's rows."""
    counts = extraction.web.counts()
    record["pages"] = counts["records"]
    record["revisions"] = 0
    record["skipped"] = {
        **counts["skipped"],
        "unreadable_shards": counts["unreadable_shards"],
        "unreadable_metadata": counts["unreadable_metadata"],
        "links_outside_the_folder": counts["links_outside_the_folder"],
        "shards_that_failed": counts["shards_failed"],
        **({"tsv_rows_unreadable": counts["tsv_rows_unreadable"]} if "tsv" in counts else {}),
    }
    record["dataset"] = counts


def config_record(
    plan: BuildPlan, chain: FilterChain, written: Written, extraction: Extraction, identity: dict[str, object]
) -> dict[str, object]:
    """A config's ``funnel.json``: its counts, its tagger's signature and, beyond English, its languages."""
    signature = tagger_signature(chain.config, plan.taggers, plan.languages)
    recorded = config_languages(chain.config, plan.languages) if plan.languages != ["en"] else []
    record = funnel_record(chain, written.rows, extraction, signature, identity, written.splits, recorded)
    if recorded or plan.unrendered != "auto":  # an English build's record stays as it was
        cleaning = plan.caption_cleaning()
        record["caption_cleaning"] = {language: cleaning[language] for language in recorded or plan.languages}
    return record
