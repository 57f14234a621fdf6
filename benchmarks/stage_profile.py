"""Where a build's time goes, stage by stage, on each engine: seconds per stage and, on Spark, jobs per stage.

The core times its stages (:class:`builder.engines.core.StageClock`); a benchmark's child process calls
:func:`profile_stages` before it builds, and then each stage also names the Spark jobs it runs (a job group per
stage, counted through ``SparkContext.statusTracker()``), and a few parts of the stages are timed apart: the web
build's image stage (inside the extraction), a Wikipedia build's identity map, the split assignment and Spark's
writing of the parts (inside the pair filters; the local engine moves its writer's time to ``writing`` itself).
:func:`stage_table` prints both engines' figures side by side, the Spark/local ratio per stage. Nothing of the
toolkit changes: the parts are timed by wrapping its functions in the child process only.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import time
from collections.abc import Callable, Iterator

__all__ = ["PARTS", "profile_stages", "profiled", "stage_rows", "stage_table"]

# (module, attribute, the part's name): functions (or Class.method) timed apart, inside the stage that calls them
PARTS = (
    ("builder.engines.core", "web_stage", "image stage"),
    ("builder.engines.spark.identity", "SparkIdentity.identity", "identity map"),
    ("builder.filters.identity", "InProcessIdentity.identity", "identity map"),
    ("builder.engines.spark.engine", "route_splits", "split assignment"),
    ("builder.engines.local", "assign_files", "split assignment"),
    ("builder.engines.spark.engine", "write_split", "writing"),
    ("builder.engines.spark.engine", "write_splits", "writing"),
)
ORDER = ("extraction", "image stage", "identity map", "grouping", "tagging", "pair filters", "split assignment")

# what the child reports: each part's seconds, the stage it ran in, and the Spark jobs per stage or part
profiled: dict[str, dict] = {"parents": {}, "jobs": {}}
_open: list[str] = []  # the stage and parts running now, innermost last
_prefix = [""]  # a job group's prefix: a benchmark that runs several builds on one session tells them apart


def _context():  # noqa: ANN202 - a SparkContext or None
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    return SparkContext._active_spark_context  # noqa: SLF001 - the only public way needs a session to exist


def _group(name: str | None) -> None:
    context = _context()
    if context is not None:
        if name is None:
            context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        else:
            group = _prefix[0] + name
            context.setJobGroup(group, group)


def _count(name: str) -> None:
    context = _context()
    if context is not None:  # the group's jobs so far (a stage run per config adds to its group)
        ids = context.statusTracker().getJobIdsForGroup(_prefix[0] + name)
        profiled["jobs"][name] = len(ids)


@contextlib.contextmanager
def _part(name: str) -> Iterator[None]:
    """Run under ``name``'s job group; a part inside a stage has its time recorded apart (the stage's is the
    core clock's)."""
    parent = _open[-1] if _open else None
    _open.append(name)
    _group(name)
    started = time.perf_counter()
    try:
        yield
    finally:
        if parent is not None and parent != name:
            taken = profiled["parents"].setdefault(name, {})
            taken[parent] = taken.get(parent, 0.0) + time.perf_counter() - started
        _count(name)
        _open.pop()
        _group(_open[-1] if _open else None)


def _wrapped(function: Callable, name: str) -> Callable:
    @functools.wraps(function)
    def timed(*arguments: object, **options: object) -> object:
        with _part(name):
            return function(*arguments, **options)

    return timed


def profile_stages(prefix: str = "") -> None:
    """In the child, before a build: every stage of the core's clock and the :data:`PARTS` name their Spark jobs
    and are timed. ``prefix`` names the build's job groups (called again per build on one session)."""
    from builder.engines.core import StageClock

    _prefix[0] = prefix
    profiled["parents"].clear()
    profiled["jobs"].clear()
    if getattr(StageClock, "_profiled", False):
        return
    stage = StageClock.stage

    @contextlib.contextmanager
    def named(self: StageClock, name: str) -> Iterator[None]:
        with stage(self, name), _part(name):
            yield

    StageClock.stage = named  # type: ignore[method-assign]
    StageClock._profiled = True  # type: ignore[attr-defined]
    for module_name, attribute, name in PARTS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # an engine whose library is not installed
            continue
        owner, _, method = attribute.rpartition(".")
        holder = getattr(module, owner) if owner else module
        setattr(holder, method, _wrapped(getattr(holder, method), name))


def stage_rows(seconds: dict[str, float], profile: dict[str, dict]) -> dict[str, tuple[float, int | None]]:
    """Seconds and Spark jobs per stage and part: a part's time taken out of the stage it ran in."""
    spent = dict(seconds)
    for part, parents in profile["parents"].items():
        for parent, taken in parents.items():
            spent[parent] = spent.get(parent, 0.0) - taken
        spent[part] = spent.get(part, 0.0) + sum(parents.values())
    names = [name for name in ORDER if name in spent] + [name for name in spent if name not in ORDER]
    jobs = profile.get("jobs", {})
    return {name: (spent[name], jobs.get(name)) for name in names}


def stage_table(local: dict | None, spark: dict | None, title: str) -> str:
    """A markdown table of the stages' seconds on both engines (each a child's ``seconds`` and ``profile``), the
    ratio and Spark's jobs per stage."""
    engines = {"local": local, "spark": spark}
    rows = {engine: stage_rows(run["seconds"], run["profile"]) for engine, run in engines.items() if run}
    names: list[str] = []
    for table in rows.values():
        names += [name for name in table if name not in names]
    names = [name for name in ORDER if name in names] + [name for name in names if name not in ORDER]
    lines = [f"{title}", "", "| stage | local s | spark s | spark/local | spark jobs |", "|---|---:|---:|---:|---:|"]
    totals = {engine: 0.0 for engine in rows}
    for name in names:
        cells = []
        for engine in ("local", "spark"):
            value = rows.get(engine, {}).get(name)
            cells.append(f"{value[0]:.1f}" if value else "–")
            totals[engine] = totals.get(engine, 0.0) + (value[0] if value else 0.0)
        local_s, spark_s = (rows.get(engine, {}).get(name, (0.0, None))[0] for engine in ("local", "spark"))
        relative = f"{spark_s / local_s:.1f}×" if local_s > 0.05 and "spark" in rows and "local" in rows else "–"
        jobs = rows.get("spark", {}).get(name, (0.0, None))[1]
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {relative} | {'–' if jobs is None else jobs} |")
    all_jobs = sum(jobs or 0 for _, jobs in rows.get("spark", {}).values())
    both = "local" in rows and "spark" in rows and totals["local"]
    relative = f"{totals['spark'] / totals['local']:.1f}×" if both else "–"
    local_total = f"{totals['local']:.1f}" if "local" in rows else "–"
    spark_total = f"{totals['spark']:.1f}" if "spark" in rows else "–"
    lines.append(f"| **build** | {local_total} | {spark_total} | {relative} | {all_jobs if 'spark' in rows else '–'} |")
    return "\n".join(lines)
