"""Stage 3: caption wikitext to the plain text a reader sees."""

from __future__ import annotations

from collections.abc import Callable

import mwparserfromhell
import pytest
from mwparserfromhell.parser import ParserError
from mwparserfromhell.wikicode import Wikicode

from benchmarks.pathological import CLEANING_SHAPES
from builder.extract import cleaning
from builder.extract.cleaning import MAX_DEPTH, CaptionError, clean_caption, normalize_text
from builder.extract.templates import ALIASES, DROPPED, RENDERERS, is_known_template, template_key

REALISTIC = [
    (
        (
            "The '''[[USS Monterey (BM-6)|{{USS|Monterey|BM-6|6}}]]''' at [[Mare Island]], {{circa|1900}}."
            "<ref>{{cite web|url=http://x|title=y}}</ref>"
        ),
        "The USS Monterey at Mare Island, c. 1900.",
    ),
    (
        'Crew of {{USS|Olympia|C-6}} at [[Manila]], {{circa|1898}}<ref name="nhhc"/>',
        "Crew of USS Olympia (C-6) at Manila, c. 1898",
    ),
    ("The {{convert|1,000|ft|m|adj=on}} tower in 1889<!-- date checked -->.", "The 1,000 ft tower in 1889."),
    ("[[Mount Fuji]] ({{lang-ja|富士山}}) from [[Lake Kawaguchi]]", "Mount Fuji (富士山) from Lake Kawaguchi"),
    (
        "Portrait of {{sortname|Ada|Lovelace}}, {{circa|1840}}<br />''(oil on canvas)''",
        "Portrait of Ada Lovelace, c. 1840 (oil on canvas)",
    ),
    (
        "Map of [[France]] [[File:Flag of France.svg|20px]] with {{hlist|[[Paris]]|[[Lyon]]}} marked",
        "Map of France with Paris, Lyon marked",
    ),
]

LINKS = [
    ("The [[River Thames|Thames]] at [[London]]", "The Thames at London"),
    ("[[Paris]]ian cafés", "Parisian cafés"),
    ("Label with markup: [[Paris|''the'' city]]", "Label with markup: the city"),
    ("[[Foo#History|history]] of [[Foo#Bar]]", "history of Foo#Bar"),
    ("[[:Category:Rabbits]] and [[Category:Rabbits]]", "Category:Rabbits and"),
    ("Marked by [[File:Icon.svg|20px]] icons", "Marked by icons"),
    ("A [[ file : Old map.png |thumb|A map of [[Paris]]]] caption", "A caption"),
    ("[[Image:X.jpg]][[media:X.ogg]][[CATEGORY:Maps]] [[:File:X.jpg]]", "File:X.jpg"),
    ("[[fr:Paris]] and [[wikt:cat|cat]]", "fr:Paris and cat"),
]

FORMATTING_AND_REFERENCES = [
    ("'''Bold''' and ''italic'' and '''''both'''''", "Bold and italic and both"),
    ("Rock 'n' roll", "Rock 'n' roll"),
    ("''Unclosed italic", "Unclosed italic"),
    ("A goddess.<ref>{{cite web|url=http://x|title=y}}</ref>", "A goddess."),
    ('A goddess <ref name="a" />.', "A goddess."),
    ("Paris <ref>x</ref>.", "Paris."),
    ("A town<!-- check this -->hall", "A townhall"),
    ("Text <!-- unclosed comment", "Text"),
]

HTML = [
    ("First line<br />second<br>third", "First line second third"),
    ("<small>Small</small> <span style='x'>span</span> m<sup>2</sup>", "Small span m2"),
    ("<abbr title='United Nations'>UN</abbr> <i>HQ</i>", "UN HQ"),
    ("<nowiki>[[not a link]]</nowiki>", "[[not a link]]"),
    ("Water, <chem>H2O</chem>, and <math>E = mc^2</math>", "Water, H2O, and E = mc^2"),
    ("Before<gallery>\nA.jpg|x\n</gallery>after", "Beforeafter"),
    ("A<timeline>x</timeline>B<syntaxhighlight lang='python'>x</syntaxhighlight>C<score>c'</score>", "ABC"),
    ("D<templatedata>{}</templatedata>", "D"),
    ("<div>Left</div><div>Right</div>", "Left Right"),
    ("[http://example.org the example site] and [http://example.org]", "the example site and"),
    ("See https://example.org/page for more", "See for more"),
    ("[//example.org ''protocol-relative'']", "protocol-relative"),
    ("Caf&eacute; &amp; bar&nbsp;1&#8211;2", "Café & bar 1–2"),
    ("&lt;b&gt; is not a tag", "<b> is not a tag"),
]

SHIPS = [
    ("{{USS|Monterey|BM-6|6}} at anchor", "USS Monterey at anchor"),
    ("{{USS|Monterey|BM-6}}", "USS Monterey (BM-6)"),
    ("{{HMS|Victory}}", "HMS Victory"),
    ("{{USS|Constitution||2}}", "Constitution"),
    ("{{USS|Monterey|BM-6|1}}", "BM-6"),
    ("{{SMS|Emden|1908|3}}", "Emden (1908)"),
    ("{{HMNZS|Achilles|70|5}}", "HMNZS (70)"),
    ("{{HSwMS|Vasa}}", "HSwMS Vasa"),
    ("{{Ship|HMS|Dreadnought|1906|6}}", "HMS Dreadnought"),
    ("{{ship|SS|Great Britain}}", "SS Great Britain"),
]

CONVERT = [
    ("A {{convert|5|km|mi}} walk", "A 5 km walk"),
    ("{{convert|5|km}}", "5 km"),
    ("{{convert|5|to|10|km}}", "5 to 10 km"),
    ("{{convert|5|-|10|km}}", "5–10 km"),
    ("{{convert|5|and|10|ft}}", "5 and 10 ft"),
    ("{{cvt|1,200|m|ft|abbr=on|sp=us}}", "1,200 m"),
    ("{{ Convert |6|ft|2|in|m}} tall", "6 ft 2 in tall"),
    ("{{convert|100|km2|sqmi}}", "100 km2"),
]

LANGUAGES = [
    ("{{lang|fr|la Seine}} and {{lang-de|der Rhein}}", "la Seine and der Rhein"),
    ("{{langx|it|Il Duomo}}", "Il Duomo"),
    ("{{transl|ja|Fujisan}}, {{transliteration|ar|ALA|Qurʾān}}", "Fujisan, Qurʾān"),
    ("{{nihongo|Mount Fuji|富士山|Fujisan}}", "Mount Fuji (富士山, Fujisan)"),
    ("{{nihongo|Mount Fuji||Fujisan}}", "Mount Fuji (Fujisan)"),
    ("{{nihongo|Mount Fuji}}", "Mount Fuji"),
    ("{{nihongo2|富士山}}", "富士山"),
]

WRAPPERS = [
    ("{{nowrap|[[Paris]] in 1900}}", "Paris in 1900"),
    ("{{nobr|10 km}} {{nobreak|away}}", "10 km away"),
    ("{{small|(left)}} {{smaller|x}} {{big|y}} {{larger|z}}", "(left) x y z"),
    ("{{em|very}} {{strong|bold}} {{var|x}} {{smallcaps|bc}} {{sc|ad}}", "very bold x bc ad"),
    ("{{not a typo|Teh}} {{proper name|iPhone}}", "Teh iPhone"),
    ("{{sic|teh}} church", "teh church"),
    ("The church{{sic}}", "The church"),
    ("{{angbr|x}} and {{italic title}}", "⟨x⟩ and"),
    ("{{circa|1900}} and {{c.}}", "c. 1900 and c."),
    ("{{ca.|1850}}, {{circa.|1860}}, {{C.|1870|lk=no}}", "c. 1850, c. 1860, c. 1870"),
]

PUNCTUATION = [
    ("1914{{snd}}1918", "1914 – 1918"),
    ("1914{{spaced ndash}}1918{{spnd}}1939", "1914 – 1918 – 1939"),
    ("1914{{ndash}}1918 and 1939{{nd}}1945, 1{{en dash}}2", "1914–1918 and 1939–1945, 1–2"),
    ("Paris{{mdash}}the capital", "Paris—the capital"),
    ("Paris{{spaced mdash}}capital{{spd}}city", "Paris — capital — city"),
    ("The Smiths{{'}} house and Jones{{'s}} dog", "The Smiths' house and Jones's dog"),
    ("10{{nbsp}}km", "10 km"),
    ("Paris{{·}}London{{dot}}Rome{{middot}}Oslo", "Paris · London · Rome · Oslo"),
    ("Left{{-}}{{clear}}{{clr}}right", "Leftright"),
    ("Line{{break}}two", "Line two"),
    ("a{{=}}b {{!}} c", "a=b | c"),
]

OTHER_TEMPLATES = [
    ("{{frac|1|2}} mile", "1/2 mile"),
    ("{{frac|2|1|2}} miles, {{sfrac|3|4}}", "2 1/2 miles, 3/4"),
    ("{{frac|4}}", "1/4"),
    ("{{abbr|UN|United Nations}}", "UN"),
    ("{{ill|Hans Müller|de|Hans Müller (Maler)}}", "Hans Müller"),
    ("{{interlanguage link|Hans Müller|de|lt=the painter}}", "the painter"),
    ("{{flag|France}} and {{flagcountry|Japan}}", "France and Japan"),
    ("{{flagicon|USA}} Washington", "Washington"),
    ("{{sortname|Ada|Lovelace}}", "Ada Lovelace"),
    ("{{ubl|Paris|London}}; {{unbulleted list|a|b|c}}", "Paris, London; a, b, c"),
    ("{{hlist|[[Paris]]|''London''}}", "Paris, London"),
    ("{{plainlist|\n* Paris\n* London\n}} and {{flatlist|\n* A\n* B\n}}", "Paris, London and A, B"),
    ("{{date|2020-05-03}}", "2020-05-03"),
    ("{{birth date|1900|1|2}}", "January 2, 1900"),
    ("{{birth date|1900|1|2|df=y}}", "2 January 1900"),
    ("{{death date|1950}}", "1950"),
    ("{{start date|1900|1}}", "January 1900"),
    ("{{death date and age|1950|3|4|1900|1|2}}", "March 4, 1950"),
    ("Aged {{age|1900|1|2|1950|3|4}}", "Aged"),
    ("{{as of|2020}}", "As of 2020"),
    ("{{as of|2020|5|3}}", "As of 3 May 2020"),
    ("{{as of|2020|5|3|df=US|lc=y}}", "as of May 3, 2020"),
    ("{{{1}}} and {{{2|default}}}", "and default"),
]

DROPPED_TEMPLATES = [
    ("A bridge{{citation needed|date=May 2020}}.", "A bridge."),
    ("A bridge{{cn}}{{fact}}{{efn|A note}}{{efn-ua|x}}{{efn-lr|y}}.", "A bridge."),
    ("Rome{{sfn|Smith|2001|p=4}}{{sfnp|Jones|1999}}{{harvnb|Smith|2001}}{{refn|x}}{{r|a}}{{rp|12}}.", "Rome."),
    ("Rome{{clarify|date=x}}{{when}}{{who}}{{which}}{{by whom}}{{dubious}}{{vague}}.", "Rome."),
    ("Rome{{failed verification}}{{better source needed}}{{update inline}}{{dead link}}.", "Rome."),
    ("Rome{{webarchive|url=x}}{{commons category|Rome}}{{portal|Italy}}{{main|Rome}}{{see also|Italy}}", "Rome"),
    ("Rome{{Cite news|title=x}}{{cite book|title=y}}{{citation|title=z}}{{reflist}}", "Rome"),
    ("A bridge {{some unknown template|x}} here", "A bridge here"),
    ("{{Nowrap|a}} {{ nowrap |b}} {{not_a_typo|c}} {{Not  a typo|d}} {{Template:nowrap|e}}", "a b c d e"),
    ("{{convert<!-- metric -->|5|km}}", "5 km"),
]

WHITESPACE_AND_INVISIBLE = [
    ("  Line\nbreak\tand   spaces  ", "Line break and spaces"),
    ("Windows\r\nline", "Windows line"),
    ("zero\u200bwidth and soft\u00adhyphen", "zerowidth and softhyphen"),
    ("क्\u200dष and 👩\u200d🔬 keep their joiner", "क्\u200dष and 👩\u200d🔬 keep their joiner"),
    ("no\u00a0break thin\u2009space", "no break thin space"),
    ("bidi\u200emark \u202aembedding\u202c", "bidimark embedding"),
    ("bell\x07 and null\x00, private\ue000 and unassigned\u0378", "bell and null, private and unassigned"),
    ("line\u2028separator", "line separator"),
]

# Unclosed markup is closed at the end of the caption, as a browser closes unclosed HTML; stray closers go.
MALFORMED = [
    ("[[Foo|bar", "bar"),
    ("{{convert|5", "5"),
    ("<small>unclosed", "unclosed"),
    ("]] stray {{", "stray"),
    ("'''", ""),
    ("{{nowrap|[[Paris]]", "Paris"),
    ("Paris<ref>unclosed reference", "Paris"),
    ("Paris</ref> and </span>Rome}}", "Paris and Rome"),
    ("<b>bold <i>both</b> roman", "bold both roman"),
    ("{{{{nowrap|x}}}}", ""),
    ("{{{x}}", ""),
    ("x [http://example.org unclosed label", "x [ unclosed label"),
    ("a < b and c > d, 1<2", "a < b and c > d, 1<2"),
    ("<foo>unknown tag</foo>", "<foo>unknown tag</foo>"),
    ("<span title='{{x'>text</span>", "text"),
    ("[[Foo\nbar]] and [[a|b\nc]]", "Foo bar and b c"),
    ("[[a<br/>b|label]]", "label"),
    ("{{nowrap<span>x</span>|y}}", ""),
    ("a []][ b", "a b"),
]

VERBATIM = [
    ("<nowiki>[[not a link]] {{x}} ''y'' <b>z</b></nowiki>", "[[not a link]] {{x}} ''y'' <b>z</b>"),
    ("<nowiki>&amp; &lt;</nowiki> and <nowiki/>x", "& < and x"),
    ("<nowiki>unclosed [[to]] the end", "unclosed [[to]] the end"),
    ("<math>\\{x \\mid x < 1\\}</math>", "\\{x \\mid x < 1\\}"),
    ("<pre>* not a list</pre>", "* not a list"),
    ("{{lang|fr|<nowiki>a|b</nowiki>}}", "a|b"),
    ("<code>x = [[y]]</code> and <code>{{nowrap|z}}</code>", "x = y and z"),
    ("{{code|1=a = b|lang=python}} {{math|''x''^2}} {{mvar|n}}", "a = b x^2 n"),
    ("<nowiki><!-- shown --></nowiki><!-- <nowiki> hidden </nowiki> -->", "<!-- shown -->"),
]

# Templates whose text the authors' extractor kept and this one used to drop.
LOST_TEXT = [
    ("The {{NYCS|J}} and {{NYCS|Z}} trains", "The J and Z trains"),
    ("{{sclass|Iowa|battleship}} {{sclass2|Ticonderoga|cruiser}}", "Iowa-class battleship Ticonderoga-class cruiser"),
    (
        "{{sclass|Iowa|battleship|0}}, {{sclass|Iowa|battleship|4}}, {{sclass|Iowa|battleship|5}}",
        "Iowa-class, Iowa class, Iowa",
    ),
    (
        "{{sclass-|Kongō|battlecruiser|2}} {{sclass2-|Type 45|destroyer}}",
        "Kongō-class battlecruiser Type 45-class destroyer",
    ),
    ("{{Warship|HMS|Hood|51}} and {{MS|Estonia}}", "HMS Hood (51) and MS Estonia"),
    ("{{rws|Bath Spa}}, {{stnlnk|Bath Spa}}, {{stnlink|Bristol}}", "Bath Spa railway station, Bath Spa, Bristol"),
    ("{{IPAblink|ɑ}} and {{angbr|ɑ}}", "ɑ and ⟨ɑ⟩"),
    ("{{chem|H|2|O}}, {{chem2|CO2}}", "H2O, CO2"),
    ("{{resize|90%|small}} {{resize|text}} {{replace|a-b-c|-|+}}", "small text a+b+c"),
    ("{{val|1.23|u=m}} {{color|red|warm}} {{legend|#f00|Land}} {{center|x}} {{ov|y}} {{pi}}", "1.23 m warm Land x y π"),
    ("a{{spaces|3}}b{{col-break}}c {{ordered list|x|y}}", "a b c x, y"),
    ("Text{{notetag|a note}}{{credit|someone}}", "Text"),
    ("1.5{{e|3}} m", "1.5×10^3 m"),
]


@pytest.mark.parametrize(
    ("wikitext", "expected"),
    REALISTIC
    + LINKS
    + FORMATTING_AND_REFERENCES
    + HTML
    + SHIPS
    + CONVERT
    + LANGUAGES
    + WRAPPERS
    + PUNCTUATION
    + OTHER_TEMPLATES
    + DROPPED_TEMPLATES
    + WHITESPACE_AND_INVISIBLE
    + MALFORMED
    + VERBATIM
    + LOST_TEXT,
)
def test_clean_caption(wikitext: str, expected: str) -> None:
    assert clean_caption(wikitext) == expected


@pytest.mark.parametrize(
    "caption",
    [
        "Plain text, no markup at all",
        "The [[River Thames|Thames]] at [[London]], seen from [[Tower Bridge]]",
        "[[:Category:Rabbits]] near [[Category:Rabbits]] and [[File:X.jpg]] and [[ image : Y.png ]]",
        "Pipe trick [[Foo|]] and [[Foo#Section|a section]]",
        "Rock 'n' roll in [[Memphis, Tennessee|Memphis]]",
        "Left to right: A, B; mailto:someone@example.org",
        "* A list item\n: an indented line\n== A heading ==\n----",
        "[[Foo\nbar]] [[a|b\nc]]",
    ],
)
def test_fast_path_matches_the_parser(caption: str) -> None:
    """Text without markup after the scan skips the parser; the result must not depend on it."""
    prepared = cleaning._Scanner(caption).run()
    assert clean_caption(caption) == normalize_text(cleaning._parse_and_render(prepared))


def _nested(levels: int) -> str:
    return "Start " + "{{nowrap|[[a|<span>" * levels + "deep" + "</span>]]}}" * levels + " end"


def test_nesting_up_to_the_limit_is_rendered() -> None:
    assert clean_caption(_nested(MAX_DEPTH // 3)) == "Start deep end"
    assert clean_caption("{{nowrap|" * MAX_DEPTH + "deep" + "}}" * MAX_DEPTH) == "deep"


@pytest.mark.parametrize(
    "caption",
    [
        _nested(MAX_DEPTH),
        "Start " + "{{nowrap|" * MAX_DEPTH + "{{nowrap|deep}} kept" + "}}" * MAX_DEPTH + " end",
        "{{" * 1000 + "x" + "}}" * 1000,
        "{{nowrap|" * (MAX_DEPTH + 1) + "deep",
        "[[" * 1000 + "x" + "]]" * 1000,
        "A [[a|" * 1000 + "x" + "]]" * 1000,
        "{{{" * 1000 + "x" + "}}}" * 1000 + " end",
        "{{a|" * 100_000 + "x",
    ],
    ids=["mixed", "kept", "braces", "unclosed-templates", "brackets", "links", "arguments", "unclosed-100k"],
)
def test_nesting_past_the_limit_is_a_caption_error(caption: str) -> None:
    """Deeper than MAX_DEPTH (and the parser's own limits): a CaptionError, never a RecursionError."""
    with pytest.raises(CaptionError, match="nested deeper"):
        clean_caption(caption)


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("''x'' " * 1000, "x " * 999 + "x"),
        ("'''''b''' i'' " * 1000, "b i " * 999 + "b i"),
        ("<ref>" * 1000 + "x" + "</ref>" * 1000, ""),
        ("<ref>x</ref>" * 1000 + "y", "y"),
        ("<br/>" * 1000 + "y", "y"),
        ("<span>" * 1000 + "x" + "</span>" * 1000, "x"),
        ("<li>a" * 1000, "a " * 999 + "a"),
        ("<nowiki>" * 1000 + "x", "<nowiki>" * 999 + "x"),
        ("[[a]]" * 1000, "a" * 1000),
        ("{{nowrap|a}}" * 1000, "a" * 1000),
    ],
    ids=[
        "italics",
        "bold",
        "nested-refs",
        "refs",
        "breaks",
        "nested-tags",
        "list-items",
        "unclosed-nowikis",
        "links",
        "templates",
    ],
)
def test_long_flat_markup_is_no_nesting(caption: str, expected: str) -> None:
    """Markup repeated side by side, or extension tags (which do not nest), is rendered whatever its length."""
    assert clean_caption(caption) == expected


def test_parser_failure_is_a_caption_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(text: str, skip_style_tags: bool = False) -> Wikicode:
        raise ParserError("tokenizer bug")

    monkeypatch.setattr(mwparserfromhell, "parse", fail)
    with pytest.raises(CaptionError, match=r"cannot parse the caption \(ParserError: .*tokenizer bug"):
        clean_caption("Broken {{x}} <small>text</small>")
    assert clean_caption("[[Plain|plain]] links need no parser") == "plain links need no parser"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris , France ( 1900 ) .", "Paris, France (1900)."),
        ("Really ? Yes ! a ; b : c", "Really? Yes! a; b: c"),
        ("\n\t \u00a0", ""),
        ("", ""),
    ],
)
def test_normalize_text(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("convert", "Convert"),
        (" convert\n", "Convert"),
        ("not_a  typo", "Not a typo"),
        ("Template:nowrap", "Nowrap"),
        ("template : Convert", "Convert"),
        ("uSS", "USS"),
        ("hswms", "Hswms"),
    ],
)
def test_template_key_follows_mediawiki_titles(name: str, key: str) -> None:
    assert template_key(name) == key


@pytest.mark.parametrize(
    ("name", "known"),
    [
        ("convert", True),
        ("Cvt", True),
        ("lang-fr", True),
        ("cite web", True),
        ("Citation needed", True),
        ("Infobox ship", False),
        ("korean", False),
    ],
)
def test_is_known_template(name: str, known: bool) -> None:
    assert is_known_template(name) is known


def test_registry_keys_are_template_titles() -> None:
    """A key MediaWiki would spell differently could never match."""
    names = [*RENDERERS, *ALIASES, *ALIASES.values(), *DROPPED]
    assert [name for name in names if template_key(name) != name] == []
    assert set(ALIASES.values()) <= set(RENDERERS)
    assert not set(ALIASES) & set(RENDERERS)
    assert not set(RENDERERS) & DROPPED


@pytest.mark.parametrize(
    "build", [build for _, build, _ in CLEANING_SHAPES], ids=[name for name, _, _ in CLEANING_SHAPES]
)
def test_pathological_shapes_take_linear_time(build: Callable[[int], str]) -> None:
    """Each shape once at 200,000 characters: about a second now, minutes to hours before the scan balanced them.

    Shapes nested past MAX_DEPTH end in a CaptionError (the caption is dropped): as fast, never a hang.
    """
    try:
        text = clean_caption(build(200_000))
    except CaptionError as error:
        assert "nested deeper" in str(error)
        return
    assert [markup for markup in ("{{", "}}", "[[", "]]", "<ref") if markup in text] == []
