"""Wikipedia-IPC: mine paraphrase pairs from Wikipedia image captions.

Two ways in:

* the command line, which writes a Hub-ready dataset folder and pushes it to the Hub::

      python wikipedia_ipc.py download enwiki --date latest
      python wikipedia_ipc.py build [DUMP|FOLDER ...] --configs gold silver --output wikipedia_ipc
      python wikipedia_ipc.py push wikipedia_ipc USER/wikipedia-ipc

  and then ``datasets.load_dataset("wikipedia_ipc", "gold")``;
* the ``datasets`` builder :class:`WikipediaIPC`, for code that wants a
  ``Dataset`` straight from a dump::

      WikipediaIPC(config_name="gold", dump_paths=[...]).download_and_prepare()

* Python: :func:`build` (or :func:`build_spark`) with :class:`PipelineConfig` presets
  (:data:`GOLD`, :data:`SILVER`, :data:`BRONZE`, :data:`CROSSLINGUAL`) and :class:`BuildOptions`::

      from wikipedia_ipc import GOLD, SILVER, BuildOptions, build
      report = build(["enwiki-…-pages-articles.xml.bz2"], [GOLD, SILVER], "wikipedia_ipc", BuildOptions(workers=4))

  and :func:`released_pairs` for the authors' released corpus.

With no dump given, the command line and the builder use the small sample dump that ships with the package.
Scoring is :mod:`metrics` (``evaluate.load("delta_sem_syn")``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import datasets
import pyarrow.parquet as pq
from datasets.utils.logging import is_progress_bar_enabled

from builder.common import FolderLock, OutputError, plural
from builder.config import (
    BRONZE,
    CAPTION_RULES,
    CROSSLINGUAL,
    DEFAULT_FRACTIONS,
    DEFAULT_MEMORY_LIMIT,
    GOLD,
    IDENTITIES,
    PRESETS,
    SILVER,
    SOURCES,
    BuildOptions,
    PipelineConfig,
    parse_splits,
    preset,
)
from builder.engines.core import BuildReport
from builder.engines.local import build, default_workers
from builder.engines.spark import build_spark
from builder.filters.tagging import TAGGER_NAMES, TaggerUnavailable
from builder.lang.segmenters import WordCounterUnavailable
from builder.publish.card import SAMPLE_DUMP
from builder.publish.hub import HubError, push_to_hub
from builder.publish.layout import read_built
from builder.publish.publisher import published_files, recover
from builder.publish.released import RELEASED_COLUMNS, released_row
from builder.publish.workdir import temporary_work_folder
from builder.sources.download import (
    DEFAULT_MIRROR,
    DEFAULT_PARALLEL,
    MAX_PARALLEL,
    DownloadError,
    Network,
    download,
    expand_dumps,
    human_size,
    plan_download,
)
from builder.sources.files import DumpError
from builder.sources.sqldump import SqlDumpError

__all__ = [
    "BRONZE",
    "CROSSLINGUAL",
    "GOLD",
    "PRESETS",
    "SAMPLE_DUMP",
    "SILVER",
    "BuildOptions",
    "BuildReport",
    "PipelineConfig",
    "WikipediaIPC",
    "WikipediaIPCConfig",
    "build",
    "build_spark",
    "download",
    "main",
    "preset",
    "released_pairs",
]

_FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "image": datasets.Value("string"),
        "caption_type": datasets.Value("string"),
        "sentence1": datasets.Value("string"),
        "sentence2": datasets.Value("string"),
        "page1": datasets.Value("string"),
        "page2": datasets.Value("string"),
        "source1": datasets.Value("string"),
        "source2": datasets.Value("string"),
        "revision1": datasets.Value("int64"),
        "revision2": datasets.Value("int64"),
        "same_page": datasets.Value("bool"),
        "file1": datasets.Value("string"),
        "file2": datasets.Value("string"),
        "identity": datasets.Value("string"),
    }
)
_CROSSLINGUAL_FEATURES = datasets.Features(
    {**_FEATURES, "language1": datasets.Value("string"), "language2": datasets.Value("string")}
)
_DESCRIPTION = (
    "Paraphrase candidates mined from Wikipedia image captions: captions (and alternative texts) "
    "that editors wrote for the same image on different pages (Gohsen et al., EACL 2023)."
)
_CITATION = """@inproceedings{gohsen-etal-2023-paraphrase,
  title = {Paraphrase Acquisition from Image Captions},
  author = {Gohsen, Marcel and Hagen, Matthias and Potthast, Martin and Stein, Benno},
  booktitle = {Proceedings of the 17th Conference of the European Chapter
               of the Association for Computational Linguistics},
  year = {2023},
}"""


@dataclasses.dataclass
class WikipediaIPCConfig(datasets.BuilderConfig):
    """A quality level plus where its dumps are and how to tag them."""

    pipeline: PipelineConfig | None = None
    dump_paths: Sequence[str] | None = None  # dump files, or folders written by ``download``
    tagger: str = "auto"
    workers: int = 1
    image_tables: Sequence[str] = ()  # for a pipeline config with the sha1 identity
    # train/validation/test fractions, () for one train split; None keeps the preset's
    splits: tuple[float, ...] | None = None
    # the dumps' language: one code, or a code per dump path; None: each dump's <dbname> tells
    languages: str | dict[str, str] | None = None


class WikipediaIPC(datasets.GeneratorBasedBuilder):
    """Builds a Wikipedia-IPC config by running the mining pipeline over dump files."""

    BUILDER_CONFIG_CLASS = WikipediaIPCConfig
    BUILDER_CONFIGS = [
        WikipediaIPCConfig(name=name, pipeline=config, description=f"Wikipedia-IPC {name} quality level")
        for name, config in PRESETS.items()
    ]
    DEFAULT_CONFIG_NAME = "gold"

    def _info(self) -> datasets.DatasetInfo:
        config: WikipediaIPCConfig = self.config  # type: ignore[assignment]
        pipeline = config.pipeline or preset(config.name)
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=_CROSSLINGUAL_FEATURES if pipeline.crosslingual else _FEATURES,
            citation=_CITATION,
            license="cc-by-sa-4.0",
        )

    def _download_and_prepare(
        self,
        dl_manager: datasets.DownloadManager,
        verification_mode: datasets.VerificationMode,
        **prepare_splits_kwargs: object,
    ) -> None:
        """Run the pipeline in a scratch folder that lives exactly as long as the examples are generated."""
        with temporary_work_folder("wikipedia-ipc-build-") as scratch:
            self._scratch = Path(scratch)
            super()._download_and_prepare(dl_manager, verification_mode, **prepare_splits_kwargs)

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        config: WikipediaIPCConfig = self.config  # type: ignore[assignment]
        dumps = expand_dumps([str(path) for path in (config.dump_paths or [SAMPLE_DUMP])])
        pipeline = config.pipeline or preset(config.name)
        if config.splits is not None:
            pipeline = dataclasses.replace(pipeline, splits=tuple(config.splits))
        output = self._scratch / "output"
        report = build(
            dumps,
            [pipeline],
            output,
            tagger=config.tagger,
            workers=config.workers,
            work_dir=self._scratch / "work",
            show_progress=is_progress_bar_enabled(),
            image_tables=config.image_tables,
            languages=config.languages,
        )
        if pipeline.name not in report.rows:
            raise ValueError(
                f"{pipeline.name}: the dumps are of several languages, so the build names this config per language "
                f"({', '.join(sorted(report.rows))}); build them with python wikipedia_ipc.py build and load the "
                "folder, or give dumps of one language"
            )
        if not report.rows[pipeline.name]:  # datasets cannot make a split with no rows; say why, not "no data"
            raise ValueError(f"{pipeline.name}: no pair survived the filters in {', '.join(dumps)}; nothing to load")
        generators = []
        for split, files in read_built(output)[pipeline.name].splits().items():
            chosen = [str(path) for path in files]
            if sum(pq.read_metadata(path).num_rows for path in chosen):  # a split without rows is left out
                generators.append(datasets.SplitGenerator(name=split, gen_kwargs={"files": chosen}))
        return generators

    def _generate_examples(self, files: list[str]) -> Iterator[tuple[str, dict[str, object]]]:
        for file in files:
            for row in pq.read_table(file).to_pylist():
                yield row["id"], row


_RELEASED_FEATURES = datasets.Features(
    {**{name: _FEATURES[name] for name in RELEASED_COLUMNS}, "cluster_id": datasets.Value("int64")}
)


def released_pairs(path: str | Path, cache_dir: str | None = None) -> datasets.Dataset:
    """The authors' released Wikipedia-IPC JSONL (Zenodo, doi:10.5281/zenodo.7621320) as a ``Dataset``
    with the columns a build writes, so that both load and score the same way."""
    raw = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=cache_dir)
    return raw.map(released_row, remove_columns=raw.column_names, features=_RELEASED_FEATURES)


def command_parser() -> argparse.ArgumentParser:
    """The command line: ``download``, ``build`` and ``push``."""
    parser = argparse.ArgumentParser(prog="wikipedia_ipc.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser("download", help="fetch a Wikimedia dump run and verify every file's SHA-1")
    fetch.add_argument("wiki", help="the wiki's database name, e.g. enwiki")
    fetch.add_argument(
        "--date", default="latest", help="the run, YYYYMMDD, or latest: the newest run whose job is done (default)"
    )
    fetch.add_argument(
        "--kind",
        choices=["articles", "history"],
        default="articles",
        help="articles: the multistream pages-articles dump and its index files (gold, silver; the default); "
        "history: pages-meta-history (bronze)",
    )
    fetch.add_argument(
        "--format", choices=["bz2", "7z"], default="bz2", help="compression of a history dump (default: bz2)"
    )
    fetch.add_argument(
        "--mirror", default=DEFAULT_MIRROR, help=f"a mirror with Wikimedia's layout (default: {DEFAULT_MIRROR})"
    )
    fetch.add_argument("--output", help="folder to download into (default: dumps/WIKI-DATE)")
    fetch.add_argument(
        "--parallel",
        type=_parallel_argument,
        default=DEFAULT_PARALLEL,
        metavar="N",
        help=f"files at a time, 1 to {MAX_PARALLEL} (default: {DEFAULT_PARALLEL}): Wikimedia's dump servers allow "
        "each address only a few connections",
    )
    fetch.add_argument(
        "--timeout",
        type=float,
        default=Network.timeout,
        help="seconds without an answer, or below --min-rate, that end an attempt (default: 60; a mirror that "
        "stalls every attempt then costs at most 5.5 minutes per file with the default retries)",
    )
    fetch.add_argument(
        "--min-rate",
        type=float,
        default=Network.min_rate / 1000,
        metavar="KB_PER_S",
        help="the slowest transfer accepted, in kB/s averaged over each --timeout seconds (default: 10)",
    )
    fetch.add_argument(
        "--retries",
        type=int,
        default=Network.attempts - 1,
        help="times a dropped connection, a timeout or a 5xx answer is tried again, resuming (default: 4)",
    )
    fetch.add_argument(
        "--retry-wait",
        type=float,
        default=Network.backoff,
        help="seconds before the first retry, doubled before each further one (default: 2)",
    )
    fetch.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    run = commands.add_parser("build", help="mine dumps into a dataset folder")
    run.add_argument(
        "dumps",
        nargs="*",
        help="MediaWiki XML dumps (.xml, .xml.bz2, .xml.gz, .xml.7z), or folders written by download; "
        "default: the sample dump",
    )
    run.add_argument(
        "--configs", nargs="+", default=["gold", "silver"], choices=sorted(PRESETS), help="quality levels to build"
    )
    run.add_argument("--output", default="wikipedia_ipc", help="dataset folder to write (default: wikipedia_ipc)")
    run.add_argument(
        "--overwrite",
        action="store_true",
        help="allow a non-empty --output that holds no earlier build: the build's files are added beside the "
        "files there; none is deleted, and one where the build must write (README.md, <config>/funnel.json) "
        "is renamed to <name>.orig",
    )
    run.add_argument(
        "--sources",
        nargs="+",
        choices=SOURCES,
        help="where references may come from (default: link template, as in the paper; add gallery to mine galleries)",
    )
    run.add_argument(
        "--tagger",
        default="auto",
        choices=TAGGER_NAMES,
        help="POS tagger (auto: corenlp if installed, else stanza if its models are, else perceptron)",
    )
    run.add_argument(
        "--workers", type=_workers_argument, default=default_workers(), help="worker processes (default: CPU count)"
    )
    run.add_argument("--work-dir", help="keep intermediate files here instead of a temporary folder")
    run.add_argument(
        "--memory",
        default=DEFAULT_MEMORY_LIMIT,
        help=f"memory for grouping references by image (DuckDB; default {DEFAULT_MEMORY_LIMIT}); past it, sorting "
        "spills to the work folder",
    )
    run.add_argument("--resume", action="store_true", help="reuse the finished dump parts in --work-dir")
    run.add_argument(
        "--engine", choices=["local", "spark"], default="local", help="local processes, or PySpark (local[N] master)"
    )
    run.add_argument(
        "--history-references",
        choices=["revision", "first_seen"],
        default="revision",
        help="history dumps (bronze): every revision's image use is a reference (default, as the paper's "
        "180 bound assumes), or first_seen: once per page and wording",
    )
    run.add_argument(
        "--splits",
        type=_splits_argument,
        default=DEFAULT_FRACTIONS,
        help="train/validation/test percentages, e.g. 80/10/10 (the default); no image and no text is in two "
        "splits. none: every pair in one train split, as the paper released them",
    )
    run.add_argument(
        "--identity",
        nargs="+",
        choices=IDENTITIES,
        help="how one image is recognised (default: title, as in the paper); redirect: also File redirects of the "
        "dumps; sha1: also equal files by the SHA-1 of --image-table",
    )
    run.add_argument(
        "--image-table",
        nargs="+",
        default=[],
        metavar="PATH",
        help="MySQL dumps of the image table (…-image.sql.gz of the wiki, and of Commons) for --identity sha1",
    )
    run.add_argument(
        "--language",
        nargs="+",
        default=[],
        metavar="LANG",
        help="the language of the dumps' pages, when their <dbname> does not tell it: a language code (de), a "
        "wiki (dewiki, als, simple) for every dump, or CODE=DUMP for one dump; dumps of several languages build "
        "each config per language (de.gold, fr.gold) and allow --configs crosslingual",
    )
    run.add_argument(
        "--template-parameters",
        metavar="FILE",
        help="a JSON table of template parameter names per language (image, caption, alt) that replaces the "
        "shipped one for the languages it names; builder/data/template_parameters.json shows the shape",
    )
    run.add_argument(
        "--inline-templates",
        metavar="FILE",
        help="a JSON table of inline templates per language (how each prints its text) that extends the shipped "
        "one; builder/data/inline_templates.json shows the shape",
    )
    run.add_argument(
        "--unrendered-templates",
        choices=("auto", "drop", "cut"),
        default="auto",
        help="a caption holding a template no table renders: drop it and count it (drop), cut the template out "
        "(cut, the authors' cleaning), or drop in every edition but English and cut in English (auto, the "
        "default; a cross-lingual build drops in English too)",
    )
    run.add_argument(
        "--caption-rule",
        choices=CAPTION_RULES,
        help="replace the configs' caption rule (step 5): sentence (gold), verb (silver, bronze, crosslingual), "
        "or none, for languages no installed tagger covers (the card says so)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    push = commands.add_parser("push", help="upload a built dataset folder to the Hugging Face Hub")
    push.add_argument("folder", help="a dataset folder written by build")
    push.add_argument("repo_id", help="dataset repository on the Hub, e.g. USER/wikipedia-ipc (created if missing)")
    push.add_argument("--private", action="store_true", help="create the repository as private")
    push.add_argument("--revision", help="branch to commit to (created if missing; default: main)")
    push.add_argument("--dry-run", action="store_true", help="list the files that would be uploaded and stop")
    return parser


def _parallel_argument(text: str) -> int:
    """1 to MAX_PARALLEL: more connections would be throttled or refused by Wikimedia, not faster."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_PARALLEL:
        raise argparse.ArgumentTypeError(
            f"{text!r}: 1 to {MAX_PARALLEL} files at a time; Wikimedia's dump servers allow each address only a few "
            "connections"
        )
    return int(text)


def _workers_argument(text: str) -> int:
    try:
        workers = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if workers < 1:
        raise argparse.ArgumentTypeError(f"{workers}: a build needs at least 1 worker")
    return workers


def _splits_argument(text: str) -> tuple[float, ...]:
    try:
        return parse_splits(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def with_history_references(config: PipelineConfig, counting: str) -> PipelineConfig:
    """A history config with the chosen reference counting; other configs read no history."""
    if config.dump_kind != "history":
        return config
    return dataclasses.replace(config, history_references=counting)


def _print_summary(report: BuildReport) -> None:
    read = report.extraction.read
    mined = read.pages - read.skipped_redirect - read.skipped_namespace
    revisions = f" ({plural(read.revisions, 'revision')})" if read.revisions > read.pages else ""
    print(
        f"\nRead {plural(read.pages, 'page')}{revisions}: mined {mined:,} for images, skipped "
        f"{plural(read.skipped_redirect, 'redirect')} and {plural(read.skipped_namespace, 'page')} of other "
        f"namespaces; found {plural(report.extraction.extract.references, 'image reference')} "
        f"in {report.extraction.seconds:.1f} s."
    )
    spent = report.clock.seconds()
    if spent:
        print("Time: " + " · ".join(f"{stage} {seconds:.1f} s" for stage, seconds in spent.items()))
    for name, chain in report.funnels.items():
        print(f"\n## {name}: {plural(report.rows[name], 'pair')}\n")
        print(chain.funnel.markdown())
        identity = report.identities.get(name)
        if identity and identity["identities"] != ["title"]:
            pairs = identity["pairs"]
            print(
                f"Identity map: {identity['images_before']:,} titles → {identity['images_after']:,} images; "
                f"pairs by redirect {pairs['redirect']:,}, by SHA-1 {pairs['sha1']:,}\n"
            )
        if name in report.splits:
            print(_splits_summary(report.splits[name]))
    loadable = [name for name, rows in report.rows.items() if rows]
    empty = [name for name, rows in report.rows.items() if not rows]
    if loadable:
        print(f'Wrote {report.output}/ — load it with datasets.load_dataset("{report.output}", "{loadable[0]}")')
    else:
        print(f"Wrote {report.output}/ — no config has pairs, so there is nothing to load")
    if empty:
        print(
            f"No pair survived in {', '.join(empty)}: "
            f"{'it is' if len(empty) == 1 else 'they are'} described in the card and funnel.json, "
            "but not in the card's configs (datasets cannot load a split with no rows)."
        )


def _splits_summary(splits: dict) -> str:
    """The split sizes in pairs, the components, and the overlap check on the written pairs."""
    sizes = " · ".join(f"{name} {plural(pairs, 'pair')}" for name, pairs in splits["pairs"].items())
    return (
        f"Splits: {sizes}; {plural(splits['components'], 'component')}, the largest "
        f"{plural(splits['largest_component'], 'pair')}; shared by two splits: "
        f"{plural(splits['shared_images'], 'image')}, {plural(splits['shared_texts'], 'text')}\n"
    )


def _download(arguments: argparse.Namespace) -> int:
    """Plan from dumpstatus.json, say how much it is, fetch and verify, and write download.json."""
    numbers = (arguments.timeout, arguments.min_rate, arguments.retry_wait)
    if not (all(map(math.isfinite, numbers)) and arguments.timeout > 0 and min(numbers) >= 0):
        print("error: --timeout must be a positive number, --min-rate and --retry-wait not negative", file=sys.stderr)
        return 2
    network = Network(
        arguments.timeout, max(0, arguments.retries) + 1, arguments.retry_wait, arguments.min_rate * 1000
    )
    try:
        plan = plan_download(
            arguments.wiki, arguments.date, arguments.kind, arguments.format, arguments.mirror, network
        )
        folder = Path(arguments.output or Path("dumps") / f"{plan.wiki}-{plan.date}")
        if arguments.date == "latest":
            print(f"Latest complete run of {plan.wiki} ({plan.job}): {plan.date}")
        print(
            f"{plan.wiki} {plan.date} {plan.job}: {plural(len(plan.files), 'file')}, {human_size(plan.size)} "
            f"({plan.size:,} bytes) from {plan.mirror} into {folder}/",
            flush=True,
        )
        record = download(plan, folder, arguments.parallel, network, show_progress=not arguments.quiet)
    except DownloadError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the .part files are kept; the same command resumes them", file=sys.stderr)
        return 130
    print(f"Verified the SHA-1 of {plural(len(record['files']), 'file')}; wrote {folder / 'download.json'}")
    print(f"Build from it with: python wikipedia_ipc.py build {folder}")
    return 0


def _build(arguments: argparse.Namespace) -> int:
    if arguments.resume and not arguments.work_dir:
        print("error: --resume needs the --work-dir of the interrupted build", file=sys.stderr)
        return 2
    try:
        dumps, languages = dumps_and_languages(arguments.dumps, arguments.language)
    except (DownloadError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    configs = [with_history_references(preset(name), arguments.history_references) for name in arguments.configs]
    if arguments.caption_rule:
        configs = [dataclasses.replace(config, caption_rule=arguments.caption_rule) for config in configs]
    configs = [dataclasses.replace(config, splits=arguments.splits) for config in configs]
    if arguments.sources:
        configs = [dataclasses.replace(config, sources=tuple(arguments.sources)) for config in configs]
    if arguments.identity:
        configs = [dataclasses.replace(config, identities=tuple(arguments.identity)) for config in configs]
    try:
        options = BuildOptions(
            tagger=arguments.tagger,
            workers=arguments.workers,
            memory_limit=arguments.memory,
            image_tables=tuple(arguments.image_table),
            languages=languages,
            template_parameters=arguments.template_parameters,
            inline_templates=arguments.inline_templates,
            unrendered_templates=arguments.unrendered_templates,
            work_dir=arguments.work_dir,
            resume=arguments.resume,
            overwrite=arguments.overwrite,
            show_progress=not arguments.quiet,
        )
        if arguments.engine == "spark":
            report = build_spark(dumps, configs, arguments.output, options)
        else:
            report = build(dumps, configs, arguments.output, options)
    except (
        FileNotFoundError,
        IsADirectoryError,
        ValueError,
        DumpError,
        SqlDumpError,
        TaggerUnavailable,
        WordCounterUnavailable,
        OutputError,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_interrupted(arguments), file=sys.stderr)
        return 130
    _print_summary(report)
    extraction = report.extraction
    if extraction.failures:
        print(f"\n{len(extraction.failures)} dump part(s) failed and are missing from the output:", file=sys.stderr)
        for failure in extraction.failures:
            print(f"  {failure}", file=sys.stderr)
        return 3
    return 0


def dumps_and_languages(given: Sequence[str], languages: Sequence[str]) -> tuple[list[str], dict[str, str] | None]:
    """The dump files of ``build``'s arguments (download folders expanded) and ``--language`` per file.

    ``--language CODE`` applies to every dump; ``CODE=DUMP`` to one dump, or to every file of a download folder.
    """
    dumps = expand_dumps(given) or [str(SAMPLE_DUMP)]
    if not languages:
        return dumps, None
    everywhere = [value for value in languages if "=" not in value]
    if len(everywhere) > 1:
        raise ValueError(f"--language names one code for every dump, or CODE=DUMP per dump; got {everywhere}")
    chosen = dict.fromkeys(dumps, everywhere[0]) if everywhere else {}
    for value in languages:
        if "=" not in value:
            continue
        code, _, dump = value.partition("=")
        if dump not in given:
            raise ValueError(f"--language {value}: {dump} is not one of the dumps given")
        chosen.update(dict.fromkeys(expand_dumps([dump]), code))
    return dumps, chosen


def _interrupted(arguments: argparse.Namespace) -> str:
    """What an interrupted build kept, and how to go on, in one line."""
    kept = f"interrupted: nothing was published; {arguments.output}/ holds what it held before"
    if arguments.work_dir and arguments.engine == "local":
        return f"{kept}; the finished dump parts are kept in {arguments.work_dir}: add --resume to go on"
    return f"{kept}; give --work-dir next time to keep the finished dump parts for --resume"


def _push(arguments: argparse.Namespace) -> int:
    """Upload a complete build; the folder is locked meanwhile, so no build swaps files under the upload."""
    folder = Path(arguments.folder)
    try:
        with FolderLock(folder):
            for note in recover(folder):  # a build killed while it moved its files in: finish it first
                print(note, file=sys.stderr)
            files = published_files(folder)
            sizes = [(folder / file).stat().st_size for file in files]
            if arguments.dry_run:
                print(f"Would upload {plural(len(files), 'file')} ({sum(sizes):,} bytes) to {arguments.repo_id}:")
                for file, size in zip(files, sizes, strict=True):
                    print(f"{size:>14,}  {file.as_posix()}")
                return 0
            url = push_to_hub(folder, files, arguments.repo_id, arguments.private, arguments.revision)
    except (OutputError, HubError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Uploaded {plural(len(files), 'file')} ({sum(sizes):,} bytes): {url}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = command_parser().parse_args(argv)
    if arguments.command == "push":
        return _push(arguments)
    if arguments.command == "download":
        return _download(arguments)
    return _build(arguments)


if __name__ == "__main__":
    sys.exit(main())
