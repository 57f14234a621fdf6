"""The commands: ``download``, ``build`` and ``push``, each a function of the parsed command line that returns the
exit code (0 done, 2 refused or failed with a message, 3 dump parts missing, 130 interrupted).

The parser is :mod:`builder.cli.parser`; what the options do to the configs and the build is
:mod:`builder.cli.options`, the one place that maps them. Heavy modules (the engines, datasets, DuckDB, PySpark) are
imported inside the commands, so that ``--help`` and a refused option answer at once.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from builder.cli.options import build_options, dumps_and_languages, pipeline_configs, refuse_unused_options, web_inputs
from builder.cli.parser import command_parser, program_name
from builder.cli.summary import print_summary
from builder.common import FolderLock, OutputError, plural
from builder.config import preset
from builder.filters.tagging import TaggerUnavailable
from builder.publish.hub import HubError, push_to_hub
from builder.sources.download import DownloadError, Network, download, human_size, plan_download
from builder.sources.files import DumpError
from builder.sources.sqldump import SqlDumpError

__all__ = ["DEFAULT_CONFIGS", "SAMPLE_CONFIGS", "main", "sample_runs"]

DEFAULT_CONFIGS = ("gold", "silver")  # of a build of given dumps
SAMPLE_CONFIGS = ("gold", "silver", "bronze")  # of the sample build: every level of the paper


def main(argv: Sequence[str] | None = None) -> int:
    arguments = command_parser().parse_args(argv)
    if arguments.command == "push":
        return _push(arguments)
    if arguments.command == "download":
        return _download(arguments)
    return _build(arguments)


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
    print(f"Build from it with: {program_name()} build {folder}")
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
    try:  # before any input is read: an option that no config of the command takes is not dropped silently
        refuse_unused_options(arguments, _every_config(runs))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if arguments.score:
        return _build_and_score(arguments, runs)
    for dumps, names in runs:
        code = _build_once(arguments, dumps, names, _every_config(runs))
        if code:
            return code
    return 0


def _every_config(runs: Sequence[tuple[list[str], list[str]]]) -> list[str]:
    return [name for _, names in runs for name in names]


def _build_and_score(arguments: argparse.Namespace, runs: Sequence[tuple[list[str], list[str]]]) -> int:
    """``build --score``: build into a folder of the toolkit's own beside the output, score it into the output
    (published as a build is), and remove the unscored copy. The scorer is checked before any dump is read."""
    import shutil
    import tempfile

    from builder.storage import is_url
    from metrics.cli import NothingToScore, check_scoring, score_folder
    from metrics.cli import parser as score_parser
    from metrics.cli import print_summary as print_scores
    from metrics.profiles import ModelUnavailable

    if is_url(arguments.output):
        print(
            f"error: --score writes a local folder, and {arguments.output} is on an object store; build there "
            "without --score, or score into a local folder",
            file=sys.stderr,
        )
        return 2

    configs = [preset(name) for _, names in runs for name in names]
    unpaired = [config.name for config in configs if config.references or config.deja == "captions"]
    if len(unpaired) == len(configs):
        print(
            f"error: --score scores pairs, and {', '.join(unpaired)} hold{'s' if len(unpaired) == 1 else ''} none "
            "(references: a row per image reference; deja: captions in repetition); build without --score, or add "
            "a config of pairs (gold, silver, bronze, deja-paracaption, ...)",
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
    except (ModelUnavailable, ValueError) as error:
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
            code = _build_once(building, dumps, names, _every_config(runs))
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
        print_scores(name, scores)
    print(f"Wrote {output}/ (scored) — load it with datasets.load_dataset({str(output.resolve())!r}, CONFIG)")
    return 0


def _build_once(
    arguments: argparse.Namespace, given: Sequence[str], names: Sequence[str], command: Sequence[str]
) -> int:
    """One run of ``build``: ``names`` over the inputs ``given``; ``command`` names the configs of every run."""
    from builder.engines.local import build
    from builder.engines.spark import build_spark
    from builder.lang.segmenters import WordCounterUnavailable
    from builder.storage import StorageError

    web = any(preset(name).web for name in names)
    if all(preset(name).records for name in names):  # configs of records alone read what they are given
        from builder.sources.kinds import input_kind

        web = bool(given) and all(input_kind(item) in ("web", "dataset") for item in given)
    try:
        read = web_inputs if web else dumps_and_languages
        dumps, languages = read(given, arguments.language)
    except (DownloadError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        configs = pipeline_configs(arguments, names, command)
        options = build_options(arguments, languages)
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
    print_summary(report, getattr(arguments, "scored_into", None))
    extraction = report.extraction
    if extraction.failures:
        print(f"\n{len(extraction.failures)} dump part(s) failed and are missing from the output:", file=sys.stderr)
        for failure in extraction.failures:
            print(f"  {failure}", file=sys.stderr)
        return 3
    return 0


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
