"""How the cost of a gold+silver build grows with the dump: time and memory per stage, measured.

The full English dump cannot be fetched here, so this benchmark writes Wikipedia-shaped
``pages-articles-multistream`` dumps at three sizes (``--base-mb`` × ``--factors``, by
default 200 MB, 600 MB and 2 GB of XML; :mod:`benchmarks.synthetic_dump` says how they
are shaped), builds gold and silver from each with 1 and 2 workers, and prints per size
and worker count:

* wall time per stage (extraction, grouping, tagging, pair filters, writing), from the
  build's own stage clock;
* peak memory per stage: the build runs in a child process, and this one samples the
  proportional set size (PSS) of the child and all its worker processes every 0.1 s;
* peak temporary disk (the build's work folder), throughput in MB of bz2 per second;
* each stage's growth between sizes, and a projection for the full enwiki dump with its
  arithmetic.

Dumps are cached under ``benchmarks/results/scale/`` (same seed and size, same bytes), so
a second run only builds. ``--bytes-per-reference 1000`` writes image-dense dumps (one
reference per kB of XML instead of the real dump's 12 kB); ``--against DIR`` builds each
dump a second time with the toolkit of another checkout (an earlier commit), side by side
in the same run, so that a change is measured under the same load. Usage::

    python benchmarks/scale.py [--base-mb 200] [--factors 1 3 10] [--workers 1 2] [--seed 0]
                               [--bytes-per-reference 12000] [--against ../earlier-checkout]
                               [--engines local spark]

``--engines local spark`` builds each dump on both engines, side by side, and prints each stage's seconds on both
with Spark's jobs (:mod:`benchmarks.stage_profile`) and Spark's rate against the local engine's, per core.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.stage_profile import stage_table  # noqa: E402
from benchmarks.synthetic_dump import XML_BYTES_PER_REFERENCE, Shape, write_dump  # noqa: E402
from builder.engines.core import STAGES  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "scale"
# The size of an enwiki pages-articles-multistream dump (about 22 GB of bz2 in 2022–2024); --enwiki-gb changes it.
ENWIKI_GB = 22.0
MB = 1e6
SAMPLE_SECONDS = 0.1

# The child: one build, its stage spans and counts as JSON on the last line of stdout.
_CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from benchmarks.stage_profile import profile_stages, profiled
profile_stages()
from builder.config import GOLD, SILVER
from builder.engines.local import build
if {engine!r} == "spark":
    from builder.engines.spark import build_spark as build
report = build([{dump!r}], [GOLD, SILVER], {output!r}, tagger="perceptron", workers={workers},
               work_dir={work!r}, show_progress=False)
print(json.dumps({{
    "spans": report.clock.spans,
    "seconds": report.clock.seconds(),
    "rows": report.rows,
    "references": report.extraction.extract.references,
    "pages": report.extraction.read.pages,
    "profile": profiled,
}}))
"""


class Sampler(threading.Thread):
    """Memory of a process tree and the size of a folder, sampled until stopped.

    Memory is the proportional set size (PSS: pages shared by forked workers count once,
    split between them), so the sum over the tree is what the build really holds.
    """

    def __init__(self, pid: int, folder: Path) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.folder = folder
        self.samples: list[tuple[float, int]] = []
        self.own_peak = 0  # the root process alone (a build's driver), beside the tree's sum
        self.worker_peak = 0  # the largest of any one process under it (a worker)
        self.own: list[tuple[float, int]] = []
        self.peak_disk = 0
        self.done = threading.Event()

    def run(self) -> None:
        ticks = 0
        while not self.done.is_set():
            started = time.perf_counter()
            self.samples.append((time.time(), self._tree_rss()))
            if ticks % 10 == 0:
                self.peak_disk = max(self.peak_disk, _folder_bytes(self.folder))
            ticks += 1
            # a process's PSS makes the kernel walk its page tables (25 ms for a JVM of 1 GB, 45 ms for a Python
            # worker of 1.5 GB): a Spark build's tree took 150 ms per sample, and sampling every 0.1 s took most of
            # a core from the build it measured, more from Spark's than from the local engine's smaller tree. The
            # sampler now waits at least nine times what its last sample took: at most a tenth of a core.
            self.done.wait(max(SAMPLE_SECONDS, 9 * (time.perf_counter() - started)))

    def _tree_rss(self) -> int:
        total = 0
        try:
            processes = [self.process, *self.process.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0
        for process in processes:
            try:
                pss = process.memory_full_info().pss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            total += pss
            if process.pid == self.process.pid:
                self.own_peak = max(self.own_peak, pss)
                self.own.append((time.time(), pss))
            else:
                self.worker_peak = max(self.worker_peak, pss)
        return total

    def peak_between(self, start: float, end: float, own: bool = False) -> int:
        """The peak between two instants, of the tree or (``own``) of the root process alone."""
        inside = [rss for moment, rss in (self.own if own else self.samples) if start <= moment <= end]
        return max(inside, default=0)


# The start of a child's code that counts what a Spark driver receives from the executors: the methods that bring
# rows to it (RDD and DataFrame collect, RDD.toLocalIterator) wrapped, each row's pickled size added up.
DRIVER_INBOX = """
import pickle
received = {"items": 0, "bytes": 0}
def count_what_the_driver_receives():
    from pyspark import RDD
    from pyspark.sql import DataFrame
    def counted(method):
        def collect(self, *arguments, **options):
            rows = method(self, *arguments, **options)
            received["items"] += len(rows)
            received["bytes"] += len(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
            return rows
        return collect
    local_iterator = RDD.toLocalIterator
    def counted_iterator(self, *arguments, **options):
        for row in local_iterator(self, *arguments, **options):
            received["items"] += 1
            received["bytes"] += len(pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL))
            yield row
    RDD.collect, DataFrame.collect = counted(RDD.collect), counted(DataFrame.collect)
    RDD.toLocalIterator = counted_iterator
"""


def ratio(large: float, small: float, digits: int = 1) -> str:
    """How many times the larger size's figure is the smaller's."""
    return f"×{large / small:.{digits}f}" if small else "–"


def _folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                continue
    return total


ROOT = Path(__file__).resolve().parent.parent


def sampled_child(code: str, cwd: Path | str, folder: Path) -> tuple[int, str, str, float, Sampler]:
    """Python ``code`` run in a child process whose memory (and ``folder``'s size) this one samples meanwhile:
    its exit code, stdout, stderr, wall seconds and the sampler."""
    started = time.time()
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd
    )
    sampler = Sampler(child.pid, folder)
    sampler.start()
    stdout, stderr = child.communicate()
    sampler.done.set()
    sampler.join()
    return child.returncode, stdout, stderr, time.time() - started, sampler


def run_build(shape: Shape, workers: int, root: Path = ROOT, engine: str = "local") -> dict:
    """One gold+silver build in a child process (with the toolkit of ``root``, on ``engine``), its memory and disk
    sampled here (a Spark build's work folder is Spark's own: its disk is not sampled)."""
    with tempfile.TemporaryDirectory(prefix="wikipedia-ipc-scale-") as scratch:
        work = Path(scratch) / "work"
        code = _CHILD.format(
            root=str(root),
            dump=str(shape.path),
            output=str(Path(scratch) / "out"),
            workers=workers,
            work=str(work),
            engine=engine,
        )
        code_returned, stdout, _, wall, sampler = sampled_child(code, root, work)
        if code_returned != 0:
            raise RuntimeError(f"{engine} build of {shape.path.name} with {workers} workers failed ({code_returned})")
    result = json.loads(stdout.strip().splitlines()[-1])
    peaks: dict[str, int] = {}
    for name, start, end in result["spans"]:
        peaks[name] = max(peaks.get(name, 0), sampler.peak_between(start, end))
    result.update(wall=wall, peaks=peaks, peak=max((rss for _, rss in sampler.samples), default=0))
    result.update(disk=sampler.peak_disk, workers=workers, root=root, engine=engine)
    return result


def _gb(value: int) -> str:
    return f"{value / 1e9:.2f}"


def print_size(shape: Shape, runs: list[dict]) -> None:
    print(
        f"\n### {shape.xml_bytes / MB:,.0f} MB XML, {shape.bz2_bytes / MB:,.0f} MB bz2: {shape.pages:,} pages, "
        f"{shape.references:,} references, {shape.images:,} images ({shape.references / shape.images:.2f} per image)\n"
    )
    header = "| workers | " + " | ".join(f"{stage} s" for stage in STAGES) + " | total s | MB bz2/s "
    header += "| " + " | ".join(f"{stage} GB" for stage in STAGES) + " | peak GB | temp disk MB | gold | silver |"
    print(header)
    print("|" + "---:|" * (header.count("|") - 1))
    for run in runs:
        seconds = [run["seconds"].get(stage, 0.0) for stage in STAGES]
        peaks = [run["peaks"].get(stage, 0) for stage in STAGES]
        against = "" if run["root"] == ROOT else f" ({run['root'].name})"
        engine = "" if run["engine"] == "local" else f" {run['engine']}"
        print(
            f"| {run['workers']}{engine}{against} | "
            + " | ".join(f"{value:.1f}" for value in seconds)
            + f" | {run['wall']:.1f} | {shape.bz2_bytes / MB / run['wall']:.2f} | "
            + " | ".join(_gb(value) for value in peaks)
            + f" | {_gb(run['peak'])} | {run['disk'] / MB:,.0f} | {run['rows'].get('gold', 0):,} "
            f"| {run['rows'].get('silver', 0):,} |"
        )


def print_growth(shapes: list[Shape], results: dict[tuple[int, int], dict], workers: int, engine: str) -> None:
    print(f"\n### Growth between sizes ({engine}, {workers} workers): time and peak memory, against the bz2 bytes\n")
    print("| from → to | bz2 × | " + " | ".join(STAGES) + " | total | peak memory |")
    print("|---|---:|" + "---:|" * (len(STAGES) + 2))
    for small, large in zip(shapes, shapes[1:], strict=False):
        a, b = results[(small.bz2_bytes, workers)], results[(large.bz2_bytes, workers)]
        cells = [_ratio(b["seconds"].get(stage, 0.0), a["seconds"].get(stage, 0.0)) for stage in STAGES]
        sizes = f"{small.xml_bytes / MB:,.0f} → {large.xml_bytes / MB:,.0f} MB"
        print(
            f"| {sizes} | {large.bz2_bytes / small.bz2_bytes:.2f} | "
            + " | ".join(cells)
            + f" | {_ratio(b['wall'], a['wall'])} | {_ratio(b['peak'], a['peak'])} |"
        )


def _ratio(after: float, before: float) -> str:
    return f"{after / before:.2f}" if before > 0 else "–"


def print_projection(
    shapes: list[Shape], results: dict[tuple[int, int], dict], workers: int, enwiki_gb: float, engine: str
) -> None:
    """Full enwiki from the two largest builds: per stage, a fixed cost plus a rate per bz2 byte.

    Fitting the line through two sizes keeps start-up costs (loading a tagger in every
    worker, starting processes) from being multiplied with the dump size.
    """
    small, large = shapes[-2], shapes[-1]
    a, b = results[(small.bz2_bytes, workers)], results[(large.bz2_bytes, workers)]
    target = enwiki_gb * 1e9
    print(
        f"\n### Projection ({engine}): full enwiki pages-articles-multistream, {enwiki_gb:.1f} GB bz2, "
        f"{workers} workers\n"
    )
    print(
        f"Per stage: rate = (t({large.bz2_bytes / MB:,.0f} MB) − t({small.bz2_bytes / MB:,.0f} MB)) / "
        f"{(large.bz2_bytes - small.bz2_bytes) / MB:,.0f} MB; projected = t({large.bz2_bytes / MB:,.0f} MB) + "
        f"rate × ({target / MB:,.0f} − {large.bz2_bytes / MB:,.0f}) MB\n"
    )
    total = 0.0
    for stage in STAGES:
        before, after = a["seconds"].get(stage, 0.0), b["seconds"].get(stage, 0.0)
        rate = max(0.0, (after - before) / (large.bz2_bytes - small.bz2_bytes) * MB)
        projected = after + rate * (target - large.bz2_bytes) / MB
        total += projected
        print(
            f"  {stage:<13} {after:8.1f} s + {rate:.4f} s/MB × {(target - large.bz2_bytes) / MB:,.0f} MB = "
            f"{projected / 60:7.1f} min"
        )
    print(f"  total                                                   = {total / 60:7.1f} min")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-mb", type=float, default=200, help="XML size of the smallest dump, in MB")
    parser.add_argument("--factors", type=float, nargs="+", default=[1, 3, 10], help="sizes as multiples of the base")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to build with")
    parser.add_argument("--seed", type=int, default=0, help="seed of the dump generator")
    parser.add_argument("--cache", type=Path, default=RESULTS, help="where the generated dumps are kept")
    parser.add_argument("--enwiki-gb", type=float, default=ENWIKI_GB, help="bz2 size of the dump to project to")
    parser.add_argument(
        "--bytes-per-reference", type=int, default=XML_BYTES_PER_REFERENCE, help="XML per image reference (density)"
    )
    parser.add_argument("--against", type=Path, help="a checkout of another version, built side by side")
    parser.add_argument(
        "--engines", nargs="+", default=["local"], choices=["local", "spark"], help="engines to build with"
    )
    args = parser.parse_args(argv)
    if args.against is not None and not (args.against / "builder" / "engines" / "local.py").is_file():
        parser.error(f"--against {args.against}: not a checkout of this toolkit (no builder/engines/local.py)")

    shapes = []
    for factor in args.factors:
        target = int(args.base_mb * factor * MB)
        started = time.perf_counter()
        shape = write_dump(args.cache, target, args.seed, bytes_per_reference=args.bytes_per_reference)
        print(f"dump {shape.path.name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        shapes.append(shape)
    results: dict[str, dict[tuple[int, int], dict]] = {engine: {} for engine in args.engines}
    for shape in shapes:
        runs = []
        for workers in args.workers:
            for engine in args.engines:
                print(f"building {shape.path.name} with {workers} worker(s) on {engine}…", file=sys.stderr)
                run = run_build(shape, workers, engine=engine)
                results[engine][(shape.bz2_bytes, workers)] = run
                runs.append(run)
                if args.against is not None:
                    print(f"building {shape.path.name} with {workers} worker(s), {args.against}…", file=sys.stderr)
                    runs.append(run_build(shape, workers, args.against.resolve(), engine))
        print_size(shape, runs)
        if len(args.engines) == 2:
            print_engines(shape, results, max(args.workers))
    for engine in args.engines:
        for workers in args.workers:
            print_growth(shapes, results[engine], workers, engine)
        if len(shapes) >= 2:
            print_projection(shapes, results[engine], max(args.workers), args.enwiki_gb, engine)
    return 0


def print_engines(shape: Shape, results: dict[str, dict[tuple[int, int], dict]], workers: int) -> None:
    """Both engines' stages side by side for one dump, and Spark's rate against the local engine's."""
    local, spark = (results[engine][(shape.bz2_bytes, workers)] for engine in ("local", "spark"))
    title = f"\nWhere the time goes, {shape.bz2_bytes / MB:,.0f} MB bz2, {workers} workers (seconds per stage):"
    print(stage_table(local, spark, title))
    rates = {
        engine: shape.bz2_bytes / MB / sum(run["seconds"].values()) / workers
        for engine, run in (("local", local), ("spark", spark))
    }
    print(
        f"\nThe whole build (every stage), MB of bz2 per second per core: local {rates['local']:.3f}, "
        f"spark {rates['spark']:.3f}; Spark at {rates['spark'] / rates['local']:.2f}× the local engine's rate"
    )


if __name__ == "__main__":
    sys.exit(main())
