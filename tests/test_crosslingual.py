"""Builds over dumps of several language editions: per-language configs and the cross-lingual config.

The dumps are DBpedia's real page excerpts of Wikipedia editions (tests/data/minidumps, CC BY-SA),
whose ``<siteinfo>`` says ``enwiki`` in every language: the build is told each one's language.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

import wikipedia_ipc
from builder.config import CROSSLINGUAL, GOLD, SILVER, configs_for_languages
from builder.engines.local import build
from builder.filters.chain import FilterChain
from builder.filters.clusters import Cluster, Reference, build_pairs, count_pairs
from builder.filters.tagging import TaggerUnavailable

MINIDUMPS = Path(__file__).parent / "data" / "minidumps"
# Latin, Cyrillic, Greek, Arabic and Hebrew (right to left), Devanagari, CJK, Georgian
BERLIN = ("ar", "de", "el", "en", "es", "fr", "he", "hi", "it", "ja", "ka", "ko", "nl", "pl", "ru", "uk", "zh")


def minidump(language: str) -> str:
    return str(MINIDUMPS / language / "wiki.xml.bz2")


def berlin_dumps(languages: tuple[str, ...] = BERLIN) -> dict[str, str]:
    return {minidump(language): language for language in languages}


def reference(page: str, caption: str, language: str, page_id: int = 1) -> Reference:
    return Reference(page, page_id, 1, 0, "link", caption, "", "File:A.jpg", "File:A.jpg", language)


def test_pairs_across_languages_join_two_languages_and_read_in_language_order() -> None:
    cluster = Cluster(
        "File:A.jpg",
        (
            reference("Berlin", "The Brandenburg Gate at night", "fr"),
            reference("Berlin", "Das Brandenburger Tor bei Nacht", "de"),
            reference("Mitte", "Das Tor in der Nacht, von Westen", "de", page_id=2),
        ),
    )
    pairs = build_pairs(cluster, across_languages=True)
    assert [(pair.first.language, pair.second.language) for pair in pairs] == [("de", "fr"), ("de", "fr")]
    assert count_pairs(cluster, across_languages=True) == 2
    assert count_pairs(cluster) == len(build_pairs(cluster)) == 3


def test_crosslingual_bounds_read_languages() -> None:
    chain = FilterChain(dataclasses.replace(CROSSLINGUAL, caption_rule="none"))
    one_language = Cluster("File:A.jpg", (reference("A", "x", "de"), reference("B", "y", "de", page_id=2)))
    assert chain.before_rule(one_language) is None
    flag = Cluster(
        "File:Flag.svg",
        tuple(reference(f"P{n}", "a flag", "de", page_id=n) for n in range(11)) + (reference("P", "a flag", "fr"),),
    )
    assert chain.before_rule(flag) is None  # 11 uses in one edition: an icon, whatever the other editions do
    names = [row.name for row in chain.funnel.rows]
    assert names[1] == names[6] == "References in ≥ 2 languages"
    assert names[2] == "References ≤ 10 per language"
    assert names[5] == "No caption rule"


def test_configs_are_named_per_language_only_when_the_build_has_several() -> None:
    assert [config.name for config in configs_for_languages([GOLD, SILVER], ["de"])] == ["gold", "silver"]
    expanded = configs_for_languages([GOLD, CROSSLINGUAL], ["de", "fr"])
    assert [(config.name, config.language) for config in expanded] == [
        ("de.gold", "de"),
        ("fr.gold", "fr"),
        ("crosslingual", ""),
    ]
    with pytest.raises(ValueError, match="dumps are of one language"):
        configs_for_languages([CROSSLINGUAL], ["de"])


def test_english_parameters_keep_their_old_record() -> None:
    """The card and funnel.json of an English build list the parameters they always listed."""
    assert "language" not in GOLD.parameters() and "crosslingual" not in GOLD.parameters()
    assert CROSSLINGUAL.parameters()["crosslingual"] is True


@pytest.fixture(scope="module")
def berlin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cross-lingual config and the per-language silver configs without a rule, over 17 editions of Berlin."""
    output = tmp_path_factory.mktemp("berlin") / "out"
    configs = [dataclasses.replace(config, caption_rule="none") for config in (SILVER, CROSSLINGUAL)]
    dumps = berlin_dumps()
    build(list(dumps), configs, output, workers=1, show_progress=False, languages=dumps)
    return output


def test_crosslingual_build_pairs_many_language_pairs(berlin: Path) -> None:
    pairs = datasets.load_dataset(str(berlin), "crosslingual")
    rows = [row for split in pairs.values() for row in split]
    language_pairs = {(row["language1"], row["language2"]) for row in rows}
    assert len(language_pairs) >= 40
    assert all(row["language1"] < row["language2"] for row in rows)
    assert {language for pair in language_pairs for language in pair} >= {"ar", "he", "hi", "ja", "ru", "zh"}
    assert not any(row["same_page"] for row in rows)
    assert all(row["file1"] == row["file2"] == row["image"] for row in rows)


def test_monolingual_configs_of_a_multilingual_build_are_named_per_language(berlin: Path) -> None:
    front = yaml.safe_load((berlin / "README.md").read_text(encoding="utf-8").split("---")[1])
    assert front["language"] == sorted(BERLIN)
    assert front["multilinguality"] == ["multilingual"]
    names = set(front["wikipedia_ipc"]["configs"])
    assert names == {f"{language}.silver" for language in BERLIN} | {"crosslingual"}
    # no edition uses one image on two of its excerpt's pages: the monolingual configs are empty, and say so
    german = pq.read_table(next((berlin / "de.silver").glob("*.parquet")))
    assert german.num_rows == 0 and "language1" not in german.column_names
    card = (berlin / "README.md").read_text(encoding="utf-8")
    assert "Every file is taken for the Commons file of its name" in card
    assert "Caption rule: none" in card
    assert "language: de)" in card


def test_the_same_pairs_whatever_the_worker_count(berlin: Path, tmp_path: Path) -> None:
    dumps = berlin_dumps(("de", "fr", "ja", "he"))
    config = dataclasses.replace(CROSSLINGUAL, caption_rule="none")
    tables = []
    for workers in (1, 2):
        output = tmp_path / f"out-{workers}"
        build(list(dumps), [config], output, workers=workers, show_progress=False, languages=dumps)
        files = sorted((output / "crosslingual").glob("*.parquet"))
        tables.append([pq.read_table(file).to_pylist() for file in files])
    assert tables[0] == tables[1] and tables[0][0]


def test_a_language_without_tagger_is_refused_before_any_dump_is_read(tmp_path: Path) -> None:
    output = tmp_path / "out"
    with pytest.raises(TaggerUnavailable, match="ka"):
        build([minidump("ka")], [GOLD], output, show_progress=False, languages="ka")
    assert not output.exists()


def test_two_wikis_of_one_language_are_refused(tmp_path: Path) -> None:
    dumps = {minidump("en"): "en", minidump("simple"): "simple"}
    config = dataclasses.replace(SILVER, caption_rule="none")
    with pytest.raises(ValueError, match="enwiki, simplewiki"):
        build(list(dumps), [config], tmp_path / "out", show_progress=False, languages=dumps)


def test_a_dbname_that_names_no_wikipedia_asks_for_the_language(tmp_path: Path) -> None:
    dump = tmp_path / "private.xml"
    text = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><dbname>intranetwiki</dbname>'
        "</siteinfo></mediawiki>"
    )
    dump.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="intranetwiki.*--language"):
        build([dump], [GOLD], tmp_path / "out", show_progress=False)


def test_command_line_language_per_dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dumps = [tmp_path / f"{language}.xml.bz2" for language in ("de", "en")]
    for dump in dumps:
        shutil.copy(minidump(dump.name.split(".")[0]), dump)
    output = tmp_path / "out"
    arguments = ["build", *map(str, dumps), "--output", str(output), "--quiet", "--workers", "1"]
    arguments += ["--configs", "crosslingual", "--caption-rule", "none", "--splits", "none"]
    status = wikipedia_ipc.main([*arguments, "--language", f"de={dumps[0]}", f"en={dumps[1]}"])
    assert status == 0
    # both options taken (--caption-rule none once dropped --splits): no rule, and one train split
    record = json.loads((output / "crosslingual" / "funnel.json").read_text(encoding="utf-8"))
    assert (record["parameters"]["caption_rule"], record["parameters"]["splits"]) == ("none", [])
    shards = sorted((output / "crosslingual").glob("*.parquet"))
    assert [shard.name.split("-")[0] for shard in shards] == ["train"]
    pairs = pq.read_table(shards[0]).to_pylist()
    assert len(pairs) == record["funnel"][-1]["pairs"] == 9
    assert {(pair["language1"], pair["language2"]) for pair in pairs} == {("de", "en")}
    config = dataclasses.replace(CROSSLINGUAL, caption_rule="none", splits=())  # the same build, written in Python
    languages = {str(dumps[0]): "de", str(dumps[1]): "en"}
    build(list(map(str, dumps)), [config], tmp_path / "api", workers=1, show_progress=False, languages=languages)
    assert pq.read_table(shards[0]).equals(pq.read_table(next((tmp_path / "api" / "crosslingual").glob("*.parquet"))))
    status = wikipedia_ipc.main([*arguments, "--language", f"de={tmp_path / 'other.xml'}"])
    assert status == 2
    assert "is not one of the dumps given" in capsys.readouterr().err


def test_image_tables_keep_local_files_apart(tmp_path: Path) -> None:
    """A file in dewiki's own image table is dewiki's upload, not the Commons file of that name."""
    dumps = berlin_dumps(("de", "en"))
    config = dataclasses.replace(CROSSLINGUAL, caption_rule="none", splits=())
    build(list(dumps), [config], tmp_path / "commons", show_progress=False, languages=dumps)
    pairs = pq.read_table(next((tmp_path / "commons" / "crosslingual").glob("*.parquet"))).to_pylist()
    local = pairs[0]["image"]
    table = tmp_path / "dewiki-20190601-image.sql"
    name = local.removeprefix("File:").replace(" ", "_").replace("'", "\\'")
    table.write_text(
        "CREATE TABLE `image` (\n  `img_name` varbinary(255) NOT NULL DEFAULT '',\n"
        "  `img_sha1` varbinary(32) NOT NULL DEFAULT ''\n) ENGINE=InnoDB;\n"
        f"INSERT INTO `image` VALUES ('{name}','0123456789abcdefghijklmnopqrstu'),('Elsewhere.jpg','');\n",
        encoding="utf-8",
    )
    output = tmp_path / "apart"
    build(list(dumps), [config], output, show_progress=False, languages=dumps, image_tables=[table])
    kept = pq.read_table(next((output / "crosslingual").glob("*.parquet"))).to_pylist()
    assert local not in {pair["image"] for pair in kept}
    assert [pair for pair in pairs if pair["image"] != local] == kept
    card = (output / "README.md").read_text(encoding="utf-8")
    assert "the image tables of dewiki (2 files) list them: 1 reference to them left out" in card
    with pytest.raises(ValueError, match="sha1 identity and for the crosslingual config"):
        build(list(dumps), [SILVER], tmp_path / "other", show_progress=False, languages=dumps, image_tables=[table])


def test_the_datasets_builder_builds_the_crosslingual_config(tmp_path: Path) -> None:
    dumps = berlin_dumps(("de", "en", "nl"))
    pipeline = dataclasses.replace(CROSSLINGUAL, caption_rule="none", splits=())
    builder = wikipedia_ipc.WikipediaIPC(
        cache_dir=str(tmp_path / "cache"),
        config_name="crosslingual",
        pipeline=pipeline,
        dump_paths=list(dumps),
        languages=dumps,
        workers=1,
    )
    builder.download_and_prepare()
    pairs = builder.as_dataset(split="train")
    assert pairs.features["language1"].dtype == "string"
    assert {(row["language1"], row["language2"]) for row in pairs} <= {("de", "en"), ("de", "nl"), ("en", "nl")}
    assert len(pairs) > 5


def test_vowel_signs_tell_words_apart_in_step_9() -> None:
    """The Hindi words for book and a misspelling differ by a vowel sign, a combining mark ``\\W`` deletes."""
    from builder.filters.pairs import significant_difference

    one, two = "यह किताब पुस्तकालय में रखी गई है", "यह कताब पुस्तकालय में रखी गई है"
    cluster = Cluster("File:A.jpg", (reference("A", one, "hi"), reference("B", two, "hi", page_id=2)))
    assert len(significant_difference(build_pairs(cluster))) == 1
    english = Cluster("File:A.jpg", (reference("A", one, "en"), reference("B", two, "en", page_id=2)))
    assert significant_difference(build_pairs(english)) == []  # English keeps the paper's skeleton


def test_without_dbname_the_base_url_names_the_wiki(tmp_path: Path) -> None:
    from builder.lang.dumps import dump_language
    from builder.sources.xml import SiteInfo

    dump = tmp_path / "old.xml"
    assert dump_language(dump, SiteInfo(base="https://de.wikipedia.org/wiki/Wikipedia:Hauptseite"), None) == (
        "de",
        "dewiki",
    )
    assert dump_language(dump, SiteInfo(base="https://als.wikipedia.org/wiki/Houptsyte"), None) == ("gsw", "alswiki")
    assert dump_language(dump, SiteInfo(base="https://wiki.example.org/wiki/Main"), None) == ("en", "")
    assert dump_language(dump, SiteInfo(dbname="frwiki", base="https://de.wikipedia.org/"), None) == ("fr", "frwiki")
