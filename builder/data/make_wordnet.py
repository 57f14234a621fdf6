"""Writes ``wordnet-en.json.gz``: the part of the Open English WordNet that the Déjà rules read.

Run ``python builder/data/make_wordnet.py SRC_YAML --release 2024-edition --commit SHA`` with the
``src/yaml/`` folder of a checkout of https://github.com/globalwordnet/english-wordnet (needs
PyYAML). Shipping a derived table, rather than downloading WordNet at build time, gives every
machine the same verdicts offline; glosses, examples and every relation but the hypernyms are left
out to keep it small (about 3 MB).

The YAML sources hold two kinds of file:

* ``entries-*.yaml``: lemma → part of speech (``n``, ``v``, ``a``, ``s``, ``r``; homographs as
  ``n-1``, ``n-2``) → ``sense`` (a list in WordNet's sense order, each naming its ``synset``) and
  ``form`` (the irregular inflected forms: ``be`` has ``am``, ``is``, ``was`` …);
* ``{noun,verb,adj,adv}.*.yaml``: synset id (``00001930-n``) → ``members`` (its lemmas in order),
  ``partOfSpeech`` and the relations, of which ``hypernym`` and ``instance_hypernym`` are kept.

The table (JSON, keys sorted, gzip without a timestamp, so the same sources give the same bytes)::

    {"header": {"release", "commit", "licence", "source", "generator", "counts"},
     "synsets": [[id, pos, [member, …], [sense number, …], [hypernym, …], [instance hypernym, …]], …],
     "forms": {"n": {form: [lemma, …]}, "v": …, "a": …, "r": …}}

Synsets are in id order and point at each other by position. A member's sense number is the
synset's place in that lemma's senses (``bird`` 1 for the bird, 2 for the fowl …): the reader
rebuilds each lemma's senses in WordNet's order from them, which costs a third of storing the
lemma index itself. Forms are lower-cased (WordNet's lookups ignore case); adjective satellites
(``s``) count as adjectives (``a``). The generator checks that the entries' senses and the
synsets' members match (case aside).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent / "wordnet-en.json.gz"
LICENCE = (
    "Open English WordNet: CC BY 4.0 (c) the Open English Wordnet Team; derived from Princeton WordNet "
    "under the WordNet License (c) Princeton University"
)
SOURCE = "https://github.com/globalwordnet/english-wordnet"
POS_KEYS = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}
_HOMOGRAPH = re.compile(r"^([nvasr])(?:-\d+)?$")


def _load(path: Path) -> dict:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser: the 50 MB in seconds
    with open(path, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=loader)  # noqa: S506  # a safe loader
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top, found {type(data).__name__}")
    return data


def read_sources(folder: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """The synset files and the entry files of ``folder``, each merged into one mapping."""
    synsets: dict[str, dict] = {}
    entries: dict[str, dict] = {}
    files = sorted(folder.glob("*.yaml"))
    if not any(path.name.startswith("entries-") for path in files):
        raise FileNotFoundError(f"{folder}: no entries-*.yaml (expected english-wordnet's src/yaml/ folder)")
    for path in files:
        if path.name.startswith("entries-"):
            for lemma, by_pos in _load(path).items():
                entries.setdefault(str(lemma), {}).update(by_pos)
        elif path.name.split(".")[0] in ("noun", "verb", "adj", "adv"):
            synsets.update(_load(path))
    return synsets, entries


def build_table(synsets: dict[str, dict], entries: dict[str, dict], release: str, commit: str) -> dict:
    """The compact table of the module docstring from the parsed YAML."""
    ids = sorted(synsets)
    index = {synset_id: position for position, synset_id in enumerate(ids)}

    def targets(synset_id: str, relation: str) -> list[int]:
        missing = [target for target in synsets[synset_id].get(relation) or [] if target not in index]
        if missing:
            raise ValueError(f"synset {synset_id}: {relation} {missing} not defined in the sources")
        return [index[target] for target in synsets[synset_id].get(relation) or []]

    senses: dict[str, dict[str, list[int]]] = {pos: {} for pos in "nvar"}  # lemma → synsets, in sense order
    forms: dict[str, dict[str, list[str]]] = {pos: {} for pos in "nvar"}
    for lemma in sorted(entries):
        for key, entry in sorted(entries[lemma].items()):
            match = _HOMOGRAPH.match(key)
            if match is None:
                raise ValueError(f"entry {lemma!r}: unknown part of speech {key!r}")
            pos = POS_KEYS[match.group(1)]
            order = senses[pos].setdefault(lemma.lower(), [])
            for sense in entry.get("sense") or []:
                if sense["synset"] not in index:
                    raise ValueError(f"entry {lemma!r} ({key}): synset {sense['synset']} not defined in the sources")
                if index[sense["synset"]] not in order:
                    order.append(index[sense["synset"]])
            for form in entry.get("form") or []:
                bases = forms[pos].setdefault(str(form).lower(), [])
                if lemma.lower() not in bases:
                    bases.append(lemma.lower())
    rank = {
        (synset, lemma): number
        for by_lemma in senses.values()
        for lemma, order in by_lemma.items()
        for number, synset in enumerate(order, 1)
    }
    rows = []
    for position, synset_id in enumerate(ids):
        synset = synsets[synset_id]
        members = [str(member) for member in synset["members"]]
        numbers = [rank.get((position, member.lower()), 0) for member in members]
        if 0 in numbers:
            raise ValueError(f"synset {synset_id}: member {members[numbers.index(0)]!r} has no entry sense for it")
        rows.append(
            [synset_id, synset["partOfSpeech"], members, numbers]
            + [targets(synset_id, "hypernym"), targets(synset_id, "instance_hypernym")]
        )
    membered = {(position, member.lower()) for position, row in enumerate(rows) for member in row[2]}
    if membered != set(rank):  # members that differ only in case ("Earth", "earth") share a sense
        unmatched = sorted(set(rank) - membered)[:3]
        raise ValueError(f"entry senses without a synset member: {[(ids[at], lemma) for at, lemma in unmatched]}")
    header = {
        "release": release,
        "commit": commit,
        "licence": LICENCE,
        "source": SOURCE,
        "generator": "builder/data/make_wordnet.py",
        "counts": {"synsets": len(rows), **{f"lemmas_{pos}": len(senses[pos]) for pos in "nvar"}},
    }
    return {"header": header, "synsets": rows, "forms": forms}


def write_table(table: dict, output: Path) -> None:
    """Gzipped JSON without a timestamp, written beside ``output`` and renamed over it."""
    data = json.dumps(table, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    partial = output.with_name(output.name + ".partial")
    with open(partial, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    partial.replace(output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", type=Path, help="english-wordnet's src/yaml/ folder")
    parser.add_argument("--release", required=True, help="the OEWN release, e.g. 2024-edition")
    parser.add_argument("--commit", required=True, help="the commit of english-wordnet the sources come from")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    synsets, entries = read_sources(args.sources)
    table = build_table(synsets, entries, args.release, args.commit)
    write_table(table, args.output)
    print(f"{args.output}: {table['header']['counts']}, {args.output.stat().st_size:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
