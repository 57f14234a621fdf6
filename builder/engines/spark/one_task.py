"""A build too small for the cluster: the Spark engine runs it as one task, the local engine's stages on one
executor core, instead of spreading it.

A spread build pays the cluster's fixed costs whatever its size: about twenty jobs for three configs, each with its
scheduling and its Python workers' round trips. On the sample (three configs, 6.5 kB) that was 6.9 s on
``local[2]`` against 1.1 s for the local engine (issue 48). Below :data:`ONE_TASK_BYTES` of input, a spread build
costs more than one core reading it all, so :func:`builder.engines.spark.engine.build_spark` runs
:func:`builder.engines.core.run` with the local engine in one task: the rows are the local engine's by construction,
the output is written by that executor where the spread build's executors would write it, and only the report comes
back to the driver. Only local files qualify (the input's size is known before the build, without reading a
listing or a remote store): a URL, a folder or a ``*.paths.gz`` listing is always spread.

``BuildOptions.spark_one_task_bytes`` sets the bound for a build; ``0`` spreads every build.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from builder.config import BuildOptions, PipelineConfig
from builder.engines.core import BuildReport, run
from builder.engines.spark.session import spark_session
from builder.filters.chain import FilterChain
from builder.sources.kinds import LISTING_SUFFIX
from builder.storage import has_scheme

__all__ = ["ONE_TASK_BYTES", "build_in_one_task", "one_task_bound", "one_task_input"]

# input bytes at most that a Spark build runs as one task: 8 MiB of a Wikipedia dump's bz2 is about 3,000 pages
# read in seconds on one core, and a crawl of that size about 1,200 pages; the sample's three configs spread over
# local[2] were 20 jobs in 6.9 s (a crawl of 13 MB: 24 s spread, about 15 s on one core)
ONE_TASK_BYTES = 8 * 2**20


def _local_files(options: BuildOptions) -> list[str | Path]:
    """The files besides the dumps that a build reads."""
    named = (options.captions_tsv, options.template_parameters, options.inline_templates)
    return [*options.image_tables, *(file for file in named if file is not None)]


def one_task_bound(options: BuildOptions) -> int:
    """The input bytes at most that a build runs as one task: its option's, else :data:`ONE_TASK_BYTES`."""
    return ONE_TASK_BYTES if options.spark_one_task_bytes is None else options.spark_one_task_bytes


def one_task_input(dumps: Sequence[str | Path], options: BuildOptions) -> int | None:
    """The bytes a build reads, when it is small enough for one task (its inputs all local files, the tagger given
    by name, their sum within the bound); else ``None``, and the build is spread."""
    bound = one_task_bound(options)
    if bound <= 0 or not dumps or not isinstance(options.tagger, str):
        return None
    total = 0
    for given in [*dumps, *_local_files(options)]:
        text = os.fspath(given)
        if has_scheme(text) or text.endswith(LISTING_SUFFIX) or not Path(text).is_file():
            return None
        total += Path(text).stat().st_size
        if total > bound:
            return None
    return total


def _absolute(location: str | Path | None) -> str | Path | None:
    """A local path as the executor's process finds it, whatever its working folder; a URL (or nothing) as it is."""
    return location if location is None or has_scheme(os.fspath(location)) else Path(location).resolve()


def _absolute_languages(languages: str | Mapping[str, str] | None) -> str | dict[str, str] | None:
    """``--language`` per dump keyed as :func:`_absolute` gives the task its dumps: a relative key would be
    resolved in the executor's working folder, not the driver's."""
    if not isinstance(languages, Mapping):
        return languages
    return {os.fspath(_absolute(dump)): code for dump, code in languages.items()}


@dataclasses.dataclass
class _Portable:
    """A :class:`BuildReport` as it crosses from the task to the driver: each config's chain as its config and
    funnel (the chain's steps are functions, rebuilt from the config)."""

    report: BuildReport
    chains: dict[str, tuple[PipelineConfig, object]]

    @classmethod
    def of(cls, report: BuildReport) -> _Portable:
        chains = {name: (chain.config, chain.funnel) for name, chain in report.funnels.items()}
        return cls(dataclasses.replace(report, funnels={}), chains)

    def restored(self) -> BuildReport:
        funnels = {}
        for name, (config, funnel) in self.chains.items():
            chain = FilterChain(config)
            for row, counted in zip(chain.funnel.rows, funnel.rows, strict=True):  # type: ignore[attr-defined]
                vars(row).update(vars(counted))  # the chain's steps hold these rows
            funnels[name] = chain
        return dataclasses.replace(self.report, funnels=funnels)


def _portable_error(error: BaseException) -> BaseException:
    """The build's error as the driver can raise it again: itself, or, when it does not survive pickling, a
    RuntimeError with its type and message."""
    try:
        pickle.loads(pickle.dumps(error))  # noqa: S301 - made here
    except Exception:  # noqa: BLE001 - any failure to cross: the message still does
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error


def _build_in_task(arguments: tuple) -> bytes:
    """On the executor: the local engine's build of the arguments, its report or its error, and the warnings it
    gave (which the executor's log would otherwise keep from the user)."""
    from builder.engines.local import LocalEngine

    dumps, configs, output, options = arguments
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # a worker that built before has seen them: each is said again
        try:
            outcome: tuple[str, object] = ("report", _Portable.of(run(LocalEngine(), dumps, configs, output, options)))
        except Exception as error:  # noqa: BLE001 - raised again on the driver
            outcome = ("error", _portable_error(error))
    said = list(dict.fromkeys((warning.category, str(warning.message)) for warning in caught))
    return pickle.dumps((outcome, said), pickle.HIGHEST_PROTOCOL)


def build_in_one_task(
    spark,  # noqa: ANN001 - a pyspark.sql.SparkSession, or None
    dumps: Sequence[str | Path],
    configs: Sequence[PipelineConfig],
    output: str | Path,
    options: BuildOptions,
    size: int,
) -> BuildReport:
    """Build with the local engine's stages in one task of ``spark`` (without it, of a session made and stopped
    here, as the spread build's); ``size``: the input's bytes, said when progress is shown. The build's errors and
    warnings are raised and given here, as the local engine gives them."""
    if options.show_progress:
        print(
            f"wikipedia-ipc: {size:,} bytes of input, within the one-task bound of {one_task_bound(options):,}: built "
            "in one Spark task by the local engine's stages (spark_one_task_bytes=0 spreads it)",
            file=sys.stderr,
        )
    inside = dataclasses.replace(
        options,
        workers=1,  # the task's one core
        languages=_absolute_languages(options.languages),
        image_tables=tuple(_absolute(table) for table in options.image_tables),
        captions_tsv=_absolute(options.captions_tsv),
        template_parameters=_absolute(options.template_parameters),
        inline_templates=_absolute(options.inline_templates),
        work_dir=None,  # the local engine's; a Spark build has none
        resume=False,
        show_progress=False,  # an executor's stderr is its log
    )
    arguments = ([_absolute(dump) for dump in dumps], list(configs), _absolute(output), inside)
    session = spark if spark is not None else spark_session(options.workers)
    try:
        (payload,) = session.sparkContext.parallelize([arguments], 1).map(_build_in_task).collect()
    finally:
        if spark is None:
            session.stop()
    outcome, said = pickle.loads(payload)  # noqa: S301 - the task's own
    for category, message in said:
        warnings.warn(message, category, stacklevel=2)
    kind, value = outcome
    if kind == "error":
        raise value
    report = value.restored()  # its output named as the local engine and a spread build name it: as given
    return dataclasses.replace(report, output=report.output if has_scheme(os.fspath(output)) else Path(output))
