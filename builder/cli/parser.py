"""The command line's words: ``download``, ``build`` and ``push``, each option with its help, grouped by concern.

Only the parser lives here; what the parsed options do to a build is :mod:`builder.cli.options`, and what each command
runs is :mod:`builder.cli.commands`. Nothing here loads datasets, DuckDB or PySpark: ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from builder.config import (
    CAPTION_RULES,
    DEFAULT_MEMORY_LIMIT,
    DEJA_FEATURES,
    IDENTITIES,
    MAX_WORKERS,
    PRESETS,
    RECORD_PRESETS,
    SOURCES,
    WEB_EQUIVALENCES,
    WEB_PRESETS,
    default_workers,
    parse_splits,
)
from builder.filters.tagging import TAGGER_NAMES
from builder.sources.download import DEFAULT_MIRROR, DEFAULT_PARALLEL, MAX_PARALLEL, Network
from builder.storage import local_path
from metrics.profiles import PROFILES

__all__ = ["DESCRIPTION", "command_parser", "program_name"]

DESCRIPTION = "Wikipedia-IPC: mine paraphrase pairs from Wikipedia image captions."


def program_name() -> str:
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
    parser = argparse.ArgumentParser(prog=program_name(), description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser("download", help="fetch a Wikimedia dump run and verify every file's SHA-1")
    _download_arguments(fetch)
    run = commands.add_parser("build", help="mine dumps into a dataset folder")
    _input_arguments(run.add_argument_group("what to build"))
    _config_arguments(run.add_argument_group("the configs' parameters (each applies to every config it concerns)"))
    _web_arguments(run.add_argument_group("web crawls and image–caption datasets"))
    _language_arguments(run.add_argument_group("languages and templates"))
    _running_arguments(run.add_argument_group("running the build"))
    _output_arguments(run.add_argument_group("the output"))
    _push_arguments(commands.add_parser("push", help="upload a built dataset folder to the Hugging Face Hub"))
    return parser


def _download_arguments(fetch: argparse.ArgumentParser) -> None:
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
        type=parallel_argument,
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


def _input_arguments(run: argparse._ArgumentGroup) -> None:
    """The inputs and the configs built from them."""
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
        choices=sorted({*PRESETS, *WEB_PRESETS, *RECORD_PRESETS}),
        help="quality levels to build (default by the inputs: gold silver for dumps, web for WARC/ARC files, folders "
        "of them or *.paths.gz listings, captions for an img2dataset output folder; with no input, gold silver "
        "bronze from the embedded samples); web: the thesis's pipeline over crawls, captions: over an image–caption "
        "dataset as img2dataset wrote it (files, webdataset or parquet layout, §5.1; docs/web.md); references: every "
        "image–text record step 0 counts, of whatever the build reads, one row per reference and text; deja: Déjà "
        "Image-Captions' captions in repetition (Chen et al. 2015, §2; English; docs/deja.md), one row per "
        "caption–image edge; deja-paracaption: each kept caption paired with the one sharing the most nouns (§8.2); "
        "deja-paraphrases: §5's visual paraphrases, those candidates reranked by the images' features (crawls and "
        "datasets, which hold pixels)",
    )


def _config_arguments(run: argparse._ArgumentGroup) -> None:
    """What changes the pairs of a config: its fields in funnel.json's ``parameters`` (builder.cli.options)."""
    run.add_argument(
        "--sources",
        nargs="+",
        choices=SOURCES,
        help="where references may come from (default: link template, as in the paper; add gallery to mine galleries)",
    )
    run.add_argument(
        "--history-references",
        choices=["revision", "first_seen"],
        help="history dumps (bronze): every revision's image use is a reference (default, as the paper's "
        "180 bound assumes), or first_seen: once per page and wording",
    )
    run.add_argument(
        "--splits",
        type=splits_argument,
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
        "--caption-rule",
        choices=CAPTION_RULES,
        help="replace the configs' caption rule (step 5): sentence (gold), verb (silver, bronze, crosslingual), "
        "or none, for languages no installed tagger covers (the card says so)",
    )


def _web_arguments(run: argparse._ArgumentGroup) -> None:
    """The thesis's web family: crawls (``--configs web``) and image–caption datasets (``--configs captions``)."""
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
        type=set_bound_argument,
        metavar="Z",
        help="web, captions: §5.1.2's bound on a set of equal images, as a z-score over the sets that can yield "
        "pairs (captions' default 0.05, the thesis's; a crawl applies none unless given); none: no bound",
    )
    run.add_argument(
        "--deja-feature",
        choices=DEJA_FEATURES,
        help="deja-paraphrases: the image feature whose affinity reranks the candidates (default tiny, Table 6's "
        "best; gist, gist+tiny cost about 180 times as much per image)",
    )
    run.add_argument(
        "--deja-sigma",
        type=int,
        metavar="N",
        help="deja-paraphrases: σ, the images of a candidate that φ averages (default: chosen by BLEU@1 on a "
        "development set of 300 of the graph's images, footnote 5)",
    )
    run.add_argument(
        "--deja-query-image",
        action="store_true",
        default=None,
        help="deja-paraphrases: compare the query image with itself too when a candidate also captions it (left "
        "out by default, so that the choice is another image's caption, not another writer's of the same one)",
    )
    run.add_argument(
        "--deja-user-column",
        metavar="NAME",
        help="Déjà configs over an image–caption dataset: the column (of the shards' metadata or the caption TSV) "
        "naming each sample's user, for §2's 'more than one user' rule (default: author, user_nsid, owner or user, "
        "the first the dataset has; none: the rule is not applied)",
    )


def _language_arguments(run: argparse._ArgumentGroup) -> None:
    """The languages of the dumps and the tables that clean their captions."""
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


def _running_arguments(run: argparse._ArgumentGroup) -> None:
    """How the build runs: none of these changes a row but the tagger, whose verdicts the caption rules read (the
    card names it)."""
    run.add_argument(
        "--tagger",
        default="auto",
        choices=TAGGER_NAMES,
        help="POS tagger (auto: the first installed of corenlp, stanza with its models, spacy with en_core_web_sm, "
        "perceptron)",
    )
    run.add_argument(
        "--workers",
        type=workers_argument,
        default=default_workers(),
        help=f"worker processes (default: CPU count), 1 to {MAX_WORKERS}: a build starts no more than it has parts to "
        "read (dump ranges, WARC files, shards) and cores to use, and gives the same rows whatever the number",
    )
    run.add_argument("--work-dir", help="keep intermediate files here instead of a temporary folder")
    run.add_argument(
        "--memory",
        default=DEFAULT_MEMORY_LIMIT,
        help=f"memory of the build while it groups and tags (default {DEFAULT_MEMORY_LIMIT}): DuckDB gets this minus "
        "what the process already holds (at least 128 MB); past it, sorting spills to the work folder; 128MB "
        "at least",
    )
    run.add_argument("--resume", action="store_true", help="reuse the finished dump parts in --work-dir")
    run.add_argument(
        "--engine", choices=["local", "spark"], default="local", help="local processes, or PySpark (local[N] master)"
    )
    run.add_argument(
        "--spark-one-task-bytes",
        type=int,
        metavar="BYTES",
        help="with --engine spark: inputs of local files of at most BYTES (default 8 MiB) are built in one Spark task "
        "by the local engine's stages, which is faster than spreading them; 0 spreads every build",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars")


def _output_arguments(run: argparse._ArgumentGroup) -> None:
    """Where the dataset folder goes, and what is added to it."""
    run.add_argument("--output", default="wikipedia_ipc", help="dataset folder to write (default: wikipedia_ipc)")
    run.add_argument(
        "--overwrite",
        action="store_true",
        help="allow a non-empty --output that holds no earlier build: the build's files are added beside the "
        "files there; none is deleted, and one where the build must write (README.md, <config>/funnel.json) "
        "is renamed to <name>.orig",
    )
    run.add_argument(
        "--score",
        metavar="PROFILE",
        choices=PROFILES,
        help=f"also score every pair (python -m metrics score) with a profile ({', '.join(PROFILES)}): the Δsem,syn "
        "measures and paraphrase_probability (the default classifier, a cross-encoder fine-tuned on pairs people "
        "labelled, English pairs); the "
        "card shows each config's map. Needs the metric extra; checked before any dump "
        "is read",
    )


def _push_arguments(push: argparse.ArgumentParser) -> None:
    push.add_argument("folder", type=local_path, help="a dataset folder written by build")
    push.add_argument("repo_id", help="dataset repository on the Hub, e.g. USER/wikipedia-ipc (created if missing)")
    push.add_argument("--private", action="store_true", help="create the repository as private")
    push.add_argument("--revision", help="branch to commit to (created if missing; default: main)")
    push.add_argument("--dry-run", action="store_true", help="list the files that would be uploaded and stop")


def parallel_argument(text: str) -> int:
    """1 to MAX_PARALLEL: more connections would be throttled or refused by Wikimedia, not faster."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_PARALLEL:
        raise argparse.ArgumentTypeError(
            f"{text!r}: 1 to {MAX_PARALLEL} files at a time; Wikimedia's dump servers allow each address only a few "
            "connections"
        )
    return int(text)


def workers_argument(text: str) -> int:
    """1 to MAX_WORKERS: a build starts no more processes than its tasks and cores, so more is a typo."""
    try:
        workers = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if workers < 1:
        raise argparse.ArgumentTypeError(f"{workers}: a build needs at least 1 worker")
    if workers > MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"{text}: at most {MAX_WORKERS} workers; a build starts no more processes than its dump parts and the "
            "cores this process may use"
        )
    return workers


def splits_argument(text: str) -> tuple[float, ...]:
    try:
        return parse_splits(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def set_bound_argument(text: str) -> float | str:
    if text.strip().lower() == "none":
        return "none"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a z-score (a number) or none, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"a finite z-score, not {text!r}")
    return value
