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
import importlib
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from builder.common import FolderLock, OutputError, plural
from builder.config import (
    BRONZE,
    CAPTION_RULES,
    CAPTIONS,
    CROSSLINGUAL,
    DEFAULT_FRACTIONS,
    DEFAULT_MEMORY_LIMIT,
    GOLD,
    IDENTITIES,
    LISTING_SCHEMES,
    PRESETS,
    REFERENCES,
    SILVER,
    SOURCES,
    WEB,
    WEB_EQUIVALENCES,
    WEB_PRESETS,
    BuildOptions,
    PipelineConfig,
    default_workers,
    parse_splits,
    preset,
)
from builder.filters.tagging import TAGGER_NAMES, TaggerUnavailable
from builder.publish.hub import HubError, push_to_hub
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
from builder.storage import local_path
from metrics.profiles import PROFILES

if TYPE_CHECKING:
    from builder.engines.core import BuildReport
    from builder.engines.dataset_builder import WikipediaIPC, WikipediaIPCConfig, released_pairs
    from builder.engines.local import build
    from builder.engines.spark import build_spark
    from builder.publish.card import SAMPLE_DUMP

__all__ = [
    "BRONZE",
    "CAPTIONS",
    "CROSSLINGUAL",
    "GOLD",
    "PRESETS",
    "REFERENCES",
    "WEB",
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

# Names whose modules load datasets, DuckDB or PySpark: imported when first used, so that the command line
# reads its arguments (and answers --help) before any of them is loaded.
_LAZY = {
    "BuildReport": "builder.engines.core",
    "SAMPLE_DUMP": "builder.publish.card",
    "WikipediaIPC": "builder.engines.dataset_builder",
    "WikipediaIPCConfig": "builder.engines.dataset_builder",
    "build": "builder.engines.local",
    "build_spark": "builder.engines.spark",
    "released_pairs": "builder.engines.dataset_builder",
}


def __getattr__(name: str) -> object:
    """The heavy part of the API, on first use (``from wikipedia_ipc import build`` works as before)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def _program_name() -> str:
    """The name the command was run by, for usage lines: the installed command, or the module run by Python."""
    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if invoked.startswith("wikipedia-ipc"):  # the console script (wikipedia-ipc.exe on Windows)
        return "wikipedia-ipc"
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name == "wikipedia_ipc":
        return "python -m wikipedia_ipc"
    return "python wikipedia_ipc.py"


def command_parser() -> argparse.ArgumentParser:
    """The command line: ``download``, ``build`` and ``push``."""
    parser = argparse.ArgumentParser(prog=_program_name(), description=__doc__.split("\n\n")[0])
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
        "default: the embedded samples (a pages-articles dump and its edit history). With --configs web: WARC "
        "files (.warc, .warc.gz), folders of them, Common Crawl *.paths.gz listings or http(s)/s3 URLs",
    )
    run.add_argument(
        "--configs",
        nargs="+",
        choices=sorted({*PRESETS, *WEB_PRESETS, REFERENCES.name}),
        help="quality levels to build (default by the inputs: gold silver for dumps, web for WARC/ARC files, folders "
        "of them or *.paths.gz listings, captions for an img2dataset output folder; with no input, gold silver "
        "bronze from the embedded samples); web: the thesis's pipeline over crawls, captions: over an image–caption "
        "dataset as img2dataset wrote it (files, webdataset or parquet layout, §5.1; docs/web.md); references: every "
        "image–text record step 0 counts, of whatever the build reads, one row per reference and text",
    )
    run.add_argument(
        "--captions-tsv",
        metavar="FILE",
        help="captions: a Conceptual Captions–style TSV (caption, tab, image URL), joined to the samples by URL; "
        "a sample without a caption of its own takes the TSV's",
    )
    run.add_argument(
        "--equivalence",
        choices=WEB_EQUIVALENCES,
        help="web, captions: when two images are one (web's default url, §4.6.1; captions' pixels, §5.1.2): url "
        "(the normalized URL), pixels (MD5 of the decoded pixels), ahash, dhash, phash (perceptual hashes within "
        "--hash-threshold bits), phash-rotation",
    )
    run.add_argument(
        "--hash-threshold",
        type=int,
        metavar="BITS",
        help="web, perceptual equivalences: the Hamming distance at or under which two hashes are one image "
        "(default 4 of 36 bits)",
    )
    run.add_argument(
        "--hash-size",
        type=int,
        metavar="N",
        help="web, perceptual equivalences: imagehash's grid side, N×N bits (default 6: 36 bits, the smallest "
        "square over the thesis's 30)",
    )
    run.add_argument(
        "--listing-scheme",
        action="append",
        default=[],
        metavar="SCHEME",
        help="web: a URL scheme a *.paths.gz listing may name besides http and https (s3, gs, file…); a listing "
        "names paths relative to its base URL otherwise",
    )
    run.add_argument(
        "--set-bound",
        type=_set_bound_argument,
        metavar="Z",
        help="web, captions: §5.1.2's bound on a set of equal images, as a z-score over the sets that can yield "
        "pairs (captions' default 0.05, the thesis's; a crawl applies none unless given); none: no bound",
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
        help=f"memory of the build while it groups and tags (default {DEFAULT_MEMORY_LIMIT}): DuckDB gets this minus "
        "what the process already holds (at least 128 MB); past it, sorting spills to the work folder",
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
    run.add_argument(
        "--score",
        metavar="PROFILE",
        choices=PROFILES,
        help=f"also score every pair (python -m metrics score) with a profile ({', '.join(PROFILES)}): the Δsem,syn "
        "measures and, with the profile the shipped classifier was trained on (minilm, offline), "
        "paraphrase_probability; the card shows each config's map. Needs the metric extra; checked before any dump "
        "is read",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    push = commands.add_parser("push", help="upload a built dataset folder to the Hugging Face Hub")
    push.add_argument("folder", type=local_path, help="a dataset folder written by build")
    push.add_argument("repo_id", help="dataset repository on the Hub, e.g. USER/wikipedia-ipc (created if missing)")
    push.add_argument("--private", action="store_true", help="create the repository as private")
    push.add_argument("--revision", help="branch to commit to (created if missing; default: main)")
    push.add_argument("--dry-run", action="store_true", help="list the files that would be uploaded and stop")
    return parser


DEFAULT_CONFIGS = ("gold", "silver")  # of a build of given dumps
SAMPLE_CONFIGS = ("gold", "silver", "bronze")  # of the sample build: every level of the paper


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


def _print_summary(report: BuildReport, scored_into: str | None = None) -> None:

    read = report.extraction.read
    if report.extraction.web is not None and "layout" in report.extraction.web.counts():
        dataset = report.extraction.web.counts()
        print(
            f"\nRead {dataset['folder']} ({dataset['layout']}, {plural(dataset['shards'], 'shard')}): "
            f"{plural(dataset['records'], 'record')}, {plural(dataset['images'], 'image')} kept (left out, "
            + (", ".join(f"{reason} {count:,}" for reason, count in dataset["skipped"].items() if count) or "none")
            + f") in {report.extraction.seconds:.1f} s."
        )
    elif report.extraction.web is not None:
        crawl = report.extraction.web.counts()
        unsuccessful = crawl["unsuccessful_responses"]
        later = report.extraction.later_copies
        print(
            f"\nRead {plural(crawl['warc_files'], 'WARC file')} ({plural(crawl['records'], 'record')}): "
            f"{plural(crawl['html_pages'], 'HTML page')}, {plural(crawl['images_indexed'], 'image record')}"
            + (f", skipped {plural(unsuccessful, 'response')} that are no success (not 2xx)" if unsuccessful else "")
            + f"; found {plural(crawl['references'], 'image reference')}"
            + (
                f", {crawl['references_of_later_captures']:,} of them in {plural(later, 'later capture')} of pages "
                "read before (left out)"
                if later
                else ""
            )
            + f" in {report.extraction.seconds:.1f} s."
        )
    else:
        reading = report.extraction.reading()  # adds up: copies + mined + redirects + other namespaces = pages
        revisions = f" ({plural(read.revisions, 'revision')})" if read.revisions > read.pages else ""
        copies = reading["copies"]
        if copies:  # a page given twice (two files of one dump) is read once: say how many of the pages were copies
            copied = f"{'a copy' if copies == 1 else 'copies'} of {reading['copies_of']} read before (left out)"
            revisions += f", {copies:,} of them {copied}"
        print(
            f"\nRead {plural(read.pages, 'page')}{revisions}: mined {reading['mined']:,} for images, skipped "
            f"{plural(read.skipped_redirect, 'redirect')} and {plural(read.skipped_namespace, 'page')} of other "
            f"namespaces; found {plural(reading['references'], 'image reference')} "
            f"in {report.extraction.seconds:.1f} s."
        )
    spent = report.clock.seconds()
    if spent:
        print("Time: " + " · ".join(f"{stage} {seconds:.1f} s" for stage, seconds in spent.items()))
    for name, chain in report.funnels.items():
        print(f"\n## {name}: {plural(report.rows[name], chain.funnel.unit[:-1])}\n")
        print(chain.funnel.markdown())
        identity = report.identities.get(name)
        if identity and "equivalence" in identity:
            left = sum(counts["references"] for counts in identity["left_out"].values())
            kinds = ", ".join(f"{kind} {count:,}" for kind, count in identity["pairs"].items())
            print(
                f"Images ({identity['identity']}): {identity['images_kept']:,} image URLs → "
                f"{identity['equivalence_sets']:,} sets; {plural(left, 'reference')} left out by the image rules"
                + (f"; pairs by kind: {kinds}\n" if kinds else "\n")
            )
        elif identity and identity["identities"] != ["title"]:
            pairs = identity["pairs"]  # none for a references config: it pairs nothing
            added = f"; pairs by redirect {pairs['redirect']:,}, by SHA-1 {pairs['sha1']:,}" if pairs else ""
            print(f"Identity map: {identity['images_before']:,} titles → {identity['images_after']:,} images{added}\n")
        if name in report.splits:
            print(_splits_summary(report.splits[name]))
    loadable = [name for name, rows in report.rows.items() if rows]
    empty = [name for name, rows in report.rows.items() if not rows]
    if scored_into is not None:
        print(f"\nBuilt; scoring the pairs into {scored_into}/ ...")
        return
    if loadable:
        # the absolute path: a bare name is also a Hub dataset id, which datasets tries when no such folder is here
        if isinstance(report.output, str):  # a URL: datasets reads the files the card names, not the folder
            files = f'card_data_files("{report.output}", "{loadable[0]}")'
            print(f'Wrote {report.output}/ — load it with datasets.load_dataset("parquet", data_files={files}) ')
            print("  (card_data_files from builder.publish.bucket: the files the card names, the build's manifest)")
        else:
            folder = report.output.resolve().as_posix()
            print(f'Wrote {report.output}/ — load it with datasets.load_dataset("{folder}", "{loadable[0]}")')
        build = report.build
        if build:
            print(f"Build id {build} (in the card's YAML and in each config's funnel.json)")
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
    network = Network(arguments.timeout, max(0, arguments.retries) + 1, arguments.retry_wait, arguments.min_rate * 1000)
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
    print(f"Build from it with: {_program_name()} build {folder}")
    return 0


def sample_runs(names: Sequence[str]) -> list[tuple[list[str], list[str]]]:
    """With no dump given: the embedded samples, the articles sample for gold and silver and the history sample
    for bronze, one build each (a build reads one kind of dump), in the order the configs were named."""
    from builder.publish.card import SAMPLE_DUMP, SAMPLE_HISTORY

    runs: dict[str, list[str]] = {}
    for name in names:
        runs.setdefault(preset(name).dump_kind, []).append(name)
    samples = {"articles": SAMPLE_DUMP, "history": SAMPLE_HISTORY}
    return [([str(samples[kind])], configs) for kind, configs in runs.items()]


def _build(arguments: argparse.Namespace) -> int:
    """One build of the given dumps; with none given, the samples (gold and silver, then bronze) into one folder."""
    if arguments.resume and not arguments.work_dir:
        print("error: --resume needs the --work-dir of the interrupted build", file=sys.stderr)
        return 2
    if arguments.dumps:
        from builder.sources.kinds import configs_for_inputs

        try:  # without --configs, the inputs say what to build: dumps gold and silver, a crawl web, a dataset captions
            names = arguments.configs or configs_for_inputs(arguments.dumps, list(DEFAULT_CONFIGS))
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        runs = [(arguments.dumps, names)]
    else:
        runs = sample_runs(arguments.configs or list(SAMPLE_CONFIGS))
    if arguments.score:
        return _build_and_score(arguments, runs)
    for dumps, names in runs:
        code = _build_once(arguments, dumps, names)
        if code:
            return code
    return 0


def _build_and_score(arguments: argparse.Namespace, runs: Sequence[tuple[list[str], list[str]]]) -> int:
    """``build --score``: build into a folder of the toolkit's own beside the output, score it into the output
    (published as a build is), and remove the unscored copy. The scorer is checked before any dump is read."""
    import shutil
    import tempfile

    from builder.storage import is_url
    from metrics.cli import NothingToScore, check_scoring, print_summary, score_folder
    from metrics.cli import parser as score_parser
    from metrics.profiles import ModelUnavailable

    if is_url(arguments.output):
        print(
            f"error: --score writes a local folder, and {arguments.output} is on an object store; build there "
            "without --score, or score into a local folder",
            file=sys.stderr,
        )
        return 2

    if any(preset(name).crosslingual for _, names in runs for name in names) and arguments.score != "multilingual":
        print(
            f"error: --score {arguments.score} reads English only; a crosslingual config needs --score multilingual",
            file=sys.stderr,
        )
        return 2
    try:
        check_scoring(arguments.score)
    except ModelUnavailable as error:
        print(f"error: --score {arguments.score}: {error}", file=sys.stderr)
        return 2
    output = Path(arguments.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    unscored = Path(tempfile.mkdtemp(prefix=f".{output.name}-unscored-", dir=output.parent))
    try:
        building = argparse.Namespace(
            **{**vars(arguments), "output": str(unscored / "build"), "scored_into": str(output)}
        )
        for dumps, names in runs:
            code = _build_once(building, dumps, names)
            if code:
                return code
        options = ["score", str(unscored / "build"), "--output", str(output), "--profile", arguments.score]
        options += ["--no-progress"] if arguments.quiet else []
        options += ["--overwrite"] if arguments.overwrite else []
        scoring = score_parser().parse_args(options)
        try:
            results = score_folder(unscored / "build", output, scoring)
        except NothingToScore:
            print(
                f"error: no config has pairs, so there is nothing to score; {output}/ was not written (without "
                "--score the build writes its funnel.json and card)",
                file=sys.stderr,
            )
            return 2
        except (ValueError, OutputError, ModelUnavailable, OSError) as error:
            print(f"error: scoring the build: {error}; {output}/ was not written", file=sys.stderr)
            return 2
    finally:
        shutil.rmtree(unscored, ignore_errors=True)
    for name, scores in results.items():
        print_summary(name, scores)
    print(f"Wrote {output}/ (scored) — load it with datasets.load_dataset({str(output.resolve())!r}, CONFIG)")
    return 0


def _configured(arguments: argparse.Namespace, names: Sequence[str]) -> list[PipelineConfig]:
    """The presets named, with the options given; an option a config cannot take is a ValueError naming it."""
    configs = [with_history_references(preset(name), arguments.history_references) for name in names]
    configs = with_web_options(configs, arguments)
    pairing = [config for config in configs if not config.references]  # references: step 0's records, every source
    if arguments.caption_rule:
        configs = [dataclasses.replace(c, caption_rule=arguments.caption_rule) if c in pairing else c for c in configs]
    configs = [
        dataclasses.replace(config, splits=arguments.splits) if config in pairing else config for config in configs
    ]
    if arguments.sources:
        configs = [dataclasses.replace(c, sources=tuple(arguments.sources)) if c in pairing else c for c in configs]
    if arguments.identity:
        configs = [dataclasses.replace(config, identities=tuple(arguments.identity)) for config in configs]
    return configs


def _build_once(arguments: argparse.Namespace, given: Sequence[str], names: Sequence[str]) -> int:
    from builder.engines.local import build
    from builder.engines.spark import build_spark
    from builder.lang.segmenters import WordCounterUnavailable
    from builder.storage import StorageError

    web = any(preset(name).web for name in names)
    if all(preset(name).references for name in names):  # references alone read what they are given
        from builder.sources.kinds import input_kind

        web = bool(given) and all(input_kind(item) in ("web", "dataset") for item in given)
    try:
        read = web_inputs if web else dumps_and_languages
        dumps, languages = read(given, arguments.language)
    except (DownloadError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        configs = _configured(arguments, names)
        options = BuildOptions(
            tagger=arguments.tagger,
            workers=arguments.workers,
            memory_limit=arguments.memory,
            image_tables=tuple(arguments.image_table),
            languages=languages,
            template_parameters=arguments.template_parameters,
            inline_templates=arguments.inline_templates,
            unrendered_templates=arguments.unrendered_templates,
            captions_tsv=arguments.captions_tsv,
            listing_schemes=(*LISTING_SCHEMES, *(scheme.lower() for scheme in arguments.listing_scheme)),
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
        StorageError,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_interrupted(arguments), file=sys.stderr)
        return 130
    _print_summary(report, getattr(arguments, "scored_into", None))
    extraction = report.extraction
    if extraction.failures:
        print(f"\n{len(extraction.failures)} dump part(s) failed and are missing from the output:", file=sys.stderr)
        for failure in extraction.failures:
            print(f"  {failure}", file=sys.stderr)
        return 3
    return 0


def web_inputs(given: Sequence[str], languages: Sequence[str]) -> tuple[list[str], str | None]:
    """A web or dataset build's inputs as given (the build expands folders and listings) and its captions' language."""
    if not given:
        raise ValueError(
            "--configs web reads WARC files: give .warc/.warc.gz files, folders, *.paths.gz or URLs; "
            "--configs captions reads one img2dataset output folder"
        )
    if len(languages) > 1 or any("=" in language for language in languages):
        raise ValueError("a web build's captions have one language: give --language CODE once")
    return list(given), (languages[0] if languages else None)


def _set_bound_argument(text: str) -> float | str:
    if text.strip().lower() == "none":
        return "none"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a z-score (a number) or none, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"a finite z-score, not {text!r}")
    return value


def with_web_options(configs: Sequence[PipelineConfig], arguments: argparse.Namespace) -> list[PipelineConfig]:
    """The web configs with ``--equivalence``, ``--hash-threshold``, ``--hash-size`` and ``--set-bound``; other
    configs refuse them."""
    given = {
        field: value
        for field, value in (
            ("equivalence", arguments.equivalence),
            ("hash_threshold", arguments.hash_threshold),
            ("hash_size", arguments.hash_size),
            ("set_size_z", getattr(arguments, "set_bound", None)),
        )
        if value is not None
    }
    if given.get("set_size_z") == "none":
        given["set_size_z"] = None
    if given and not all(config.web or config.references for config in configs):
        named = ", ".join(f"--{field.replace('_', '-')}" for field in given).replace("--set-size-z", "--set-bound")
        raise SystemExit(f"error: {named} apply to web and dataset configs (--configs web, captions) only")
    return [dataclasses.replace(config, **given) if config.web or config.references else config for config in configs]


def dumps_and_languages(given: Sequence[str], languages: Sequence[str]) -> tuple[list[str], dict[str, str] | None]:
    """The dump files of ``build``'s arguments (download folders expanded) and ``--language`` per file.

    ``--language CODE`` applies to every dump; ``CODE=DUMP`` to one dump, or to every file of a download folder.
    """
    from builder.publish.card import SAMPLE_DUMP

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
    from builder.publish.publisher import published_files, recover

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
