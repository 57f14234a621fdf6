"""How a Déjà build grows with the data: a Conceptual Captions–shaped dataset at two sizes 10× apart, its captions
drawn so that they repeat as Déjà's do, built with ``--configs deja`` by each engine.

Déjà (Chen et al. 2015, §2) sifted 760 million Flickr image–caption pairs down to 4 million edges of 180,000
captions. The dataset is benchmarks/captions_scale.py's (TSV rows of caption and URL, an img2dataset webdataset
folder with 85% of the rows downloaded, one image in twenty a copy), but each caption is one of a few thousand
everyday scenes (a subject, a verb or a preposition, a place: "a dog running on the beach"), drawn by a Zipf law, with
its words varied the ways §2's canonical form forgives (articles, tense, number, "into" for "in"), and one caption in
five a one-off that names nothing visible or speaks of the photographer ("my best day", "summer 2013"). Each size is
built by each engine in a child process; this process samples its memory (benchmarks/scale.py). Printed per engine
and size: the rows, each stage's seconds (extraction: reading and checking the images; grouping: the image stage's
equivalence and the records' selection; tagging: the rules on every sentence; pair filters: the graph), rows/s per
core of the whole build, the peaks, what reached Spark's driver, the kept captions and edges; whether Spark's rows
(a digest), funnel and statistics are the local engine's; then the growth, and the projection for the paper's 760
million pairs on ``--cores`` cores. Usage::

    python benchmarks/deja_scale.py [--rows 2000] [--factor 10] [--engines local spark] [--workers 2] [--cores 64]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.captions_scale import run_build as captions_build  # noqa: E402
from benchmarks.captions_scale import write_cc_dataset  # noqa: E402
from benchmarks.scale import ratio  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "deja_scale"
MB = 1e6
DEJA_PAIRS = 760_000_000  # the image–caption pairs Déjà sifted (§2)
GENERATOR = 1  # the version of the caption generator: a change of what it draws changes the cache's names

SUBJECTS = (
    "dog",
    "cat",
    "bird",
    "horse",
    "child",
    "girl",
    "boy",
    "man",
    "woman",
    "boat",
    "train",
    "car",
    "bee",
    "butterfly",
    "flower",
    "tree",
    "bridge",
    "house",
    "church",
    "tower",
    "cow",
    "duck",
    "swan",
    "bicycle",
)
VERBS = (("run", "running", "runs"), ("sit", "sitting", "sits"), ("fly", "flying", "flies"),
         ("rest", "resting", "rests"), ("walk", "walking", "walks"), ("play", "playing", "plays"),
         ("stand", "standing", "stands"), ("sleep", "sleeping", "sleeps"))  # fmt: skip
PLACES = ("beach", "sky", "road", "river", "lake", "park", "garden", "snow", "grass", "forest", "field", "sea",
          "sunset", "bridge", "water", "city", "window", "mountain", "flower", "tree")  # fmt: skip
ADJECTIVES = ("", "", "", "blue", "old", "little", "red", "white", "big", "beautiful")
ONE_OFFS = ("my best day", "summer 2013", "we had fun", "untitled", "img 2041", "our trip", "me and my friends")


def deja_caption(rng) -> str:  # noqa: ANN001 - a numpy Generator
    """A scene drawn by a Zipf law over a few thousand, worded one of the ways §2's canonical form forgives; one in
    five a one-off that Déjà's rules or its repetition drop."""
    if rng.random() < 0.2:
        return f"{ONE_OFFS[int(rng.integers(len(ONE_OFFS)))]} {int(rng.integers(100000))}"
    scene = min(int(rng.zipf(1.3)), 10**6) - 1
    subject = SUBJECTS[scene % len(SUBJECTS)]
    verb = VERBS[scene // len(SUBJECTS) % len(VERBS)]
    place = PLACES[scene // (len(SUBJECTS) * len(VERBS)) % len(PLACES)]
    adjective = ADJECTIVES[scene // (len(SUBJECTS) * len(VERBS) * len(PLACES)) % len(ADJECTIVES)]
    form = int(rng.integers(3))
    article = ("a", "the", "")[int(rng.integers(3))]
    plural = form == 2 and rng.random() < 0.5
    noun = subject + ("es" if subject.endswith("ch") else "s") if plural else subject
    verb_form = verb[1] if form == 0 else verb[0] if plural else verb[2]
    preposition = ("on", "in", "by", "over")[scene % 4]
    if preposition == "in" and rng.random() < 0.3:
        preposition = "into"
    words = [article if not plural else "", noun, verb_form, preposition, "the", adjective, place]
    return " ".join(word for word in words if word).capitalize()


_CHILD = """  # run after DRIVER_INBOX
import json, sys
sys.path.insert(0, {root!r})
from benchmarks.deja_scale import edges_digest
if {engine!r} == "spark":
    count_what_the_driver_receives()
from builder.config import DEJA, DEJA_PARAPHRASES
from builder.engines.local import build
if {engine!r} == "spark":
    from builder.engines.spark import build_spark as build
CONFIGS = [DEJA]
report = build([{images!r}], CONFIGS, {output!r}, workers={workers}, show_progress=False, captions_tsv={tsv!r})
record = json.load(open({output!r} + "/deja/funnel.json"))
digest = edges_digest({output!r} + "/deja")
print(json.dumps({{"seconds": report.clock.seconds(), "rows": report.rows, "received": received,
                  "funnel": record["funnel"], "deja": record["deja"], "digest": digest, **visual()}}))
"""
_EDGES_ONLY = "def visual():\n    return {{}}\n"
# --visual: deja-paraphrases beside deja (§5), its σ, funnel and rows' digest with the edges'
_VISUAL = """def visual():
    record = json.load(open({output!r} + "/deja-paraphrases/funnel.json"))
    return {{"visual": {{"funnel": record["funnel"][-2:], "pairs": record["deja"]["pairs"],
                        "digest": edges_digest({output!r} + "/deja-paraphrases")}}}}
"""


def edges_digest(folder: str) -> str:
    """The SHA-256 of a deja config's rows in the order its shards hold them (caption, then image, in both
    engines): the same digest, the same rows."""
    import hashlib

    import pyarrow.parquet as pq

    digest = hashlib.sha256()
    for shard in sorted(Path(folder).glob("*.parquet")):
        for row in pq.read_table(shard).to_pylist():
            digest.update(json.dumps(row, sort_keys=True, default=str).encode("utf-8"))
    return digest.hexdigest()


def run_build(dataset: Path, engine: str, workers: int, visual: bool = False) -> dict:
    """One deja build in a child process, its memory sampled here (benchmarks/captions_scale.py's runner); with
    ``visual``, deja-paraphrases beside it."""
    child = _CHILD.replace("CONFIGS = [DEJA]", "CONFIGS = [DEJA, DEJA_PARAPHRASES]") if visual else _CHILD
    head, call, tail = child.partition("report = build(")
    return captions_build(dataset, engine, workers, head + (_VISUAL if visual else _EDGES_ONLY) + call + tail)


def dataset_of(rows: int, arguments: argparse.Namespace) -> Path:
    """The cached dataset of ``rows`` TSV rows (same seed, same bytes)."""
    folder = RESULTS / f"deja-v{GENERATOR}-{rows}r-s{arguments.seed}"
    if not (folder / "dataset.json").exists():
        partial = folder.with_name(folder.name + ".partial")
        if partial.exists():  # a run stopped while writing: only this benchmark writes there
            shutil.rmtree(partial)
        print(f"writing {folder.name}/ …", flush=True)
        held = write_cc_dataset(partial, rows, arguments.seed, 0.85, 1000, caption=deja_caption)
        (partial / "dataset.json").write_text(json.dumps(held))
        partial.replace(folder)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2000, help="TSV rows of the smaller dataset")
    parser.add_argument("--factor", type=int, default=10, help="the larger dataset has this many times the rows")
    parser.add_argument("--engines", nargs="+", default=["local"], choices=["local", "spark"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=64, help="cores of the machine the projection assumes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--visual", action="store_true", help="build deja-paraphrases (§5) beside deja")
    arguments = parser.parse_args(argv)

    sizes = [arguments.rows, arguments.rows * arguments.factor]
    folders = [dataset_of(rows, arguments) for rows in sizes]
    results: dict[tuple[str, int], dict] = {}
    print(
        "| engine | rows | extraction s | grouping s | tagging s | graph s | build s | rows/s/core | driver peak MB "
        "| worker peak MB | to the driver | captions kept | edges |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for engine in arguments.engines:
        for folder, rows in zip(folders, sizes, strict=True):
            run = run_build(folder, engine, arguments.workers, arguments.visual)
            results[engine, rows] = run
            seconds = run["seconds"]
            total = sum(seconds.values())
            received = run["received"]
            to_driver = f"{received['items']:,} items, {received['bytes'] / MB:.2f} MB" if engine == "spark" else "–"
            print(
                f"| {engine} | {rows:,} | {seconds.get('extraction', 0):.1f} | {seconds.get('grouping', 0):.1f} "
                f"| {seconds.get('tagging', 0):.1f} "
                f"| {seconds.get('pair filters', 0):.1f} | {total:.1f} | {rows / total / arguments.workers:.0f} "
                f"| {run['driver_peak'] / MB:.0f} | {run['worker_peak'] / MB:.0f} | {to_driver} "
                f"| {run['deja']['captions']:,} | {run['rows']['deja']:,} |",
                flush=True,
            )
    if arguments.visual:
        print("\ndeja-paraphrases beside deja (§5; its time is in the graph's column):")
        for (engine, rows), run in results.items():
            steps = ", ".join(f"{step['name']}: {step['edges']:,}" for step in run["visual"]["funnel"])
            chosen = run["visual"]["pairs"]
            print(f"- {engine}, {rows:,} rows: {steps}; σ {chosen['sigma']} ({chosen['development']})")
    if len(arguments.engines) == 2:
        for rows in sizes:
            local, spark = results["local", rows], results["spark", rows]
            same = [
                f"the same {what}" if local[key] == spark[key] else f"DIFFERENT {what}"
                for key, what in (("digest", "rows"), ("funnel", "funnel"), ("deja", "statistics"))
            ]
            if arguments.visual:
                same.append("the same pairs" if local["visual"] == spark["visual"] else "DIFFERENT pairs")
            graph = ratio(spark["seconds"].get("pair filters", 0), local["seconds"].get("pair filters", 0))
            print(
                f"- {rows:,} rows: Spark's and the local engine's: {', '.join(same)}; "
                f"whole build Spark/local {ratio(sum(spark['seconds'].values()), sum(local['seconds'].values()))}, "
                f"graph Spark/local {graph}"
            )
    print(f"\nGrowth from {sizes[0]:,} to {sizes[1]:,} rows (×{arguments.factor}):")
    for engine in arguments.engines:
        small, large = results[engine, sizes[0]], results[engine, sizes[1]]
        line = (
            f"- {engine}: build time {ratio(sum(large['seconds'].values()), sum(small['seconds'].values()))}, "
            f"graph time {ratio(large['seconds'].get('pair filters', 0), small['seconds'].get('pair filters', 0))}, "
            f"driver peak {ratio(large['driver_peak'], small['driver_peak'])}"
        )
        if engine == "spark":
            line += f", to the driver {ratio(large['received']['bytes'], small['received']['bytes'])} in bytes"
        print(line)
    for engine in arguments.engines:
        large = results[engine, sizes[1]]
        rate = sizes[1] / sum(large["seconds"].values()) / arguments.workers
        hours = DEJA_PAIRS / (rate * arguments.cores) / 3600
        print(
            f"\nProjection, {engine}: Déjà's {DEJA_PAIRS:,} image–caption pairs at {rate:.0f} rows/s per core (the "
            f"larger dataset's whole build) on {arguments.cores:,} cores: {DEJA_PAIRS:,} / ({rate:.0f} × "
            f"{arguments.cores:,}) s = {hours:,.1f} h. Assumed: every stage spreads over the cores as it does over "
            f"{arguments.workers} here; images of about 400 × 400 pixels read from local disk (checking them is most "
            "of the extraction); captions as short as Flickr's titles (judging a sentence is most of the tagging)."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
