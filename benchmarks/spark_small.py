"""A small build on Spark: where its time and CPU go, per kind of process, on one warm ``local[2]`` session.

A small Spark build is a few hundred short tasks, so what each task costs beyond its data decides its time: the
JVM's scheduling and code generation, and in the Python workers what PySpark does around every task. The sample
(gold, silver in three splits, silver unsplit) is built ``--builds`` times on one session, the first build left out
of the figures (the JVM compiling its code); for each build, spread over the stages (``spark_one_task_bytes=0``):
wall seconds, Spark jobs, and CPU seconds of the driver's Python, of the JVM and of the Python workers; the engine's
default for an input this small, one task (:mod:`builder.engines.spark.one_task`), its wall seconds and jobs; and the
local engine's wall seconds for the same build in the same process; then, for the spread build of median wall
time, each stage's seconds on both engines and Spark's jobs per stage (:mod:`benchmarks.stage_profile`).
``--against DIR`` runs the same in another checkout's toolkit, side by side (alternating rounds), and prints the
ratios::

    python benchmarks/spark_small.py --builds 4 --rounds 2 --against ../earlier-checkout

Needs pyspark, Java and psutil.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.stage_profile import stage_table  # noqa: E402

# run in a child process with the toolkit of ``root`` first on the path; prints one JSON line per build
_CHILD = r"""
import copy, dataclasses, json, sys, tempfile, time
sys.path.insert(0, {root!r})
import psutil
import wikipedia_ipc
from builder.config import GOLD, SILVER, BuildOptions
from builder.engines.local import build
from builder.engines.spark import build_spark, spark_session
try:
    from benchmarks.stage_profile import profile_stages, profiled
except ImportError:  # a checkout from before the per-stage profile
    profile_stages, profiled = None, None

def cpu():
    me, seconds = psutil.Process(), {{"driver": 0.0, "jvm": 0.0, "workers": 0.0}}
    for process in [me, *me.children(recursive=True)]:
        try:
            kind = "driver" if process.pid == me.pid else "jvm" if "java" in process.name() else "workers"
            seconds[kind] += sum(process.cpu_times()[:2])
        except psutil.Error:
            pass
    return seconds

session = spark_session(2, {{"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}})
session.sparkContext.setLogLevel("ERROR")
three = dataclasses.replace(SILVER, splits=(0.6, 0.2, 0.2))
configs = [GOLD, three, dataclasses.replace(SILVER, name="whole", splits=())]
# this checkout's default builds the sample in one task (builder.engines.spark.one_task); spread, it runs every stage
one_task = "spark_one_task_bytes" in {{field.name for field in dataclasses.fields(BuildOptions)}}

def spark_build(group, **options):
    session.sparkContext.setJobGroup(group, group)
    if profile_stages is not None:
        profile_stages(group + "/")
    before, started = cpu(), time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        report = build_spark([wikipedia_ipc.SAMPLE_DUMP], configs, scratch + "/out", tagger="perceptron", workers=2,
                             spark=session, show_progress=False, **options)
    wall, after = time.perf_counter() - started, cpu()
    jobs = len(session.sparkContext.statusTracker().getJobIdsForGroup(group))  # jobs outside the stages' groups
    profile = copy.deepcopy(profiled) if profile_stages is not None else None
    jobs += sum(profile["jobs"].values()) if profile is not None else 0
    spent = {{kind: after[kind] - before[kind] for kind in after}}
    return wall, jobs, spent, {{"seconds": report.clock.seconds(), "profile": profile}}

for number in range({builds}):
    wall, jobs, spent, spark = spark_build(f"build-{{number}}", **({{"spark_one_task_bytes": 0}} if one_task else {{}}))
    default = spark_build(f"default-{{number}}")[:2] if one_task else (None, None)
    if profile_stages is not None:
        profile_stages(f"local-{{number}}/")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        report = build([wikipedia_ipc.SAMPLE_DUMP], configs, scratch + "/out", tagger="perceptron", workers=2,
                       show_progress=False)
    local_wall = time.perf_counter() - started
    local = {{"seconds": report.clock.seconds(), "profile": copy.deepcopy(profiled) if profiled else None}}
    print(json.dumps({{"wall": wall, "jobs": jobs, **spent, "local": local_wall, "one_task": default[0],
                      "one_task_jobs": default[1], "stages": {{"spark": spark, "local": local}}}}), flush=True)
session.stop()
"""

KINDS = ("wall", "local", "driver", "jvm", "workers")


def run(root: Path, builds: int) -> list[dict]:
    """The builds of one child process with the toolkit of ``root``."""
    code = _CHILD.format(root=str(root), builds=builds)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the builds with {root} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builds", type=int, default=4, help="builds per session, the first left out (default 4)")
    parser.add_argument("--rounds", type=int, default=1, help="sessions per checkout, alternating (default 1)")
    parser.add_argument("--against", type=Path, help="a checkout of another version, measured side by side")
    args = parser.parse_args(argv)
    if args.builds < 2:
        parser.error("--builds must be 2 or more: the first build warms the JVM and is left out")
    engines = None if args.against is None else args.against / "builder" / "engines"
    if engines is not None and not ((engines / "spark.py").is_file() or (engines / "spark" / "engine.py").is_file()):
        # a checkout from before Spark's package has builder/engines/spark.py; both import build_spark alike
        parser.error(f"--against {args.against}: not a checkout of this toolkit (no builder/engines/spark/)")
    roots = [ROOT] + ([args.against.resolve()] if args.against is not None else [])
    measured: dict[Path, list[dict]] = {root: [] for root in roots}
    for round_ in range(args.rounds):
        for root in roots if round_ % 2 == 0 else roots[::-1]:
            print(f"round {round_ + 1}: {args.builds} builds of the sample with {root}…", file=sys.stderr)
            measured[root] += run(root, args.builds)[1:]
    print("Spread: every stage on the executors; one task: the build as the engine runs an input this small.\n")
    print("| checkout | builds | jobs | wall s | local engine s | driver CPU s | JVM CPU s | Python workers CPU s "
          "| one task: jobs | s | × local |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    medians = {}
    for root, builds in measured.items():
        medians[root] = {kind: statistics.median(build.get(kind, 0.0) for build in builds) for kind in (*KINDS, "jobs")}
        row = " | ".join(f"{medians[root][kind]:.1f}" for kind in KINDS)
        one = "– | – | –"
        if builds[0].get("one_task") is not None:
            wall = statistics.median(build["one_task"] for build in builds)
            jobs = statistics.median(build["one_task_jobs"] for build in builds)
            one = f"{jobs:.0f} | {wall:.1f} | {wall / medians[root]['local']:.1f}×"
        print(f"| {root.name} | {len(builds)} | {medians[root]['jobs']:.0f} | {row} | {one} |")
    for root, builds in measured.items():
        median = sorted(builds, key=lambda build: build["wall"])[len(builds) // 2]
        if "stages" in median and median["stages"]["spark"]["profile"] is not None:
            times = median["wall"] / median["local"]
            title = f"\n{root.name}, its build of median wall time, per stage (Spark {times:.1f}× the local engine):"
            print(stage_table(median["stages"]["local"], median["stages"]["spark"], title))
    if args.against is not None:
        this, other = medians[ROOT], medians[roots[1]]
        ratios = ", ".join(f"{kind} {this[kind] / other[kind]:.2f}×" for kind in KINDS if other[kind])
        print(f"\nthis checkout against {roots[1].name} (medians): {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
