"""Stage 3: caption wikitext to plain text."""

from __future__ import annotations

import mwparserfromhell
import pytest

from builder.cleaning import _render, _render_links_only, clean_caption, normalize_text


@pytest.mark.parametrize(
    ("wikitext", "expected"),
    [
        # links, formatting, references
        ("The [[River Thames|Thames]] at [[London]]", "The Thames at London"),
        ("'''Bold''' and ''italic'' and '''''both'''''", "Bold and italic and both"),
        ("Rock 'n' roll", "Rock 'n' roll"),
        ("A goddess.<ref>{{cite web|url=http://x|title=y}}</ref>", "A goddess."),
        ('A goddess <ref name="a" />.', "A goddess."),
        ("A town<!-- check this -->hall", "A townhall"),
        ("[[:Category:Rabbits]] and [[Category:Rabbits]]", "Category:Rabbits and"),
        ("Marked by [[File:Icon.svg|20px]] icons", "Marked by icons"),
        ("[http://example.org the example site] and [http://example.org]", "the example site and"),
        # HTML
        ("First line<br />second<br>third", "First line second third"),
        ("<small>Small</small> <span style='x'>span</span> <sup>2</sup>", "Small span 2"),
        ("Caf&eacute; &amp; bar&nbsp;1&#8211;2", "Café & bar 1–2"),
        # templates that carry text
        ("{{USS|Monterey|BM-6|6}} at anchor", "USS Monterey at anchor"),
        ("{{USS|Monterey|BM-6}}", "USS Monterey (BM-6)"),
        ("{{HMS|Victory}}", "HMS Victory"),
        ("{{USS|Constitution||2}}", "Constitution"),
        ("{{Ship|HMS|Dreadnought|1906|6}}", "HMS Dreadnought"),
        ("A {{convert|5|km|mi}} walk", "A 5 km walk"),
        ("{{convert|5|to|10|km}}, {{cvt|5|-|10|ft}}", "5 to 10 km, 5–10 ft"),
        ("{{lang|fr|la Seine}} and {{lang-de|der Rhein}}", "la Seine and der Rhein"),
        ("{{nihongo|Mount Fuji|富士山|Fujisan}}", "Mount Fuji (富士山, Fujisan)"),
        ("{{nowrap|[[Paris]] in 1900}}", "Paris in 1900"),
        ("{{circa|1900}} and {{c.}}", "c. 1900 and c."),
        ("1914{{snd}}1918 {{ndash}} {{'}}", "1914 – 1918 – '"),
        ("{{frac|1|2}} mile", "1/2 mile"),
        ("{{birth date|1900|1|2}}", "January 2, 1900"),
        ("{{ill|Hans Müller|de|Hans Müller (Maler)}}", "Hans Müller"),
        # templates that are dropped
        ("A bridge{{citation needed|date=May 2020}}.", "A bridge."),
        ("A bridge{{efn|A note}} and {{some unknown template|x}}", "A bridge and"),
        # whitespace and invisible characters
        ("  Line\nbreak\tand   spaces  ", "Line break and spaces"),
        ("zero\u200bwidth and soft\u00adhyphen", "zerowidth and softhyphen"),
        ("no\u00a0break thin\u2009space", "no break thin space"),
    ],
)
def test_clean_caption(wikitext: str, expected: str) -> None:
    assert clean_caption(wikitext) == expected


@pytest.mark.parametrize("broken", ["[[Foo|bar", "{{convert|5", "<small>unclosed", "]] stray {{", "'''"])
def test_malformed_markup_never_raises(broken: str) -> None:
    assert isinstance(clean_caption(broken), str)


def test_deep_nesting_is_cut_not_recursed_forever() -> None:
    """Past its depth limit mwparserfromhell keeps markup as text; rendering must still end."""
    nested = "{{nowrap|" * 60 + "deep" + "}}" * 60
    text = clean_caption(f"Start {nested} end")
    assert text.startswith("Start ") and text.endswith(" end")


def test_normalize_text_spacing_around_punctuation() -> None:
    assert normalize_text("Paris , France ( 1900 ) .") == "Paris, France (1900)."


@pytest.mark.parametrize(
    "caption",
    [
        "The [[River Thames|Thames]] at [[London]], seen from [[Tower Bridge]]",
        "[[:Category:Rabbits]] near [[Category:Rabbits]] and [[File:X.jpg]]",
        "Pipe trick [[Foo|]] and [[Foo#Section|a section]]",
        "Rock 'n' roll in [[Memphis, Tennessee|Memphis]]",
    ],
)
def test_links_only_fast_path_matches_the_full_render(caption: str) -> None:
    fast = _render_links_only(caption)
    assert fast is not None
    assert normalize_text(fast) == normalize_text(_render(mwparserfromhell.parse(caption), 0))


@pytest.mark.parametrize("caption", ["''Italic'' [[link]]", "{{lang|fr|x}}", "[[a [[b]] c]]", "[http://x y]", "&amp;"])
def test_fast_path_declines_other_markup(caption: str) -> None:
    assert _render_links_only(caption) is None
