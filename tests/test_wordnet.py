"""WordNet offline: the generator on a real excerpt of the Open English WordNet, the shipped table, NLTK's route."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

from builder.data import make_wordnet
from builder.lang.wordnet import TABLE, WordNet, WordNetUnavailable, load_wordnet

ROOT = Path(__file__).resolve().parent.parent
EXCERPT = ROOT / "tests" / "data" / "wordnet"
COMMIT = "3c511bbd021c9d11093918f062b956245820eb19"


@pytest.fixture(scope="module")
def wordnet() -> WordNet:
    return load_wordnet()


@pytest.fixture(scope="module")
def excerpt_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("wordnet") / "excerpt.json.gz"
    assert (
        make_wordnet.main([str(EXCERPT), "--release", "2024-edition", "--commit", COMMIT, "--output", str(output)]) == 0
    )
    return output


def test_the_generator_on_a_real_excerpt(excerpt_table: Path) -> None:
    table = json.loads(gzip.decompress(excerpt_table.read_bytes()))
    assert table["header"]["counts"] == {"synsets": 40, "lemmas_n": 72, "lemmas_v": 8, "lemmas_a": 2, "lemmas_r": 0}
    assert table["header"]["release"] == "2024-edition" and table["header"]["commit"] == COMMIT
    assert "CC BY 4.0" in table["header"]["licence"]
    rows = {row[0]: row for row in table["synsets"]}
    ids = [row[0] for row in table["synsets"]]
    bird = rows["01505702-n"]
    assert bird[:4] == ["01505702-n", "n", ["bird"], [1]] and ids[bird[4][0]] == "01474323-n"  # vertebrate
    paris = rows["08952341-n"]  # an instance: no hypernym, an instance hypernym (national capital)
    assert paris[2] == ["Paris", "City of Light", "French capital", "capital of France"]
    assert paris[4] == [] and [ids[index] for index in paris[5]] == ["08709407-n"]
    assert table["forms"]["v"]["is"] == ["be"] and table["forms"]["v"]["flew"] == ["fly"]
    assert table["forms"]["a"] == {"bigger": ["big"], "biggest": ["big"]}


def test_the_generator_writes_the_same_bytes_twice(excerpt_table: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.json.gz"
    make_wordnet.main([str(EXCERPT), "--release", "2024-edition", "--commit", COMMIT, "--output", str(again)])
    assert again.read_bytes() == excerpt_table.read_bytes()
    assert not list(tmp_path.glob("*.partial"))


def test_the_generator_refuses_a_folder_without_entries(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no entries-"):
        make_wordnet.main([str(tmp_path), "--release", "x", "--commit", "y", "--output", str(tmp_path / "t.json.gz")])


def test_the_excerpt_table_reads_as_a_wordnet(excerpt_table: Path) -> None:
    excerpt = WordNet(excerpt_table)
    assert excerpt.physical("bird") and excerpt.physical("sky")
    assert not excerpt.physical("paris")  # an instance of a national capital: a named place, no common noun
    assert not excerpt.physical("idea")
    assert excerpt.lemma("flew", "v") == "fly" and excerpt.lemma("flying", "v") == "fly"
    assert excerpt.lemma("were", "v") == "be" and excerpt.lemma("biggest", "a") == "big"
    assert [synset.name() for synset in excerpt.synsets("bird")] == ["bird.n.01"]
    assert excerpt.signature() == f"oewn-2024|sha256:{hashlib.sha256(excerpt_table.read_bytes()).hexdigest()[:16]}"


def test_the_shipped_table(wordnet: WordNet) -> None:
    assert wordnet.header["release"] == "2024-edition" and wordnet.header["commit"] == COMMIT
    assert wordnet.header["counts"]["synsets"] == 120630
    assert wordnet.signature() == "oewn-2024|sha256:03f017e3ee3585bc"
    assert load_wordnet() is wordnet  # loaded once per process


def test_the_table_ships_in_the_package() -> None:
    """pyproject's package-data takes the table (a wheel built from this tree lists it: builder/data/wordnet-en.md)."""
    section = (ROOT / "pyproject.toml").read_text().split("[tool.setuptools.package-data]")[1]
    patterns = json.loads(re.search(r"^builder = (\[.*?\])", section, re.MULTILINE).group(1))  # a TOML list of strings
    assert any(fnmatch(TABLE.relative_to(ROOT / "builder").as_posix(), pattern) for pattern in patterns)


@pytest.mark.parametrize(
    ("word", "pos", "lemma"),
    [
        ("flies", "v", "fly"),  # the detachment rules: ies → y
        ("flying", "v", "fly"),
        ("is", "v", "be"),  # irregular forms first
        ("saw", "v", "see"),
        ("found", "v", "find"),
        ("has", "v", "have"),
        ("resting", "v", "rest"),
        ("leaves", "n", "leaf"),
        ("men", "n", "man"),
        ("Birds", "n", "bird"),
        ("glasses", "n", "glasses"),  # a lemma itself comes before the rules
        ("bigger", "a", "big"),
        ("bluest", "a", "blue"),
        ("quickly", "r", "quickly"),
        ("Zorblax", "n", "zorblax"),  # not in WordNet: the word in lower case
    ],
)
def test_lemma_is_wordnets_morphy(wordnet: WordNet, word: str, pos: str, lemma: str) -> None:
    assert wordnet.lemma(word, pos) == lemma


def test_a_part_of_speech_outside_wordnet_is_refused(wordnet: WordNet) -> None:
    with pytest.raises(ValueError, match="unknown part of speech 'x'"):
        wordnet.lemma("bird", "x")


def test_synsets_in_sense_order(wordnet: WordNet) -> None:
    assert [synset.name() for synset in wordnet.synsets("bird", "n")] == [
        "bird.n.01", "bird.n.02", "dame.n.01", "boo.n.01", "shuttlecock.n.01"
    ]  # fmt: skip
    assert [synset.name() for synset in wordnet.synsets("dogs")][:2] == ["dog.n.01", "frump.n.01"]  # through morphy
    assert wordnet.synsets("car", "n")[0].lemma_names() == ["car", "auto", "automobile", "machine", "motorcar"]
    physical = wordnet.synsets("physical entity")[0]
    assert physical.name() == "physical_entity.n.01" and physical.id() == "00001930-n"
    assert [synset.name() for synset in physical.hypernyms()] == ["entity.n.01"]


@pytest.mark.parametrize(
    ("noun", "physical"),
    [
        ("bird", True), ("sky", True), ("butterfly", True), ("flower", True), ("road", True), ("beach", True),
        ("home", True), ("cake", True), ("paris", False),  # an instance of a national capital, not a common noun
        ("idea", False), ("morning", False), ("time", False), ("happiness", False), ("zorblax", False),
        # the leaks through named instances (Clarence Day, Sojourner Truth): no common sense is physical
        ("day", False), ("truth", False),
        # a common sense is: hope.n (someone hopes rest on, a person), couple.n and group.n (physics, chemistry),
        # top.n (a toy, a garment); people.n and crowd.n are groups (abstractions)
        ("hope", True), ("couple", True), ("group", True), ("top", True), ("people", False), ("crowd", False),
    ],
)  # fmt: skip
def test_physical_nouns(wordnet: WordNet, noun: str, physical: bool) -> None:
    assert wordnet.physical(noun) is physical


def test_meteor_takes_the_wordnet(wordnet: WordNet) -> None:
    """NLTK's METEOR calls wordnet.synsets(word) and each synset's lemmas()' name(): car and auto are synonyms."""
    from nltk.translate.meteor_score import meteor_score

    reference, hypothesis = "a red car on the road".split(), "a red auto on the road".split()
    assert meteor_score([reference], hypothesis, wordnet=wordnet) == pytest.approx(0.9976851851851852)
    assert meteor_score([reference], "a red bus on the road".split(), wordnet=wordnet) == pytest.approx(
        0.8066666666666668
    )


def test_an_unknown_source_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown WordNet source 'wn'"):
        load_wordnet("wn")


def test_a_missing_table_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(WordNetUnavailable, match="is missing: reinstall wikipedia-ipc"):
        WordNet(tmp_path / "wordnet-en.json.gz")
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(WordNetUnavailable, match="broken.json.gz is unreadable"):
        WordNet(broken)


# WordNet 3.0's lexicographer files, numbered as lexnames(5WN) lists them: NLTK's reader needs this file, which
# Debian's wordnet-base package leaves out (its data, index, exception and sense files are the Princeton release's).
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl"
).split()
_SYNTACTIC = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
DEBIAN_WORDNET = Path("/usr/share/wordnet")  # apt's wordnet-base and wordnet-sense-index, which .ci/run installs


def _nltk_source(nltk_data: Path) -> str:
    code = (
        "from builder.lang.wordnet import load_wordnet, WordNetUnavailable\n"
        "try:\n"
        "    wordnet = load_wordnet('nltk')\n"
        "except WordNetUnavailable as error:\n"
        "    print('unavailable', error)\n"
        "else:\n"
        "    nouns = ('bird', 'idea', 'day', 'hope')\n"
        "    print('found', wordnet.lemma('flies', 'v'), *(wordnet.physical(noun) for noun in nouns))\n"
    )
    environment = {**os.environ, "NLTK_DATA": str(nltk_data), "PYTHONPATH": str(ROOT)}
    finished = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300, check=True
    )
    return finished.stdout.strip()


def test_nltk_source_missing(tmp_path: Path) -> None:
    """Where NLTK's wordnet corpus is not installed, one line saying how to get it (or the machine's own copy in
    one of NLTK's default folders is read)."""
    output = _nltk_source(tmp_path)
    if output.startswith("found"):  # a machine with NLTK's corpus in one of its default folders
        assert output == "found fly True False False True"
    else:
        assert output == (
            "unavailable NLTK's wordnet corpus is not installed: run python -m nltk.downloader wordnet (or point "
            "NLTK_DATA at a folder holding corpora/wordnet), or use the shipped table (source 'oewn')"
        )


def test_nltk_source(tmp_path: Path) -> None:
    """NLTK's wordnet corpus through the same interface, on Princeton's WordNet 3.0 files as Debian ships them (CI
    installs them, so there their absence fails)."""
    if not (DEBIAN_WORDNET / "index.sense").is_file():
        reason = f"{DEBIAN_WORDNET} has no WordNet 3.0 (apt-get install wordnet-base wordnet-sense-index)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have {reason}", pytrace=False)
        pytest.skip(reason)
    corpus = tmp_path / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    for name in ("data", "index"):
        for pos in ("adj", "adv", "noun", "verb"):
            shutil.copy(DEBIAN_WORDNET / f"{name}.{pos}", corpus)  # NLTK refuses links that leave its folder
    for name in ("adj.exc", "adv.exc", "noun.exc", "verb.exc", "index.sense"):
        shutil.copy(DEBIAN_WORDNET / name, corpus)
    (corpus / "lexnames").write_text(
        "".join(f"{i:02d}\t{name}\t{_SYNTACTIC[name.split('.')[0]]}\n" for i, name in enumerate(_LEXNAMES)),
        encoding="ascii",
    )
    assert _nltk_source(tmp_path) == "found fly True False False True"
