"""Draw the paraphrase study's candidate pairs from builds of real Wikipedia pages.

Every source below is built with the paper's presets and with relaxed caption filters (to find
candidates where the presets find few); each pair is reported once, under the first config (in the
order given, strictest first) that holds it (``reaches``: ``gold``, ``silver``, ``bronze`` or a relaxed
config, whose settings are in ``RELAXED``), with the strictest caption rule its captions passed in any
config (``rule``). English and the other editions' same-language pairs are taken whole (there are
few); the cross-lingual pairs of the 120 editions' "Berlin" excerpts are drawn at random (seeded)
among those of languages the labeller reads (``READ``). Writes ``candidates.tsv`` beside this file::

    python tests/data/paraphrases/draw_pairs.py [--pages FILE ...] [--history FILE ...]

The history is the edit history of "Anarchism" (15,180 revisions, 2001-2010) that ships beside this
file as ``enwiki-anarchism-history.xml.lzma`` (see README.md); it is decompressed to a temporary file.

Crowd captions (``crowd/``, cut by ``make_crowd_excerpts.py``): COCO's and Flickr8k's five captions of an image,
each by another crowd worker; every image of the excerpts gives one pair, its two captions drawn with
``random.Random(f"{SEED}:{image}")`` among the image's captions in file order (``crowd_pairs``). No build holds
them (``reaches`` is ``crowd``); ``rule`` is the strictest caption rule both pass, by the toolkit's tagger.

``labelled_pairs.tsv`` is this file with the hand labels added (see GUIDELINE.md).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import hashlib
import json
import lzma
import random
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from builder.config import BRONZE, CROSSLINGUAL, GOLD, SILVER, BuildOptions, PipelineConfig  # noqa: E402
from builder.engines.local import build  # noqa: E402
from builder.filters.captions import classify  # noqa: E402
from builder.lang.segmenters import WordCounterUnavailable  # noqa: E402
from metrics.paraphrase import RULE_LEVELS, image_references, pair_key  # noqa: E402

HISTORY = HERE / "enwiki-anarchism-history.xml.lzma"
CROWD = HERE / "crowd"
SEED = 30
CROSSLINGUAL_DRAWN = 200
# Languages whose captions the labeller reads well enough to judge a message (ISO 639 / wiki codes).
READ = frozenset(
    "en de fr es it pt nl ca gl ro sv da no nn is af fy lb li nds bar als sco la ia eo io vo pl cs sk sl hr sr sh bs "
    "ru uk be bg mk fi et hu tr az id ms jv tl war ceb vi el ast an oc lmo nap pms scn vec br cy ga gd".split()
)
RELAXED_WORDS = 3
# The labelling rounds: the second labeller's fifth is drawn within each (GUIDELINE.md), so that a round that adds
# pairs leaves the earlier rounds' double labels as they were.
ROUNDS = {
    "enwiki": 1,
    "enwiki-history": 1,
    "minidumps-crosslingual": 1,
    "coco-crowd": 2,
    "flickr8k-crowd": 2,
}
COLUMNS = (
    "pair",
    "source",
    "reaches",
    "rule",
    "language1",
    "language2",
    "image",
    "page1",
    "page2",
    "revision1",
    "revision2",
    "same_page",
    "source1",
    "source2",
    "identity",
    "references",
    "sentence1",
    "sentence2",
)


def relaxed(base: PipelineConfig, name: str, min_words: int = RELAXED_WORDS) -> PipelineConfig:
    """The preset with the caption filters relaxed: no caption rule, fewer words, galleries mined too."""
    return dataclasses.replace(
        base,
        name=name,
        caption_rule="none",
        min_words=min_words,
        sources=("link", "template", "gallery"),
    )


# Bronze counting each wording of a caption once (``--history-references first_seen``): a history of 15,000
# revisions counts an image kept for years 15,000 times under the preset's per-revision counting, far past 180.
BRONZE_FIRST_SEEN = dataclasses.replace(BRONZE, name="bronze-first-seen", history_references="first_seen")
# The same with gold's caption rule: which history pairs gold's caption filters (steps 3-5) would keep.
BRONZE_SENTENCE = dataclasses.replace(BRONZE_FIRST_SEEN, name="bronze-sentence", caption_rule="sentence")
RELAXED = {
    "relaxed": relaxed(SILVER, "relaxed"),
    "relaxed-bronze": relaxed(BRONZE_FIRST_SEEN, "relaxed-bronze"),
    "relaxed-crosslingual": relaxed(CROSSLINGUAL, "relaxed-crosslingual", min_words=6),
}


HISTORY_CONFIGS = [BRONZE, BRONZE_SENTENCE, BRONZE_FIRST_SEEN, RELAXED["relaxed-bronze"]]


@dataclasses.dataclass
class Source:
    name: str
    dumps: list[Path]
    configs: list[PipelineConfig]
    languages: dict[str, str] | str | None = None


def gensim_dump(name: str) -> Path:
    import gensim

    return Path(gensim.__file__).parent / "test" / "test_data" / name


def minidump(language: str) -> Path:
    return ROOT / "tests" / "data" / "minidumps" / language / "wiki.xml.bz2"


def built_pairs(source: Source, work: Path) -> list[dict]:
    """The pairs of every config of one source, each once, under the strictest config it reaches.

    Configs that count history references differently are built apart (a build counts one way).
    """
    configs = [dataclasses.replace(config, splits=()) for config in source.configs]
    for counting in dict.fromkeys(config.history_references for config in configs):
        group = [config for config in configs if config.history_references == counting]
        build(
            [str(dump) for dump in source.dumps],
            group,
            work / source.name / counting,
            BuildOptions(workers=1, languages=source.languages, tagger="perceptron", show_progress=False),
        )
    seen: dict[tuple, dict] = {}
    for config in configs:  # strictest first
        files = sorted((work / source.name / config.history_references / config.name).glob("*.parquet"))
        if not files:
            continue
        table = pa.concat_tables(pq.read_table(file) for file in files)
        counts = image_references(table)
        for row, references in zip(table.to_pylist(), counts, strict=True):
            key = pair_key(row)
            if key in seen:  # the strictest caption rule of the configs that hold it
                if RULE_LEVELS[config.caption_rule] > RULE_LEVELS[seen[key]["rule"]]:
                    seen[key]["rule"] = config.caption_rule
                continue
            row.update(source=source.name, reaches=config.name, references=references, rule=config.caption_rule)
            row.setdefault("language1", "en")
            row.setdefault("language2", row["language1"])
            seen[key] = row
    return list(seen.values())


def crowd_captions(source: str) -> dict[str, list[tuple[str, int, str]]]:
    """Per image of a crowd excerpt: its captions (id, number, text) in file order.

    COCO names a caption by its annotation id (also its number); Flickr8k by ``image#n`` (number ``n``).
    """
    captions: dict[str, list[tuple[str, int, str]]] = {}
    if source == "coco":
        data = json.loads((CROWD / "captions_val2017.json").read_text(encoding="utf-8"))
        for note in data["annotations"]:
            text = " ".join(str(note["caption"]).split())
            captions.setdefault(str(note["image_id"]), []).append((str(note["id"]), int(note["id"]), text))
    else:
        for line in (CROWD / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines():
            key, _, text = line.partition("\t")
            image, _, number = key.partition("#")
            captions.setdefault(image, []).append((key, int(number), " ".join(text.split())))
    return captions


def crowd_pairs(source: str) -> list[dict]:
    """One pair of two crowd workers' captions per image of the excerpt, drawn with a seed per image."""
    rows = []
    for image, captions in sorted(crowd_captions(source).items()):
        first, second = sorted(random.Random(f"{SEED}:{image}").sample(range(len(captions)), 2))
        (id1, number1, text1), (id2, number2, text2) = captions[first], captions[second]
        rows.append(
            {
                "source": f"{source}-crowd",
                "reaches": "crowd",
                "language1": "en",
                "language2": "en",
                "image": image,
                "page1": id1,
                "page2": id2,
                "revision1": number1,
                "revision2": number2,
                "same_page": False,
                "source1": source,
                "source2": source,
                "identity": "id",
                "references": len(captions),
                "sentence1": text1,
                "sentence2": text2,
            }
        )
    texts = [text for row in rows for text in (row["sentence1"], row["sentence2"])]
    passes = {rule: classify(texts, rule, tagger="perceptron") for rule in ("sentence", "verb")}
    for index, row in enumerate(rows):  # the strictest rule both captions pass
        both = {rule: verdicts[2 * index] and verdicts[2 * index + 1] for rule, verdicts in passes.items()}
        row["rule"] = "sentence" if both["sentence"] else "verb" if both["verb"] else "none"
    return rows


def pair_id(row: dict) -> str:
    text = "\x00".join(str(row[c]) for c in ("image", "page1", "sentence1", "page2", "sentence2"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="*", type=Path, default=[], help="more enwiki pages-articles excerpts")
    parser.add_argument("--history", nargs="*", type=Path, help=f"enwiki edit-history dumps (default: {HISTORY.name})")
    parser.add_argument("--output", type=Path, default=HERE / "candidates.tsv")
    parser.add_argument("--work", type=Path, help="keep the builds here (default: a temporary folder, removed)")
    arguments = parser.parse_args(argv)

    minidumps = sorted(path.name for path in (ROOT / "tests" / "data" / "minidumps").iterdir() if path.is_dir())
    english = [gensim_dump("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")]
    sources = [Source("enwiki", english, [GOLD, SILVER, RELAXED["relaxed"]], "en")]
    if arguments.pages:  # apart from gensim's excerpt: both hold a copy of "Anarchism", under other page ids
        sources.append(Source("enwiki-pages", arguments.pages, [GOLD, SILVER, RELAXED["relaxed"]], "en"))
    if arguments.history:
        sources.append(Source("enwiki-history", arguments.history, HISTORY_CONFIGS, "en"))
    sources.append(
        Source("bgwiki", [gensim_dump("bgwiki-latest-pages-articles-shortened.xml.bz2")], [RELAXED["relaxed"]], "bg")
    )
    for language in minidumps:
        if language in ("en", "simple"):
            continue
        sources.append(Source(f"minidump-{language}", [minidump(language)], [RELAXED["relaxed"]], language))
    sources.append(Source("minidump-en", [minidump("en")], [GOLD, SILVER, RELAXED["relaxed"]], "en"))
    spaced = [code for code in minidumps if code not in ("simple", "my", "ja", "zh", "th")]
    sources.append(
        Source(
            "minidumps-crosslingual",
            [minidump(code) for code in spaced],
            [RELAXED["relaxed-crosslingual"]],
            {str(minidump(code)): code for code in spaced},
        )
    )

    rows: list[dict] = []
    with contextlib.ExitStack() as stack:
        work = Path(arguments.work or stack.enter_context(tempfile.TemporaryDirectory()))
        work.mkdir(parents=True, exist_ok=True)
        if arguments.history is None:  # the shipped history, as the dump it was (export 0.4, MediaWiki 1.16)
            history = Path(work) / "enwiki-anarchism-history.xml"
            with lzma.open(HISTORY, format=lzma.FORMAT_ALONE) as source, open(history, "wb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
            sources.insert(1, Source("enwiki-history", [history], HISTORY_CONFIGS, "en"))
        for source in sources:
            try:
                found = built_pairs(source, Path(work))
            except WordCounterUnavailable as error:  # Burmese: no segmenter; said, not hidden
                print(f"{source.name}: {error}", file=sys.stderr)
                continue
            print(f"{source.name}: {len(found)} pairs", file=sys.stderr)
            if source.name == "minidumps-crosslingual":
                readable = [r for r in found if r["language1"] in READ and r["language2"] in READ]
                readable.sort(key=pair_id)
                found = random.Random(SEED).sample(readable, min(CROSSLINGUAL_DRAWN, len(readable)))
                print(f"  {len(readable)} in languages read; {len(found)} drawn", file=sys.stderr)
            rows.extend(found)
    for crowd in ("coco", "flickr8k"):
        found = crowd_pairs(crowd)
        print(f"{crowd}-crowd: {len(found)} pairs", file=sys.stderr)
        rows.extend(found)
    rows.sort(key=lambda row: (row["source"], pair_id(row)))
    with open(arguments.output, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in rows:
            row["pair"] = pair_id(row)
            writer.writerow([row.get(column, "") for column in COLUMNS])
    print(f"wrote {len(rows)} pairs to {arguments.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
