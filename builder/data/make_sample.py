"""Writes the embedded sample dump ``enwiki-20240101-sample-pages-articles.xml.bz2``.

The pages are written for the project (not copied from Wikipedia) to exercise
every stage: images reused across pages with differing captions, alt texts,
infoboxes, galleries, templates and references in captions, near-duplicates,
an icon used on more than ten pages, redirects, other namespaces, commented-out
and unclosed image markup, and File-namespace redirects (one from a title the
articles still use, one chained to it, one to an article).

It also writes ``enwiki-20240101-sample-image.sql.gz``, the wiki's ``image`` table in
the format of Wikimedia's ``…-image.sql.gz`` (mysqldump: ``CREATE TABLE``, multi-row
``INSERT`` statements, escaped strings, metadata blobs), in which two differently named
files of the sample have the same SHA-1, and ``enwiki-20240101-sample-pages-meta-history.xml.bz2``,
the edit history of the same pages (bronze's input): every page's revisions in the export format of
Wikimedia's history dumps (``<parentid>``, contributors by name or IP, ``<minor />``, edit
summaries), ending in the text of the articles dump. Their edits are the kinds editors make to
captions: typo fixes, reworded captions, a caption added with a photo, vandalism and its revert.
Run ``python builder/data/make_sample.py`` after editing the pages; the output is byte-for-byte
reproducible.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

OUTPUT = Path(__file__).resolve().parent / "enwiki-20240101-sample-pages-articles.xml.bz2"
IMAGE_TABLE = Path(__file__).resolve().parent / "enwiki-20240101-sample-image.sql.gz"
HISTORY = Path(__file__).resolve().parent / "enwiki-20240101-sample-pages-meta-history.xml.bz2"

HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ http://www.mediawiki.org/xml/export-0.10.xsd" \
version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.42.0-wmf.10</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="-2" case="first-letter">Media</namespace>
      <namespace key="-1" case="first-letter">Special</namespace>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="2" case="first-letter">User</namespace>
      <namespace key="4" case="first-letter">Wikipedia</namespace>
      <namespace key="6" case="first-letter">{file_namespace}</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""

FRENCH_CITIES = ["Lyon", "Marseille", "Toulouse", "Nice", "Nantes", "Strasbourg", "Montpellier", "Bordeaux", "Lille",
                 "Rennes", "Reims", "Le Havre"]  # fmt: skip

# (title, namespace, redirect target or None, wikitext)
PAGES: list[tuple[str, int, str | None, str]] = [
    (
        "Easter Bunny",
        0,
        None,
        """{{Short description|Folkloric figure and symbol of Easter}}
[[File:Easter Bunny Postcard 1907.jpg|thumb|upright=1.1|alt=A hare stands on its hind legs and carries several branches.|The Easter Bunny brings eggs to the children in this postcard from 1907.<ref>{{cite web|url=https://example.org/postcards|title=Early Easter postcards|access-date=2023-04-01}}</ref>]]
The '''Easter Bunny''' (also called the '''Easter Rabbit''' or '''Easter Hare''') is a folkloric figure and symbol of [[Easter]], depicted as a [[rabbit]] bringing [[Easter egg]]s.

== Origins ==
The custom was first mentioned in a German text of 1682.<ref>{{cite book|title=De ovis paschalibus|year=1682}}</ref>
<!-- [[File:Old Easter card.jpg|thumb|An old card was removed from the article in 2019.]] -->
See also [[:File:Easter Bunny Postcard 1907.jpg]] for the full-size scan.

[[Category:Easter traditions]]
[[Category:Fictional rabbits and hares]]""",
    ),
    (
        "Ēostre",
        0,
        None,
        """'''Ēostre''' is a West Germanic spring goddess whose name is connected with [[Easter]].

== Connection to hares ==
[[Image:Easter_Bunny_Postcard_1907.jpg|thumb|left|alt=A drawing shows an Easter bunny that carries branches.|A rabbit is depicted on an Easter postcard from 1907.]]
In the 19th century, scholars began to link the goddess with [[hare]]s.

[[Category:Anglo-Saxon paganism]]""",
    ),
    (
        "Easter postcard",
        0,
        None,
        """{{Infobox artifact
| name = Easter postcard
| image = easter_Bunny_Postcard_1907.jpg
| alt = A postcard shows a hare with a basket of colored eggs.
| caption = A postcard featuring the Easter Bunny and a basket of eggs
| material = Card
}}
An '''Easter postcard''' is a [[postcard]] sent around [[Easter]].

[[Category:Postcards]]""",
    ),
    (
        "Hare",
        0,
        None,
        """[[File:Lepus europaeus (Causse Méjean).jpg|thumb|A European hare is sitting in the snow on the Causse Méjean.]]
'''Hares''' are mammals of the genus ''[[Lepus]]''.

== In folklore ==
[[File:Broken hare.jpg|thumb|A hare sits in a field and the markup is never closed
Hares appear in the folklore of many cultures.

<gallery mode="packed">
File:Easter Bunny Postcard 1907.jpg|Postcard, 1907
File:Hare in snow.jpg|A mountain hare changes its coat to white in winter.|alt=A white hare in snow
</gallery>

[[Category:Hares]]""",
    ),
    (
        "Easter Rabbit",
        0,
        "Easter Bunny",
        "#REDIRECT [[Easter Bunny]]\n[[File:Easter Bunny Postcard 1907.jpg|thumb|This redirect page should never be mined.]]",
    ),
    (
        "Easter Hare",
        0,
        "Easter Bunny",
        "#REDIRECT [[Easter Bunny]] {{R from alternative name}}",
    ),
    (
        "Belfast Blitz",
        0,
        None,
        """{{Infobox military conflict
| conflict = Belfast Blitz
| partof = the [[Strategic bombing during World War II|Second World War]]
| image = [[File:Belfast Blitz rubble 1941.jpg|300px|alt=Soldiers with shovels stand among ruined houses.]]
| caption = Troops clearing rubble after the May air raid on Belfast
| date = 7 April – 6 May 1941
}}
The '''Belfast Blitz''' consisted of four German air raids on [[Belfast]] in 1941.

[[Category:1941 in Northern Ireland]]""",
    ),
    (
        "Belfast",
        0,
        None,
        """'''Belfast''' is the capital city of [[Northern Ireland]].

== Second World War ==
[[File:Belfast_Blitz_rubble_1941.jpg|thumb|alt=Soldiers with shovels stand among ruined houses.|Soldiers clearing rubble after the May air raid on Belfast]]
The city was bombed in April and May 1941.

[[Category:Belfast]]""",
    ),
    (
        "Northern Ireland in the Second World War",
        0,
        None,
        """[[File:Belfast Blitz rubble 1941.jpg|thumb|Soldiers cleared the rubble after the German air raid of May 1941.]]
'''Northern Ireland''' was part of the [[United Kingdom]] during the [[Second World War]].

[[Category:Northern Ireland in World War II]]""",
    ),
    (
        "Wetting",
        0,
        None,
        """'''Wetting''' is the ability of a liquid to keep contact with a solid surface.
[[File:Water droplet on fabric.jpg|thumb|Water bead on a fabric that has been made non-wetting by chemical treatment.]]

[[Category:Fluid mechanics]]""",
    ),
    (
        "Durable water repellent",
        0,
        None,
        """[[File:Water droplet on fabric.jpg|thumb|Fluorine-containing durable water repellent makes a fabric water-resistant.]]
'''Durable water repellent''' is a coating added to fabrics at the factory to make them water-resistant.

[[Category:Textile treatments]]""",
    ),
    (
        "USS Monterey (BM-6)",
        0,
        None,
        """{{Infobox ship begin}}
'''USS ''Monterey'' (BM-6)''' was a [[monitor (warship)|monitor]] of the [[United States Navy]].
[[File:USS Monterey (BM-6) at Mare Island.jpg|thumb|{{USS|Monterey|BM-6|6}} lies at anchor off [[Mare Island Naval Shipyard|Mare Island]], {{circa|1900}}.<ref>{{cite web|url=https://example.org/danfs|title=Monterey}}</ref>]]

[[Category:Monitors of the United States Navy]]""",
    ),
    (
        "Mare Island Naval Shipyard",
        0,
        None,
        """The '''Mare Island Naval Shipyard''' was the first [[United States Navy]] base on the Pacific Ocean.
[[File:USS_Monterey_(BM-6)_at_Mare_Island.jpg|thumb|right|250px|The monitor {{USS|Monterey|BM-6}} was photographed at the yard in 1898.]]

[[Category:Shipyards of the United States Navy]]""",
    ),
    (
        "Tower Bridge",
        0,
        None,
        """[[File:Tower Bridge at dusk.jpg|thumb|'''Tower Bridge''' is lit up at dusk over the [[River Thames]].]]
'''Tower Bridge''' is a combined [[bascule bridge|bascule]] and [[suspension bridge]] in [[London]].

[[Category:Bridges in London]]""",
    ),
    (
        "River Thames",
        0,
        None,
        """The '''River Thames''' flows through southern England, including [[London]].
[[File:Tower Bridge at dusk.jpg|thumb|Tower Bridge is lit up at dusk over the river Thames]]

[[Category:Rivers of England]]""",
    ),
    (
        "Bridges in London",
        0,
        None,
        """There are more than 200 '''bridges in London'''.
[[File:Tower%20Bridge%20at%20dusk.jpg|thumb|Tower Bridge is lit up at dusk over the River Thames (2015).]]

[[Category:Bridges in London|*]]""",
    ),
    (
        "Bascule bridge",
        0,
        None,
        """A '''bascule bridge''' is a moveable bridge with a counterweight.
[[File:Tower Bridge at dusk.jpg|thumb|Tower Bridge is lit up at dusk over the River Thames.]]
[[File:Tower Bridge bascules raised.jpg|thumb|The bascules of Tower Bridge are raised for a passing ship.]]

[[Category:Bascule bridges]]""",
    ),
    (
        "Victorian engineering",
        0,
        None,
        """'''Victorian engineering''' produced many of Britain's landmarks.
[[File:Tower Bridge at dusk.jpg|thumb|The bridge was completed in 1894 and is lit every evening.]]
[[File:Tower Bridge bascules raised.jpg|thumb|Both bascules are open while a ship passes through the bridge.]]

[[Category:Victorian architecture]]""",
    ),
    (
        "Dieric Bouts",
        0,
        None,
        """{{Infobox artist
| name = Dieric Bouts
| image = [[File:Dieric Bouts self portrait.jpg|220px|alt=A man in a red hat looks out of a window.]]
| caption = Bouts may have painted himself as a servant in the ''Last Supper''.
| birth_date = {{circa|1415}}
}}
'''Dieric Bouts''' was an [[Early Netherlandish painting|Early Netherlandish]] painter.
[[File:Last Supper Bouts.jpg|thumb|Last Supper by Dieric Bouts]]

[[Category:Early Netherlandish painters]]""",
    ),
    (
        "Last Supper (Bouts)",
        0,
        None,
        """[[File:Last Supper Bouts.jpg|thumb|The Last Supper was painted by Dieric Bouts for a church in Leuven.]]
[[File:Dieric Bouts self portrait.jpg|thumb|upright|alt=A man in a red hat stands in a doorway.|The servant in the doorway is often identified as the painter himself.]]
The '''''Last Supper''''' is an altarpiece in [[Leuven]].

[[Category:Paintings by Dieric Bouts]]""",
    ),
    (
        "Leuven",
        0,
        None,
        """{{Infobox settlement
| name = Leuven
| image1 = Leuven Town Hall.jpg
| caption1 = The Gothic town hall was built between 1448 and 1469.
| image2 = Saint Peter's Church Leuven.jpg
| caption2 = Saint Peter's Church stands opposite the town hall.
}}
'''Leuven''' is the capital of the province of [[Flemish Brabant]].

== Gallery ==
<gallery>
File:Leuven Town Hall.jpg|The late Gothic town hall stands on the Grote Markt.|alt=A stone facade with many statues and towers
File:Saint Peter's Church Leuven.jpg|Saint Peter's Church is the home of the Last Supper by Dieric Bouts.
Old Leuven map.png|A map of the city in 1600
</gallery>

[[Category:Cities in Flemish Brabant]]""",
    ),
    (
        "Town hall",
        0,
        None,
        """A '''town hall''' is the chief administrative building of a municipality.
[[File:Leuven Town Hall.jpg|thumb|Leuven Town Hall]]

[[Category:Town halls]]""",
    ),
    (
        "Brussels tram network",
        0,
        None,
        """The '''Brussels tram network''' is operated by [[STIB]].
[[File:Brussels tram map.png|thumb|The route, marked by [[File:Tram icon.svg|15px]] icons, runs along the inner ring boulevard.]]

[[Category:Tram transport in Belgium]]""",
    ),
    (
        "Mount Fuji",
        0,
        None,
        """[[File:Mount Fuji from Lake Kawaguchi.jpg|thumb|alt=A snow-capped volcano is seen above a lake.|{{nihongo|Mount Fuji|富士山|Fuji-san}} rises {{convert|3776|m|ft}} above the sea.]]
'''Mount Fuji''' is the highest mountain in [[Japan]].

[[Category:Volcanoes of Japan]]""",
    ),
    (
        "Fujikawaguchiko",
        0,
        None,
        """'''Fujikawaguchiko''' is a town in [[Yamanashi Prefecture]].
[[File:Mount Fuji from Lake Kawaguchi.jpg|thumb|alt=A snow-capped volcano is reflected in a calm lake.|The volcano is reflected in Lake Kawaguchi on a&nbsp;clear<br />winter morning.]]

[[Category:Towns in Yamanashi Prefecture]]""",
    ),
    (
        "Paris",
        0,
        None,
        """[[File:Seine at Pont Neuf.jpg|thumb|The {{lang|fr|Pont Neuf}} crosses the [[Seine]] at the western tip of the Île de la Cité.]]
'''Paris''' is the capital of [[France]].
[[File:Flag of France.svg|20px|border|The national flag flies over public buildings in the city.]]

[[Category:Paris]]""",
    ),
    (
        "Pont Neuf",
        0,
        None,
        """The '''Pont Neuf''' is the oldest standing bridge across the [[Seine]] in [[Paris]].
[[File:Seine at Pont Neuf.jpg|thumb|The oldest bridge of Paris was finished under King Henry IV.]]

[[Category:Bridges in Paris]]""",
    ),
    *(
        (
            city,
            0,
            None,
            f"""'''{city}''' is a city in [[France]].
[[File:Flag of France.svg|20px|border|The national flag flies over the town hall of {city}.]]
{{{{France-geo-stub}}}}""",
        )
        for city in FRENCH_CITIES
    ),
    (
        "Talk:Easter Bunny",
        1,
        None,
        """== Image ==
Should we use [[File:Easter Bunny Postcard 1907.jpg|thumb|A talk page caption does not describe the image in an article.]] instead? ~~~~""",
    ),
    (
        "User:Example",
        2,
        None,
        "[[File:Tower Bridge at dusk.jpg|thumb|My own photograph of the bridge was taken in 2015.]]",
    ),
    (
        "Template:Infobox artifact",
        10,
        None,
        "{{Infobox\n| image = {{{image|}}}\n| caption = {{{caption|}}}\n}}<noinclude>[[File:Example.jpg|thumb|The template is shown with an example image.]]</noinclude>",
    ),
    (
        "File:Easter Bunny Postcard 1907.jpg",
        6,
        None,
        "== Summary ==\n{{Information|description=An Easter postcard from 1907 shows a hare.}}\n[[File:Easter Bunny Postcard 1907.jpg|thumb|The description page shows the file itself.]]",
    ),
    (
        "Category:Easter traditions",
        14,
        None,
        "[[File:Easter Bunny Postcard 1907.jpg|thumb|Category pages are not articles either.]]",
    ),
    # The "self portrait" was a second upload of the Last Supper scan; the file was moved onto the
    # painting's, and the articles still use its old title.
    (
        "File:Dieric Bouts self portrait.jpg",
        6,
        "File:Last Supper Bouts.jpg",
        "#REDIRECT [[File:Last Supper Bouts.jpg]]\n{{Redirect from duplicated file}}",
    ),
    (
        "File:Bouts Last Supper detail.jpg",
        6,
        "File:Dieric Bouts self portrait.jpg",
        "#REDIRECT [[File:Dieric Bouts self portrait.jpg]]",
    ),
    ("File:Leuven.jpg", 6, "Leuven", "#REDIRECT [[Leuven]]"),
]

IMAGE_TABLE_HEADER = """-- MySQL dump 10.19  Distrib 10.3.38-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: 10.64.48.94    Database: enwiki
-- ------------------------------------------------------
-- Server version\t10.6.16-MariaDB-log

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;

--
-- Table structure for table `image`
--

DROP TABLE IF EXISTS `image`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8 */;
CREATE TABLE `image` (
  `img_name` varbinary(255) NOT NULL DEFAULT '',
  `img_size` bigint(20) unsigned NOT NULL DEFAULT 0,
  `img_width` int(11) NOT NULL DEFAULT 0,
  `img_height` int(11) NOT NULL DEFAULT 0,
  `img_metadata` mediumblob NOT NULL,
  `img_bits` int(11) NOT NULL DEFAULT 0,
  `img_media_type` enum('UNKNOWN','BITMAP','DRAWING','AUDIO','VIDEO','MULTIMEDIA','OFFICE','TEXT','EXECUTABLE','ARCHIVE','3D') DEFAULT NULL,
  `img_major_mime` enum('unknown','application','audio','image','text','video','message','model','multipart','chemical') NOT NULL DEFAULT 'unknown',
  `img_minor_mime` varbinary(100) NOT NULL DEFAULT 'unknown',
  `img_description_id` bigint(20) unsigned NOT NULL,
  `img_actor` bigint(20) unsigned NOT NULL,
  `img_timestamp` binary(14) NOT NULL,
  `img_sha1` varbinary(32) NOT NULL DEFAULT '',
  PRIMARY KEY (`img_name`),
  KEY `img_actor_timestamp` (`img_actor`,`img_timestamp`),
  KEY `img_size` (`img_size`),
  KEY `img_timestamp` (`img_timestamp`),
  KEY `img_sha1` (`img_sha1`(10)),
  KEY `img_media_mime` (`img_media_type`,`img_major_mime`,`img_minor_mime`)
) ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `image`
--

/*!40000 ALTER TABLE `image` DISABLE KEYS */;
"""
IMAGE_TABLE_FOOTER = """/*!40000 ALTER TABLE `image` ENABLE KEYS */;
/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;

-- Dump completed on 2024-01-01 12:00:00
"""
# (img_name, file content the SHA-1 is taken of, metadata blob); None: a broken file without SHA-1
IMAGE_FILES: list[tuple[str, str | None, bytes]] = [
    ("Belfast_Blitz_rubble_1941.jpg", "rubble", b'a:1:{s:7:"comment";s:25:"Scan (1941), \'rubble\' 2";}'),
    ("Brussels_tram_map.png", "tram map", b""),
    ("Broken_hare.jpg", None, b'{"error":"file missing, (lost) in 2008\\upload"}'),
    ("Easter_Bunny_Postcard_1907.jpg", "postcard", b'a:2:{s:5:"width";i:600;s:4:"note";s:9:"a),(b;c\n";}'),
    ("Flag_of_France.svg", "flag", b'{"data":{"title":"Flag of France","bytes":"\x00\x01\\\'"}}'),
    ("Hare_in_snow.jpg", "hare", b""),
    ("Last_Supper_Bouts.jpg", "last supper", b""),
    ("Lepus_europaeus_(Causse_M\u00e9jean).jpg", "hare", b"Exif: Make=Nikon, Model=D300 (2009)"),
    ("Leuven_Town_Hall.jpg", "town hall", b""),
    ("Mount_Fuji_from_Lake_Kawaguchi.jpg", "fuji", b""),
    ("Old_Leuven_map.png", "map", b""),
    ("Saint_Peter's_Church_Leuven.jpg", "church", b""),
    ("Seine_at_Pont_Neuf.jpg", "seine", b""),
    ("Tower_Bridge_at_dusk.jpg", "dusk", b""),
    ("Tower_Bridge_bascules_raised.jpg", "bascules", b""),
    ("Tram_icon.svg", "icon", b""),
    ("USS_Monterey_(BM-6)_at_Mare_Island.jpg", "monterey", b""),
    ("Water_droplet_on_fabric.jpg", "droplet", b""),
]
_SQL_ESCAPES = {0: b"\\0", 10: b"\\n", 13: b"\\r", 26: b"\\Z", 34: b'\\"', 39: b"\\'", 92: b"\\\\"}


def page_xml(
    title: str,
    text: str | list[str],
    page_id: int,
    namespace: int = 0,
    redirect: str | None = None,
    revisions: int = 1,
) -> str:
    """One ``<page>`` in the export format (ids derive from page_id).

    ``text`` is the text of each of ``revisions`` revisions, or a list: one revision per text.
    """
    redirect_xml = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    texts = [text] * revisions if isinstance(text, str) else text
    revision_xml = "".join(
        f"""    <revision>
      <id>{page_id * 100 + number}</id>
      <timestamp>2024-01-01T00:00:{number:02d}Z</timestamp>
      <contributor>
        <username>Sample editor</username>
        <id>42</id>
      </contributor>
      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text bytes="{len(text.encode("utf-8"))}" xml:space="preserve">{escape(text)}</text>
      <sha1>{hashlib.sha1(text.encode("utf-8")).hexdigest()}</sha1>
    </revision>
"""
        for number, text in enumerate(texts)
    )
    return f"""  <page>
    <title>{escape(title)}</title>
    <ns>{namespace}</ns>
    <id>{page_id}</id>
{redirect_xml}{revision_xml}  </page>
"""


def dump_xml(pages: list[str], file_namespace: str = "File") -> str:
    """A whole dump: the header with its namespaces, the pages, the closing tag."""
    return HEADER.replace("{file_namespace}", file_namespace) + "".join(pages) + "</mediawiki>\n"


def sample_xml() -> str:
    pages = [
        page_xml(title, text, 1000 + n, namespace, redirect)
        for n, (title, namespace, redirect, text) in enumerate(PAGES)
    ]
    return dump_xml(pages)


# The edit history of the sample's pages, oldest edit first: (editor, summary, minor, old, new) replaces the text
# ``old`` by ``new``; ("revert", editor, summary) restores the text before the edit just made. A page's first
# revision is its article text with every edit undone; its last is the article text. Editors with digits are IPs.
Edit = tuple[str, ...]
HISTORY_EDITS: dict[str, list[Edit]] = {
    "Easter Bunny": [
        ("Rabbitfan", "reword caption", "",
         "|An Easter bunny brings eggs to children on a postcard of 1907.",
         "|The Easter Bunny brings egs to the children in this postcard from 1907."),
        ("Gramma Nazi", "typo", "minor",
         "|The Easter Bunny brings egs to the children in this postcard from 1907.",
         "|The Easter Bunny brings eggs to the children in this postcard from 1907."),
    ],
    "Ēostre": [
        ("203.0.113.7", "", "",
         "|A rabbit is depicted on an Easter postcard from 1907.]]",
         "|bunnies are lame lol]]"),
        ("revert", "ClueBot NG", "Reverting possible vandalism by 203.0.113.7 to version by Sample editor"),
    ],
    "Belfast": [
        ("Ulsterman", "caption: who cleared the rubble", "",
         "|Rubble is cleared after the May air raid on Belfast]]",
         "|Soldiers clearing rubble after the May air raid on Belfast]]"),
    ],
    "Northern Ireland in the Second World War": [
        ("198.51.100.23", "", "minor",
         "|Soldiers cleared the rubble after the German air raid of May 1941.]]",
         "|Soldiers cleared the rubble after the German air raid of May 1914.]]"),
        ("revert", "Ulsterman", "Undid revision by 198.51.100.23: the raid was in 1941"),
    ],
    "Wetting": [
        ("Surface tension", "spelling", "minor",
         "|Water bead on a fabric that has been made non-weting by chemical treatment.]]",
         "|Water bead on a fabric that has been made non-wetting by chemical treatment.]]"),
    ],
    "Tower Bridge": [
        ("Londoner", "better caption", "",
         "|Tower Bridge at night.]]",
         "|'''Tower Bridge''' is lit up at dusk over the [[River Thames]].]]"),
        ("192.0.2.55", "", "",
         "|'''Tower Bridge''' is lit up at dusk over the [[River Thames]].]]",
         "|'''Tower Bridge''' is the best bridge in the whole world!!!]]"),
        ("revert", "Londoner", "Reverted edits by 192.0.2.55 to last version by Londoner"),
    ],
    "Bascule bridge": [
        ("Civil engineer", "reword", "",
         "|The bascules of Tower Bridge open so that a ship can pass.]]",
         "|The bascules of Tower Bridge are raised for a passing ship.]]"),
    ],
    "Pont Neuf": [
        ("Parisienne", "add photo", "",
         "[[Paris]].\n",
         "[[Paris]].\n[[File:Seine at Pont Neuf.jpg|thumb|The oldest bridge of Paris was finished under King Henri IV.]]\n"),
        ("Parisienne", "English name of the king", "minor",
         "finished under King Henri IV.]]",
         "finished under King Henry IV.]]"),
    ],
    "Last Supper (Bouts)": [
        ("Art historian", "more precise", "",
         "|The Last Supper was painted by Dieric Bouts in Leuven.]]",
         "|The Last Supper was painted by Dieric Bouts for a church in Leuven.]]"),
    ],
    "Fujikawaguchiko": [
        ("Yamanashi", "caption", "",
         "|Mount Fuji is seen in Lake Kawaguchi on a&nbsp;clear<br />winter morning.]]",
         "|The volcano is reflected in Lake Kawaguchi on a&nbsp;clear<br />winter morning.]]"),
    ],
}  # fmt: skip


def _reverted(edits: list[Edit], number: int) -> bool:
    """Whether the edit is undone by the revert right after it."""
    return number + 1 < len(edits) and edits[number + 1][0] == "revert"


def page_history(title: str, text: str) -> list[tuple[str, str, bool, str]]:
    """A page's revisions, oldest first, as (editor, summary, minor, text); the last text is ``text``."""
    edits = HISTORY_EDITS.get(title, [])
    start = text
    kept = [edit for number, edit in enumerate(edits) if edit[0] != "revert" and not _reverted(edits, number)]
    for _, _, _, old, new in reversed(kept):  # undo the edits that stayed; a reverted one left no trace
        if new not in start:
            raise ValueError(f"{title}: the edit to {new!r} does not lead to the article text")
        start = start.replace(new, old, 1)
    revisions = [("Sample editor", "new article", False, start)]
    for number, edit in enumerate(edits):
        if edit[0] == "revert":
            _, editor, summary = edit
            revisions.append((editor, summary, False, revisions[-2][3]))
            continue
        editor, summary, minor, old, new = edit
        current = revisions[-1][3]
        if old not in current:
            raise ValueError(f"{title}: edit {number} finds no {old!r}")
        revisions.append((editor, summary, minor == "minor", current.replace(old, new, 1)))
    if revisions[-1][3] != text:
        raise ValueError(f"{title}: the history does not end in the article text")
    return revisions


def history_page_xml(title: str, page_id: int, namespace: int, redirect: str | None, text: str) -> str:
    """One ``<page>`` of a history dump: every revision with its parent, contributor, summary and SHA-1."""
    redirect_xml = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    revisions = []
    for number, (editor, summary, minor, wikitext) in enumerate(page_history(title, text)):
        revision_id = page_id * 100 + number
        parent = f"      <parentid>{revision_id - 1}</parentid>\n" if number else ""
        if editor[0].isdigit():
            contributor = f"        <ip>{editor}</ip>\n"
        else:
            contributor = f"        <username>{escape(editor)}</username>\n        <id>{sum(map(ord, editor))}</id>\n"
        flags = ("      <minor />\n" if minor else "") + (
            f"      <comment>{escape(summary)}</comment>\n" if summary else ""
        )
        encoded = wikitext.encode("utf-8")
        revisions.append(
            f"""    <revision>
      <id>{revision_id}</id>
{parent}      <timestamp>{2010 + number}-0{1 + number}-15T12:00:00Z</timestamp>
      <contributor>
{contributor}      </contributor>
{flags}      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text bytes="{len(encoded)}" xml:space="preserve">{escape(wikitext)}</text>
      <sha1>{hashlib.sha1(encoded).hexdigest()}</sha1>
    </revision>
"""
        )
    return f"""  <page>
    <title>{escape(title)}</title>
    <ns>{namespace}</ns>
    <id>{page_id}</id>
{redirect_xml}{"".join(revisions)}  </page>
"""


def sample_history_xml() -> str:
    """The history dump of the sample: the same pages, ids and final texts as the articles dump."""
    unknown = set(HISTORY_EDITS) - {title for title, *_ in PAGES}
    if unknown:
        raise ValueError(f"edits of pages the sample does not have: {sorted(unknown)}")
    pages = [
        history_page_xml(title, 1000 + n, namespace, redirect, text)
        for n, (title, namespace, redirect, text) in enumerate(PAGES)
    ]
    return dump_xml(pages)


def sql_string(value: bytes) -> bytes:
    """A MySQL string literal as mysqldump writes it (backslash escapes)."""
    return b"'" + b"".join(_SQL_ESCAPES.get(byte, bytes([byte])) for byte in value) + b"'"


def base36_sha1(content: str) -> bytes:
    """MediaWiki's img_sha1: the SHA-1 in base 36, 31 digits."""
    number = int(hashlib.sha1(content.encode("utf-8")).hexdigest(), 16)
    digits = ""
    while number:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
    return digits.rjust(31, "0").encode("ascii")


def image_row(number: int, name: str, content: str | None, metadata: bytes) -> bytes:
    """One row of the image table, in the table's column order."""
    encoded = name.encode("utf-8")
    sha1 = base36_sha1(content) if content is not None else b""
    size = 1000 + 37 * number
    kind = b"'DRAWING','image','svg+xml'" if name.endswith(".svg") else b"'BITMAP','image','jpeg'"
    fields = [sql_string(encoded), str(size).encode(), b"800", b"600", sql_string(metadata), b"8", kind]
    fields += [str(number + 1).encode(), b"42", sql_string(b"20240101%06d" % number), sql_string(sha1)]
    return b"(" + b",".join(fields) + b")"


def sample_image_sql() -> bytes:
    """The sample wiki's image table as mysqldump writes it: two multi-row INSERT statements."""
    rows = [image_row(number, *entry) for number, entry in enumerate(IMAGE_FILES)]
    half = len(rows) // 2
    inserts = b"".join(b"INSERT INTO `image` VALUES " + b",".join(part) + b";\n" for part in (rows[:half], rows[half:]))
    return IMAGE_TABLE_HEADER.encode("utf-8") + inserts + IMAGE_TABLE_FOOTER.encode("utf-8")


def main() -> None:
    OUTPUT.write_bytes(bz2.compress(sample_xml().encode("utf-8"), compresslevel=9))
    print(f"wrote {OUTPUT} ({len(PAGES)} pages)")
    IMAGE_TABLE.write_bytes(gzip.compress(sample_image_sql(), compresslevel=9, mtime=0))
    print(f"wrote {IMAGE_TABLE} ({len(IMAGE_FILES)} files)")
    HISTORY.write_bytes(bz2.compress(sample_history_xml().encode("utf-8"), compresslevel=9))
    revisions = sum(len(page_history(title, text)) for title, _, _, text in PAGES)
    print(f"wrote {HISTORY} ({len(PAGES)} pages, {revisions} revisions)")


if __name__ == "__main__":
    main()
