"""Déjà's Table 6 on real images: image captioning by association (ASSOC) against the caption of the single
nearest image (INSTANCE), §3–§4 of Chen et al. (NAACL 2015).

Data: the real captioned images of ``tests/data/deja/images`` (``captions.tsv``: image file, caption; see its
README), or any folder laid out so, or as Flickr8k is commonly redistributed (``captions.txt`` and ``Images/``: the
captions of the pictures present are read; docs/benchmarks.md names a public repository holding 1,000 of them).
The association graph groups captions by a normalised form (lower case, punctuation to spaces, runs of whitespace to
one space; ``normalise`` below), or with ``--group canonical`` by Déjà's canonical form of each sentence §2 keeps: a
caption's visual neighbourhood N_c is the set of images that
carry that form. The report says how many captions have two images or more: the paper's corpus has 22.4 images
per caption on average; a small real sample has few repeats, and where a caption has one image, "w/ σ" and
"w/ all" are the same and ASSOC with the candidate feature for reranking is INSTANCE.

Protocol (§4 "Dataset"): every image is a query; it retrieves from the corpus without its own captions and all
their images. The images are split once, by the SHA-1 of their file name, into a development set (σ is chosen
there for each reranking feature, the value whose ASSOC captions score the best mean BLEU@1: footnote 5) and a
test set, on which the table is computed. A query's references are all its original captions.

Scores, as the paper reports them: BLEU at 1 without brevity penalty (sacrebleu's BLEU with
``max_ngram_order=1``; the brevity penalty is left out by reading the clipped unigram precision, ``precisions[0]``,
which sacrebleu computes before multiplying by it), corpus-level and per image; METEOR with balanced precision and
recall (NLTK's ``meteor_score`` with ``alpha=0.5``; its WordNet stage uses ``--wordnet``: the toolkit's Open English
WordNet, or ``none`` for the exact and stem stages only), the mean over images. Each method is compared with
INSTANCE by a two-tailed paired t-test over the test images (as Table 6) and a paired bootstrap; a row drawn without
pixels (CHANCE) shows how much of the score any caption of the pool gets. Usage::

    python benchmarks/deja_captioning.py [--data tests/data/deja/images] [--K 100] [--wordnet oewn|none]
        [--dev-share 0.33] [--bootstrap 2000] [--group normalised|canonical] [--tagger auto]

Needs sacrebleu, scipy, Pillow and NLTK (``pip install sacrebleu``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from builder.filters.association import (  # noqa: E402
    CANDIDATE_FEATURE,
    DevQuery,
    Pool,
    assoc,
    bleu1,
    choose_sigma,
    instance,
)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "deja" / "images"
RERANK = ("gist", "gist+tiny", "tiny")
# Table 6 of the paper: (BLEU@1 without brevity penalty, METEOR); the "w/ σ" rows per reranking feature
PAPER = {
    "INSTANCE": (0.125, 0.029),
    "ASSOC gist w/ all": (0.130, 0.031),
    "ASSOC gist+tiny w/ all": (0.133, 0.030),
    "ASSOC tiny w/ all": (0.126, 0.029),
    "ASSOC gist w/ σ": (0.172, 0.033),
    "ASSOC gist+tiny w/ σ": (0.159, 0.033),
    "ASSOC tiny w/ σ": (0.184, 0.034),
}
WORD = re.compile(r"\w+")


def normalise(caption: str) -> str:
    """The grouping key: lower case, punctuation to spaces, whitespace collapsed."""
    return " ".join(re.sub(r"[^\w\s]", " ", caption.lower()).split())


@dataclass(frozen=True)
class Corpus:
    files: list[str]  # image rows
    captions_of: list[list[str]]  # per image: its original captions (the references)
    keys_of: list[set[str]]  # per image: its grouped captions (caption ids)
    text: dict[str, str]  # caption id → the caption shown for it (its first original, by the file's order)
    pool: Pool
    queries: list[dict[str, np.ndarray]]  # per image: its features by name


def caption_rows(folder: Path) -> tuple[Path, list[dict[str, str]]]:
    """A folder's captioned pictures: the rows of its ``captions.tsv`` (``file``, ``caption``; tab-separated, no
    quoting), else Flickr8k's as it is commonly redistributed (``captions.txt``: ``image,caption`` rows, the pictures
    in ``Images/``: the rows of the pictures present, ``file`` relative to ``folder``); each with its ``line``."""
    table = folder / "captions.tsv"
    if table.exists():
        with table.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            return table, [{**row, "line": str(reader.line_num)} for row in reader]
    table, pictures = folder / "captions.txt", folder / "Images"
    if not table.exists() or not pictures.is_dir():
        raise SystemExit(f"{folder}: neither captions.tsv nor Flickr8k's captions.txt with an Images/ folder")
    present = {path.name for path in pictures.iterdir()}
    with table.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != ["image", "caption"]:
            raise SystemExit(f"{table}: the header is {reader.fieldnames}, not Flickr8k's image,caption")
        rows = [
            {"file": f"Images/{row['image']}", "caption": " ".join(row["caption"].split()), "line": str(number)}
            for number, row in enumerate(reader, start=2)
            if row["image"] in present
        ]
    if not rows:
        raise SystemExit(f"{table}: no caption of a picture in {pictures}")
    return table, rows


def canonical_sentences(captions: Sequence[str], tagger: str) -> list[list[tuple[str, str]]]:
    """Déjà's own grouping (§2): per caption, each sentence the three rules keep, as (canonical form, its text);
    a caption none of whose sentences is kept joins no group (it stays a reference of its image)."""
    from builder.filters.deja import analyse_texts
    from builder.filters.tagging import get_tagger
    from builder.lang.wordnet import load_wordnet

    analysed = analyse_texts(captions, get_tagger(tagger, "en"), load_wordnet())
    return [[(s.canonical, s.text) for s in sentences if s.verdict == "kept" and s.canonical] for sentences in analysed]


def load(folder: Path, group: str = "normalised", tagger: str = "auto") -> Corpus:
    """The image–caption records of ``captions.tsv`` and every image's features (``builder.sources.features``),
    grouped by the normalised caption or (``group="canonical"``) by Déjà's canonical form of each kept sentence."""
    from builder.sources.features import FEATURES, combined, image_features

    table, rows = caption_rows(folder)
    files = sorted({row["file"] for row in rows})
    row_of = {name: position for position, name in enumerate(files)}
    captions_of: list[list[str]] = [[] for _ in files]
    keys_of: list[set[str]] = [set() for _ in files]
    text: dict[str, str] = {}
    edges = []
    captions = [row["caption"].strip() for row in rows]
    for row, caption in zip(rows, captions, strict=True):
        if not normalise(caption):
            raise ValueError(f"{table}:{row['line']}: empty caption")
    if group == "canonical":
        grouped = canonical_sentences(captions, tagger)
    else:
        grouped = [[(normalise(caption), caption)] for caption in captions]
    for row, caption, keys in zip(rows, captions, grouped, strict=True):
        image = row_of[row["file"]]
        captions_of[image].append(caption)
        for key, shown in keys:
            keys_of[image].add(key)
            text.setdefault(key, shown)
            edges.append((key, image))
    queries = []
    for name in files:
        path = folder / name
        try:
            raw = image_features(path.read_bytes())
        except Exception as error:
            raise ValueError(f"{path}: cannot compute its features: {error}") from error
        queries.append({feature: np.asarray(combined(raw, feature), dtype=np.float64) for feature in FEATURES})
    matrices = {feature: np.stack([query[feature] for query in queries]) for feature in queries[0]}
    return Corpus(files, captions_of, keys_of, text, Pool.build(edges, matrices), queries)


class NoSynonyms:
    """A WordNet without synsets: METEOR's exact and stem stages only (``--wordnet none``)."""

    def synsets(self, word: str, pos: str | None = None) -> list:
        return []


def wordnet_for(name: str):
    if name == "none":
        return NoSynonyms()
    try:
        from builder.lang.wordnet import load_wordnet
    except ImportError as error:  # the toolkit's WordNet module is not in this checkout
        raise SystemExit(f"--wordnet {name}: builder.lang.wordnet is missing ({error}); use --wordnet none") from None
    return load_wordnet(name)


def meteor(hypotheses: Sequence[str], references: Sequence[Sequence[str]], wordnet) -> list[float]:
    """METEOR with balanced precision and recall (alpha = 0.5), per sentence."""
    from nltk.translate.meteor_score import meteor_score

    def tokens(text: str) -> list[str]:
        return WORD.findall(text.lower())

    return [
        meteor_score([tokens(r) for r in refs], tokens(h), wordnet=wordnet, alpha=0.5)
        for h, refs in zip(hypotheses, references, strict=True)
    ]


def split(files: Sequence[str], dev_share: float) -> tuple[list[int], list[int]]:
    """Development and test images: the first ``dev_share`` of the images in the order of their name's SHA-1."""
    order = sorted(range(len(files)), key=lambda row: hashlib.sha1(files[row].encode()).hexdigest())
    cut = round(len(files) * dev_share)
    return sorted(order[:cut]), sorted(order[cut:])


def paired(a: Sequence[float], b: Sequence[float], rounds: int) -> tuple[float, float]:
    """Two-tailed paired t-test p and paired-bootstrap p (share of resamples whose mean difference changes sign,
    doubled) of a against b; 1.0 where the two never differ."""
    from scipy.stats import ttest_rel

    diff = np.asarray(a) - np.asarray(b)
    if not diff.any():
        return 1.0, 1.0
    t_p = float(ttest_rel(a, b).pvalue)
    rng = np.random.default_rng(46)
    means = diff[rng.integers(0, diff.size, size=(rounds, diff.size))].mean(axis=1)
    side = (means <= 0).mean() if diff.mean() > 0 else (means >= 0).mean()
    return t_p, float(min(1.0, 2 * side))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--K", type=int, default=100, help="candidate images (§3 footnote 5: 100)")
    parser.add_argument("--wordnet", default="oewn", help="oewn (builder.lang.wordnet), nltk, or none")
    parser.add_argument("--dev-share", type=float, default=1 / 3)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument(
        "--group",
        choices=("normalised", "canonical"),
        default="normalised",
        help="captions in repetition: the normalised caption, or Déjà's canonical form of each sentence §2 keeps",
    )
    parser.add_argument("--tagger", default="auto", help="the tagger of --group canonical (builder's --tagger)")
    args = parser.parse_args(argv)
    wordnet = wordnet_for(args.wordnet)  # a missing WordNet is said before the work, not after

    corpus = load(args.data, args.group, args.tagger)
    sizes = np.bincount(corpus.pool.edge_caption)
    print(f"data: {args.data} — {len(corpus.files)} images, {sum(map(len, corpus.captions_of))} caption records")
    grouping = "normalised caption" if args.group == "normalised" else f"canonical form, tagger {args.tagger}"
    print(
        f"association graph (grouping: {grouping}): {len(corpus.pool.captions)} captions, "
        f"{int((sizes >= 2).sum())} with ≥ 2 images, at most {int(sizes.max())} images per caption, "
        f"mean {sizes.mean():.2f}"
    )
    dev, test = split(corpus.files, args.dev_share)
    pools = [corpus.pool.excluding(keys) for keys in corpus.keys_of]
    print(f"split: {len(dev)} development images, {len(test)} test images; K = {args.K}; wordnet: {args.wordnet}")

    def scorer(row: int) -> Callable[[str], float]:
        refs = corpus.captions_of[row]
        return lambda key: bleu1([corpus.text[key]], [refs])[0]

    dev_set = [DevQuery(corpus.queries[row], pools[row], scorer(row)) for row in dev]
    sigmas = {}
    for feature in RERANK:
        sigma, means = choose_sigma(dev_set, K=args.K, rerank_feature=feature)
        sigmas[feature] = sigma
        shown = ", ".join(f"{'all' if s is None else s}: {m:.3f}" for s, m in means.items())
        print(f"σ for {feature}: {'all' if sigma is None else sigma} (dev BLEU@1 by σ — {shown})")

    def chance(row: int) -> str:
        """A caption of the pool drawn without pixels (seeded by the query's file name): the floor retrieval beats."""
        return min(pools[row].captions, key=lambda key: hashlib.sha1(f"{corpus.files[row]}|{key}".encode()).digest())

    methods: dict[str, Callable[[int], str]] = {
        "INSTANCE": lambda row: instance(corpus.queries[row], pools[row], CANDIDATE_FEATURE).caption,
        "CHANCE (no pixels)": chance,
    }
    for label, chosen in (("all", None), ("σ", "chosen")):
        for feature in RERANK:
            sigma = sigmas[feature] if chosen else None
            methods[f"ASSOC {feature} w/ {label}"] = lambda row, f=feature, s=sigma: (
                assoc(corpus.queries[row], pools[row], args.K, s, f).caption
            )
    references = [corpus.captions_of[row] for row in test]
    results = {}
    for name, method in methods.items():
        keys = [method(row) for row in test]
        hypotheses = [corpus.text[key] for key in keys]
        corpus_bleu, per_bleu = bleu1(hypotheses, references)
        results[name] = (keys, corpus_bleu, per_bleu, meteor(hypotheses, references, wordnet))

    base_keys, _, base_bleu, base_meteor = results["INSTANCE"]
    print()
    print(
        f"{'method':24} {'BLEU@1':>7} {'(mean)':>7} {'METEOR':>7} {'p BLEU t/boot':>15} {'p METEOR t/boot':>16} "
        f"{'=INST':>6}   paper BLEU / METEOR"
    )
    for name, (keys, corpus_bleu, per_bleu, per_meteor) in results.items():
        same = sum(a == b for a, b in zip(keys, base_keys, strict=True)) / len(keys)
        if name == "INSTANCE":
            tests = f"{'':>15} {'':>16}"
        else:
            tb, bb = paired(per_bleu, base_bleu, args.bootstrap)
            tm, bm = paired(per_meteor, base_meteor, args.bootstrap)
            tests = f"{tb:>7.3f}/{bb:<7.3f} {tm:>8.3f}/{bm:<7.3f}"
        paper = f"{PAPER[name][0]:.3f} / {PAPER[name][1]:.3f}" if name in PAPER else "—"
        print(
            f"{name:24} {corpus_bleu:7.3f} {np.mean(per_bleu):7.3f} {np.mean(per_meteor):7.3f} {tests} {same:6.0%}"
            f"   {paper}"
        )


if __name__ == "__main__":
    main()
