"""The languages table (builder/data/languages.json), its API and the script that generates it.

The facts checked against the committed table are MediaWiki's (its Messages*.php files) and
Wikimedia's wiki configuration; the script is run on a small MediaWiki tree written here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builder.data import make_languages
from builder.lang.languages import (
    ImageOption,
    language_codes,
    language_for,
    language_from_dbname,
    table_source,
    wiki_dbnames,
)


def test_german_names_options_and_redirect():
    german = language_for("de")
    assert german.file_namespace == "Datei"
    assert {"Datei", "Bild", "File", "Image"} <= set(german.file_namespaces)
    assert german.image_option("mini") == german.image_option("miniatur") == "img_thumbnail"
    assert german.image_option("links") == "img_left"
    assert german.image_option("hochkant") == "img_upright"
    assert german.parse_image_option("hochkant=1.2") == ImageOption("img_upright", "1.2")
    assert german.parse_image_option("mini=Datei.png") == ImageOption("img_manualthumb", "Datei.png")
    assert german.parse_image_option("alternativtext=Ein Hund") == ImageOption("img_alt", "Ein Hund")
    assert german.redirect_words[0] == "#WEITERLEITUNG"
    assert not german.redirect.case_sensitive


def test_french_names_and_options():
    french = language_for("fr")
    assert french.file_namespace == "Fichier"
    assert "Image" in french.file_namespaces
    assert french.image_option("vignette") == "img_thumbnail"
    assert french.image_option("gauche") == "img_left"
    assert french.image_option("droite") == "img_right"
    assert french.image_option("redresse") == french.image_option("redresse=0.8") == "img_upright"
    assert "#REDIRECTION" in french.redirect_words


def test_russian_names_size_and_redirect():
    russian = language_for("ru")
    assert russian.file_namespace == "Файл"
    assert russian.is_file_namespace("Изображение")
    assert russian.parse_image_option("200пкс") == ImageOption("img_width", "200")
    assert "#перенаправление" in russian.redirect_words
    assert not russian.redirect.case_sensitive  # so "#ПЕРЕНАПРАВЛЕНИЕ" redirects too


def test_right_to_left_and_cjk_file_namespaces():
    arabic = language_for("ar")
    assert arabic.file_namespace == "ملف"
    assert arabic.is_file_namespace("صورة")
    assert arabic.image_option("تصغير") == "img_thumbnail"
    assert language_for("he").file_namespace == "קובץ"
    japanese = language_for("ja")
    assert japanese.file_namespace == "ファイル"
    assert japanese.is_file_namespace("画像")
    assert japanese.image_option("サムネイル") == "img_thumbnail"
    # zh keeps the English name and accepts those of its script variants (LanguageConverter)
    chinese = language_for("zh")
    assert chinese.file_namespace == "File"
    assert chinese.is_file_namespace("文件") and chinese.is_file_namespace("檔案")
    assert chinese.image_option("缩略图") == chinese.image_option("縮圖") == "img_thumbnail"


def test_magic_words_come_through_the_fallback_chain():
    alemannic = language_for("alswiki")
    assert alemannic.code == "gsw" and alemannic.fallbacks == ("de", "en")
    assert alemannic.image_option("miniatur") == "img_thumbnail"
    assert alemannic.image_option("hochkant=2") == "img_upright"
    assert "#WEITERLEITUNG" in alemannic.redirect_words
    luxembourgish = language_for("lb")
    assert luxembourgish.fallbacks == ("de", "en")
    assert luxembourgish.redirect_words[:2] == ("#VIRULEEDUNG", "#WEITERLEITUNG")
    assert luxembourgish.image_option("mini") == "img_thumbnail"  # German's synonym, after lb's own


def test_namespace_names_are_not_inherited_like_magic_words():
    """lb names the File namespace itself: German's name is not valid there, German's alias is."""
    luxembourgish = language_for("lb")
    assert luxembourgish.file_namespace == "Fichier"
    assert not luxembourgish.is_file_namespace("Datei")
    assert luxembourgish.is_file_namespace("Bild")


def test_english_forms_are_valid_on_every_wiki():
    for code in language_codes():
        language = language_for(code)
        assert language.is_file_namespace("File") and language.is_file_namespace("Image"), code
        assert "#REDIRECT" in language.redirect_words, code
        for word, option in [("thumb", "img_thumbnail"), ("left", "img_left"), ("frameless", "img_frameless"),
                             ("200px", "img_width"), ("upright=1.2", "img_upright"), ("alt=A dog", "img_alt"),
                             ("link=Main Page", "img_link")]:  # fmt: skip
            assert language.image_option(word) == option, (code, word)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("200px", ImageOption("img_width", "200")),
        ("x200px", ImageOption("img_width", "x200")),
        ("200x100px", ImageOption("img_width", "200x100")),
        (" 200px\n", ImageOption("img_width", "200")),
        ("upright=1.2", ImageOption("img_upright", "1.2")),
        ("upright", ImageOption("img_upright", None)),
        ("alt=Text", ImageOption("img_alt", "Text")),
        ("alt=", ImageOption("img_alt", "")),
        ("thumb", ImageOption("img_thumbnail", None)),
        ("thumb=Other.png", ImageOption("img_manualthumb", "Other.png")),
        ("A dog on a beach", None),
        ("Thumb", None),  # image options are case-sensitive
        ("upright=big", None),  # MediaWiki keeps upright only with a number
        ("0px", None),
        ("px", None),
        ("200 pixels", None),
        ("left=1", None),
    ],
)
def test_image_option_values(word, expected):
    assert language_for("en").parse_image_option(word) == expected


def test_namespace_names_match_as_mediawiki_compares_them():
    assert language_for("de").is_file_namespace("DATEI")
    assert language_for("vi").file_namespace == "Tập tin"
    assert language_for("vi").is_file_namespace("tập_tin")
    assert language_for("vi").is_file_namespace(" Tập  tin ")
    assert not language_for("de").is_file_namespace("Kategorie")


def test_db_names_map_to_content_languages():
    assert language_from_dbname("dewiki") == "de"
    assert language_from_dbname("alswiki") == "gsw"
    assert language_from_dbname("be_x_oldwiki") == "be-tarask"
    assert language_from_dbname("zh_min_nanwiki") == "nan"
    assert language_from_dbname("nds_nlwiki") == "nds-nl"
    assert language_from_dbname("simplewiki") == "en"
    assert language_from_dbname("nowiki") == "nb"
    assert set(wiki_dbnames()) >= {"enwiki", "dewiki", "frwiki", "jawiki", "zhwiki", "arwiki"}
    assert {language_from_dbname(dbname) for dbname in wiki_dbnames()} == set(language_codes())


def test_a_wikis_own_namespace_settings():
    assert language_for("hewiki").is_file_namespace("קו")
    assert not language_for("he").is_file_namespace("קו")
    wu = language_for("wuuwiki")
    assert wu.code == "wuu" and wu.wiki == "wuuwiki"
    assert wu.file_namespace == "File"
    assert wu.is_file_namespace("文件")


def test_unknown_codes_name_the_near_matches():
    with pytest.raises(ValueError, match=r"unknown Wikipedia language code or db name 'dee'.*near matches: .*\bde\b"):
        language_for("dee")
    with pytest.raises(ValueError, match=r"'dewikii'.*near matches: dewiki"):
        language_from_dbname("dewikii")
    with pytest.raises(ValueError, match="no near match"):
        language_for("???")


def test_table_records_its_sources():
    source = table_source()
    assert re.fullmatch(r"1\.\d+(\.\d+)?\S*", source["mediawiki"]["version"])
    assert source["mediawiki"]["commit"]
    assert source["wikis"]["commit"]
    assert source["wikis"]["dblist"] == "dblists/wikipedia.dblist"
    assert len(language_codes()) > 300


# A MediaWiki tree and a wiki configuration in miniature, in the syntax of the real files.
DEFINES = """<?php
define( 'MW_VERSION', '1.99.0-test' );
define( 'NS_MEDIA', -2 );
define( 'NS_MAIN', 0 );
define( 'NS_FILE', 6 );
define( 'NS_FILE_TALK', 7 );
define( 'NS_CATEGORY', 14 );
"""
MESSAGES_EN = """<?php
/** English */
$fallback = false; // English has none
$rtl = false;
$namespaceNames = [
\tNS_MEDIA => 'Media',
\tNS_FILE => 'File', # a comment with ; and ] in it
\tNS_FILE_TALK => 'File_talk',
];
$namespaceAliases = [
\t'Image' => NS_FILE,
\t'Image_talk' => NS_FILE_TALK,
];
$linkTrail = '/^([a-z]+)(.*)$/sD';
$magicWords = [
\t'redirect' => [ 0, '#REDIRECT' ],
\t'img_thumbnail' => [ 1, 'thumb', 'thumbnail' ],
\t'img_upright' => [ 1, 'upright', 'upright=$1', 'upright $1' ],
\t'img_width' => [ 1, '$1px' ],
\t'notanimage' => [ 0, '__NOTOC__' ],
];
"""
# array() syntax, double quotes with escapes, concatenation, a string key that PHP reads as a number
MESSAGES_YY = """<?php
$namespaceNames = array(
\t"6" => "Bild\\u{00E4}" . 'r',
\tNS_CATEGORY => 'Kat',
);
$namespaceAliases = array( 'Pilt' => 6, "Old\\x20pic" => NS_FILE, 'Pilt_arutelu' => NS_FILE_TALK );
$magicWords = array(
\t'img_thumbnail' => array( '1', "pisi", 'thumb' ),
\t'redirect' => array( '0', '#SUUNA' ),
);
"""
MESSAGES_XX = """<?php
/* Xx falls back to Yy */
$fallback = 'yy';
$namespaceNames = [ NS_FILE_TALK => 'Xfile_talk' ];
$namespaceAliases = [ 'Pilt' => NS_CATEGORY, 'Xpic' => NS_FILE ];
$magicWords = [
\t'img_thumbnail' => [ '0', 'xthumb' ],
\t'img_width' => [ '1', '$1xp' ],
];
"""
DBLIST = "# generated\nxxwiki\nyy_oldwiki\nzzwiki\n"
INITIALISE = """<?php
return [
'wgLanguageCode' => [
\t'default' => '$lang',
\t'yy_oldwiki' => 'yy', // renamed
],
];
"""
NAMESPACES = """<?php
return [
'wgNamespaceAliases' => [
\t'+xxwiki' => [ 'XF' => NS_FILE, 'Xproject' => 4 ],
],
'wgExtraNamespaces' => [
\t'zzwiki' => [ NS_FILE => 'Zfile', 100 => 'Portal' ],
],
];
"""


def write_trees(root: Path) -> tuple[Path, Path]:
    mediawiki = root / "mediawiki"
    config = root / "config"
    files = {
        mediawiki / "includes" / "Defines.php": DEFINES,
        mediawiki / "languages" / "messages" / "MessagesEn.php": MESSAGES_EN,
        mediawiki / "languages" / "messages" / "MessagesYy.php": MESSAGES_YY,
        mediawiki / "languages" / "messages" / "MessagesXx.php": MESSAGES_XX,
        config / "dblists" / "wikipedia.dblist": DBLIST,
        config / "wmf-config" / "InitialiseSettings.php": INITIALISE,
        config / "wmf-config" / "core-Namespaces.php": NAMESPACES,
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return mediawiki, config


ENGLISH_WORDS = {
    "img_thumbnail": [1, "thumb", "thumbnail"],
    "img_upright": [1, "upright", "upright=$1", "upright $1"],
    "img_width": [1, "$1px"],
    "redirect": [0, "#REDIRECT"],
}
EXPECTED = {
    "image_options": ["img_thumbnail", "img_upright", "img_width"],
    "languages": {
        "en": {
            "fallbacks": [],
            "file_aliases": ["Image"],
            "file_namespace": "File",
            "magic_words": ENGLISH_WORDS,
            "messages_file": True,
        },
        "xx": {
            "fallbacks": ["yy", "en"],
            # Xx's 'Pilt' names a category: the language's own entry wins over Yy's
            "file_aliases": ["Xpic", "Old pic", "Image"],
            "file_namespace": "Bildär",
            "magic_words": {
                "img_thumbnail": [1, "xthumb", "pisi", "thumb", "thumbnail"],
                "img_width": [1, "$1xp", "$1px"],
                "redirect": [0, "#SUUNA", "#REDIRECT"],
            },
            "messages_file": True,
        },
        "yy": {
            "fallbacks": ["en"],
            "file_aliases": ["Pilt", "Old pic", "Image"],
            "file_namespace": "Bildär",
            "magic_words": {
                "img_thumbnail": [1, "pisi", "thumb", "thumbnail"],
                "redirect": [0, "#SUUNA", "#REDIRECT"],
            },
            "messages_file": True,
        },
        "zz": {"fallbacks": ["en"], "file_aliases": ["Image"], "file_namespace": "File", "messages_file": False},
    },
    "wikis": {
        "xxwiki": {"file_aliases": ["XF"], "language": "xx"},
        "yy_oldwiki": {"language": "yy"},
        "zzwiki": {"file_namespace": "Zfile", "language": "zz"},
    },
}


def test_script_regenerates_the_table_from_a_mediawiki_tree(tmp_path, capsys):
    mediawiki, config = write_trees(tmp_path)
    output = tmp_path / "languages.json"
    arguments = [str(mediawiki), str(config), "-o", str(output), "--mediawiki-source", "test tree"]
    assert make_languages.main([*arguments, "--config-source", "test config"]) == 0
    assert "4 languages, 3 wikis" in capsys.readouterr().out
    text = output.read_text(encoding="utf-8")
    table = json.loads(text)
    source = table.pop("source")
    assert source["mediawiki"] == {"version": "1.99.0-test", "commit": "test tree"}
    assert source["wikis"]["commit"] == "test config"
    assert source["wikis"]["language_codes"] == "wmf-config/InitialiseSettings.php (wgLanguageCode)"
    assert table == EXPECTED
    # one member a line, lists kept on theirs, and byte-for-byte the same on a second run
    assert '   "fallbacks": ["yy", "en"],\n' in text
    assert make_languages.main([*arguments, "--config-source", "test config"]) == 0
    assert output.read_text(encoding="utf-8") == text
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("$magicWords = [ 'img_width' => [ 1, $suffix ] ];", r"MessagesYy\.php: line 2: unsupported expression"),
        ("$magicWords = [ 'img_width' => [ 1, \"$1{$x}\" ] ];", r"line 2: double-quoted string with a variable"),
        ("$magicWords['img_width'] = [ 1, 'x' ];", r"line 2: unsupported statement on \$magicWords"),
        ("$fallback = 'en", r"line 2: unterminated string"),
        ("$namespaceNames = [ NS_UNKNOWN => 'X' ];", r"line 2: unknown constant .*NS_UNKNOWN"),
    ],
)
def test_script_stops_on_syntax_it_cannot_read(tmp_path, capsys, statement, message):
    mediawiki, config = write_trees(tmp_path)
    (mediawiki / "languages" / "messages" / "MessagesYy.php").write_text("<?php\n" + statement + "\n")
    output = tmp_path / "languages.json"
    assert make_languages.main([str(mediawiki), str(config), "-o", str(output)]) == 1
    assert re.search(message, capsys.readouterr().err)
    assert not output.exists()


def test_script_names_a_missing_checkout(tmp_path, capsys):
    assert make_languages.main([str(tmp_path / "nowhere"), str(tmp_path), "-o", str(tmp_path / "out.json")]) == 1
    assert "Defines.php: not found" in capsys.readouterr().err
