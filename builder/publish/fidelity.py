"""Where the default build differs from the paper or from the authors' released code, and why.

The presets follow the paper; where the paper is silent they follow the authors'
code (webis-de/eacl23-paraphrase-acquisition-from-image-captions). The rows below
are the exceptions: bugs of that code we do not copy, and our extensions, each
opt-in or harmless to the method. docs/pipeline.md and every generated dataset card
show this table, so that a user of a rebuilt corpus knows what it is.
"""

from __future__ import annotations

import dataclasses

__all__ = ["dataset_markdown_table", "deja_markdown_table", "markdown_table", "web_markdown_table"]


@dataclasses.dataclass(frozen=True)
class Deviation:
    """One difference: the step, what the authors' code does, what we do, and why."""

    step: str
    authors: str
    ours: str
    why: str


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "Reading the dumps",
        "every page of every input file is read, so a page given twice (two files of one run, overlapping "
        "parts) counts twice",
        "a page is read once, by page id (a history: page and revision id), from the first file given; later "
        "copies are skipped, counted in funnel.json and warned about with both files",
        "a page counted twice doubles its references and pairs, and can push an image over step 2's bound",
    ),
    Deviation(
        "Image links",
        "`[[File:` / `[[Image:` with only the first letter case-insensitive",
        "namespace names in any case, plus the dump's localized File namespace",
        "MediaWiki reads `FILE:` and `image:` too; the narrow pattern misses those references",
    ),
    Deviation(
        "Image links",
        "markup inside `<!-- … -->` is read",
        "comments, `<nowiki>`, `<pre>`, `<math>` and footnotes hide the markup inside them",
        "a reader never sees a commented-out image; it is no caption",
    ),
    Deviation(
        "Image links",
        "`[[:File:…]]` counts as an image use",
        "it is a link to the file page, not an image use",
        "MediaWiki shows no image for it",
    ),
    Deviation(
        "Image links",
        "the caption is the last `|` segment",
        "the caption is the last top-level segment that is not an image option (as MediaWiki reads it)",
        "`[[File:A.jpg|A [[B|b]] c|thumb]]` would lose its caption",
    ),
    Deviation(
        "Template images",
        "`image0`–`image9`; a value is cut at every `=`; `{{!}}` is read as a parameter separator",
        "`imageN` for any N (the paper: an optional counter); a value keeps every `=` after the first; "
        "`{{!}}` is a literal pipe inside the value",
        "the paper's rule, and values as MediaWiki passes them",
    ),
    Deviation(
        "Template images",
        "an `image` value that is a whole `[[File:…|caption]]` keeps only the link's own caption",
        "the template's `caption`/`alt` parameter when given, else the link's own",
        "the paper mines infobox captions; the narrow reading loses them",
    ),
    Deviation(
        "Galleries",
        "`<gallery>` lines are not read",
        "not read by the presets either; `--sources link template gallery` adds them",
        "an extension, off by default so that the presets reproduce the paper",
    ),
    Deviation(
        "Caption cleaning",
        "`<ref>…</ref>` removed greedily (the text between two footnotes is lost)",
        "each footnote removed on its own",
        "the greedy pattern deletes caption text",
    ),
    Deviation(
        "Caption cleaning",
        "accents and other non-ASCII letters stripped",
        "Unicode kept; only control and format characters go (zero-width joiners stay)",
        "`Café Müller` must stay `Café Müller`",
    ),
    Deviation(
        "Caption cleaning",
        "text re-joined from tokens, with a space before punctuation; alternative texts left raw",
        "the caption's own spacing, whitespace collapsed; alternative texts cleaned like captions",
        "the text as the reader sees it; docs/cleaning.md compares every template and markup rule",
    ),
    Deviation(
        "Caption cleaning",
        "English templates only; every other template cut out of the caption",
        "English: the same by default (`--unrendered-templates drop` asks for the rule below); other editions and "
        "the cross-lingual build: their inline templates rendered (`builder/data/inline_templates.json`, "
        "`--inline-templates`) and a caption holding a template nothing renders dropped and counted by title",
        "`{{nombre|130|années}}` cut out leaves a sentence with a hole that passes every filter",
    ),
    Deviation(
        "Caption cleaning",
        "no limit on nesting",
        "a caption nested deeper than 20 templates or links is dropped and counted in funnel.json",
        "vandalised pages must not stall a build or cost a page its other images",
    ),
    Deviation(
        "Caption words ≥ 6, significant difference",
        "Java's ASCII-only `\\W`",
        "Unicode word characters (Python's `\\w`)",
        "accented and non-Latin letters are word characters",
    ),
    Deviation(
        "Caption has verb (silver, bronze)",
        "`VerbHeuristic` keeps captions *without* a verb (its test is inverted)",
        "a caption passes when a token is tagged as a verb (`VB*`)",
        "the paper's rule is 'contains a verb'",
    ),
    Deviation(
        "Caption rules (Table 4, verb)",
        "`MD (RB)? VB` matches any `VB*` after the modal; bracketed text removed only after tagging",
        "Table 4 as printed (`VB` after the modal); parenthetical asides removed before tagging, for both rules",
        "the paper's rules; an aside such as '(pictured)' is not the caption's syntax",
    ),
    Deviation(
        "POS tagger",
        "Stanford CoreNLP, `english-left3words-distsim`",
        "CoreNLP when installed (`--tagger corenlp`), else stanza, else spaCy's `en_core_web_sm`, else NLTK's "
        "perceptron; the card names it",
        "CoreNLP needs Java and a download; other taggers give other verdicts on some captions",
    ),
    Deviation(
        "References ≤ 10",
        "10 × 18 = 180 for every corpus",
        "10 for gold and silver, 180 for bronze (edit history)",
        "the paper sets 180 only for the edit history, where an image use repeats in ~18 revisions",
    ),
    Deviation(
        "Unique candidates",
        "duplicates found within each map task's share of the pairs, by a 32-bit `hashCode`",
        "one candidate per pair of folded texts (see the next row) in the whole build (128-bit digests), "
        "the first in image order",
        "the result must not depend on how the work is split, and hash collisions must not drop distinct pairs",
    ),
    Deviation(
        "Unique candidates, divergent captions, significant difference",
        "texts compared with Java's `toLowerCase` (`equalsIgnoreCase`), after the extraction stripped accents",
        "texts compared NFKC-normalized and case-folded, `NFKC(casefold(NFKC(text)))`",
        "we keep Unicode, so composed and decomposed 'Café', 'ﬁ' and 'fi', 'ＡＢＣ' and 'ABC', 'ß' and 'SS' "
        "would pass as paraphrases; ASCII text compares as before",
    ),
    Deviation(
        "Splits",
        "one set of pairs, no train/validation/test split",
        "the same pairs, split 80/10/10 by default into train/validation/test so that no image and no "
        "text (compared by its step-9 skeleton) is in two splits; `--splits none` gives the paper's single set as "
        "`train`",
        "paraphrase benchmarks leak when one sentence sits in two splits (PAWS, QQP, MRPC)",
    ),
)


def markdown_table() -> str:
    """The deviations as one Markdown table, for docs/pipeline.md and the dataset card."""
    lines = ["| Step | Authors' code | This toolkit | Why |", "|---|---|---|---|"]
    lines += [f"| {d.step} | {d.authors} | {d.ours} | {d.why} |" for d in DEVIATIONS]
    return "\n".join(lines) + "\n"


# The web source (thesis chapter 4) against the thesis: what a web build does differently, and why.
WEB_DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "Profanity filter (§4.5.2)",
        "captions holding one of a list of more than 1,300 offensive or profane words are dropped",
        "not applied: no caption is dropped for its words",
        "the list (von Ahn's) is not shipped with the toolkit and a build downloads nothing; filter the pairs "
        "with a list of your choice",
    ),
    Deviation(
        "Language detection (§4.5.2)",
        "captions that Lingua does not detect as English are dropped",
        "not applied: every caption is counted and tagged in the build's language (`--language`, English by "
        "default); each pair row keeps its pages' `<html lang>` (`html_lang1`, `html_lang2`, null when a page "
        "names none)",
        "Lingua's models are not a dependency of the toolkit; the page's own declaration lets a user filter",
    ),
    Deviation(
        "Image equivalence (§4.6)",
        "JImageHash's 30-bit hashes",
        "imagehash's hashes on a square grid: 36 bits by default (`--hash-size 6`), threshold 4 bits; "
        "resource identity (`url`) by default",
        "30 bits is no square; docs/web.md's §6.2 table measured the threshold",
    ),
    Deviation(
        "References per image (§4.3.2)",
        "at most 10 references per image URL in the crawl, before the equivalence",
        "at most 10 references per equivalence set (step 2), after it, as the Wikipedia build bounds a cluster",
        "one bound in one place: the steps 0–9 run unchanged for both sources",
    ),
    Deviation(
        "A page captured twice (§4.1)",
        "not said: every response record is read",
        "the same target URI, in one WARC file or several, is read once, from its first successful capture in input "
        "order; later captures are counted (`later_captures_of_pages`) and left out",
        "Common Crawl's monthly crawls capture a page again with other bytes (a date, an advertisement) and the "
        "same images and captions: read twice, a page's images count twice at step 2 and its captions pair with "
        "themselves; a key of URI and payload digest would keep those copies",
    ),
    Deviation(
        "Responses that are no success",
        "not said",
        "only a 2xx response is a page's or an image's capture; a redirect or an error (3xx, 4xx, 5xx) is counted "
        "(`unsuccessful_responses`) and not read, wherever it is among the URL's captures",
        "a redirect's or an error page's body is not the page, and a 404's empty body is not the image: read as "
        "the first capture, it hid the page's 200 and made the image unreadable",
    ),
    Deviation(
        "Resource identity (§4.6.1)",
        "the URI identifies the image, as the page wrote it",
        "the URI as a browser requests it: parsed by the WHATWG URL Standard (UTF-8 percent-encoding, IDNA hosts, "
        "backslashes, dot segments, default ports), escapes of unreserved characters decoded, the fragment dropped; "
        "on the pages' references and the crawl's records alike",
        "`café.jpg` and `caf%C3%A9.jpg`, `bücher.example` and `xn--bcher-kva.example` are one resource: kept apart, "
        "one image became two, or (pixels) its references found no record",
    ),
    Deviation(
        "Page charset (§4.4.1)",
        "not said; the authors' extractor reads every page as UTF-8",
        "the byte-order mark, the HTTP header's charset, the `<meta>` one, else detection (charset-normalizer); "
        "labels read with the WHATWG table browsers use",
        "pages of other charsets (ClueWeb09's EUC-JP, GBK, windows-1251) read as UTF-8 give captions of U+FFFD",
    ),
    Deviation(
        "Page nesting",
        "no bound",
        "a page of more than 1,024 tags nested deeper than 1,024 elements is skipped, counted "
        "(`too_deep_pages`) and named",
        "an HTML5 parse's time grows faster than the page with its nesting: 100,000 levels take 52 s, and sibling "
        "elements 4,000 deep 1.5 s per MB",
    ),
)


def web_markdown_table() -> str:
    """The web build's deviations from the thesis as one Markdown table, for docs/web.md and a web card."""
    return _table(WEB_DEVIATIONS, "Thesis")


# The image–caption dataset source (thesis §5.1, Conceptual Captions) against the thesis.
DATASET_DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "Image equivalence (§5.1.2)",
        "MD5 of the downloaded image files",
        "MD5 of the decoded pixels (`pixels`, the default); `--equivalence` may choose a perceptual hash or `url`",
        "the same picture saved twice (other metadata, another lossless encoding) is one image; two files with "
        "one MD5 always have one MD5 of their pixels, so no pair of the thesis's is lost",
    ),
    Deviation(
        "JPEG only (§5.1.1)",
        "the content type of the HTTP response at download time",
        "the format Pillow decodes from the image's bytes (`not_jpeg`)",
        "img2dataset's output keeps no HTTP header; the bytes say what the file is",
    ),
    Deviation(
        "Bound on a set's size (§5.1.2)",
        "μ = 3.13 and σ = 25.87 of Conceptual Captions' paraphrase sets, z < 0.05: sets of at most 4 images",
        "the same rule over the sets (two records or more) of the dataset built, its μ and σ in funnel.json",
        "another dataset, or another share of Conceptual Captions downloaded, has other sets",
    ),
)


def dataset_markdown_table() -> str:
    """The dataset build's deviations from the thesis as one Markdown table, for docs/web.md and a dataset card."""
    return _table(DATASET_DEVIATIONS, "Thesis")


# Déjà Image-Captions (Chen et al., NAACL 2015; docs/deja.md) against the paper: its §2 over what the toolkit reads.
DEJA_DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "Input (§2, MAIN SET)",
        "760 million Flickr image–caption pairs from the search API (693 query nouns, 2013); a photo's title and the "
        "first line of its description",
        "every image–text record step 0 counts in what the build reads: a wiki's captions and alternative texts, a "
        "crawl's figure and table captions and alt texts, a dataset's captions",
        "the toolkit's sources; no search API, and an alternative text is a caption its page's author wrote",
    ),
    Deviation(
        "Sentences",
        'title and first description line, "segmented into sentences"',
        "each record's text, cut by the toolkit's `SentenceSplitter` (CoreNLP's boundaries)",
        "the toolkit's records have one text each",
    ),
    Deviation(
        "Visible thing",
        "the query noun, one of 693 frequent nouns (Ordonez et al.)",
        "a common noun (`NN`/`NNS`) with some common-noun sense under WordNet's `physical_entity.n.01` (through "
        "hypernyms; an instance, a named individual, does not count: \"day\" is no visible thing by Clarence Day)",
        "the paper's footnote 7 generalises so; the captions here come from no noun query, and a caption gives no "
        "sense: the rule asks whether the noun can name a visible thing, as a noun list does (hope, couple, group "
        "and top pass by common senses: a person, physics, chemistry, a toy)",
    ),
    Deviation(
        "WordNet",
        "not named",
        "Open English WordNet 2024 Edition, shipped as a derived table (`builder/data/wordnet-en.json.gz`)",
        "the same verdict on every machine, offline; the 2025 Edition moved the instances (Paris) out",
    ),
    Deviation(
        "A sentence's first word",
        "not said (Flickr's titles are mostly capitalised)",
        "a first word capitalised only as the sentence's start, and known to WordNet, is tagged in lower case "
        '("Dogs run", not "NASA", "Mildred Lake" or "Charles I"); a sentence mostly in capitals (three words or '
        "more, most of them in capitals) is tagged in lower case whole",
        'a tagger reads a capitalised first noun as a name: "Children playing in water" and "children playing in '
        'water" would be two captions, and Figure 1\'s "Sun is going to bed" would name nothing; in capitals, '
        "every word is a name (155 of 174 such COCO sentences were rejected)",
    ),
    Deviation(
        "Lemmas",
        '"lemmatize all words"',
        "WordNet's morphy by the tag's part of speech (irregular forms, the word, the detachment rules; an inflected "
        "tag's base form first; of a stem and the stem + e, both lemmas, the one English spelling allows: "
        "swinging → swing, hoping → hope); clitics `'s 're 'm` → be, `'ve` → have, `n't` → not",
        '"flies"/`NNS` is fly, though WordNet has a noun "flies"; morph.c tries "+e" first and reads swinging as '
        "swinge (a short stem doubles its consonant: hop → hopping); the Treebank tokenizer splits clitics off",
    ),
    Deviation(
        "Prepositions and function words",
        "prepositions → `IN`; function words dropped (not listed)",
        "the `IN` tag → `IN`, and a particle `RP` that is a preposition (up, down, out, off, on, over…); `TO`, "
        "determiners, conjunctions, pronouns, wh-words, modals, existential there, possessive `'s`, numbers "
        "(`CD`) and punctuation dropped (docs/deja.md lists the tags)",
        'Penn tags prepositions and subordinating conjunctions alike, and "to" `TO` as preposition or '
        'infinitive; Table 5\'s prepositions have no "to"; "looking down at" and "looking at" differ in a '
        "preposition, as the paper's rule reads them",
    ),
    Deviation(
        "Negation",
        "function words dropped; the original captions kept beside the canonical form (footnote 2)",
        'the same: "no" is a determiner and dropped, so "There is no dog" and "There is a dog" are one canonical '
        'form and one group; "not" and "n\'t" are adverbs and stay ("be not dog"); each row keeps its sentence '
        "as written",
        "the paper's rule; a user who needs the difference reads the sentences as written (the edges' `text`, "
        "the pairs' `sentence1` and `sentence2`)",
    ),
    Deviation(
        "Personal information",
        '"first-person pronouns"',
        'I, me, my, mine, myself, we, us, our, ours, ourselves, and "Let\'s"; not "US" in capitals, "us"/`NNP`, '
        '"mine"/`NN` (but a "mine" a verb follows and nothing names: "Mine is the red car"), nor I after a name '
        '(but an I after a name that a verb follows: "In London I photographed")',
        'the US, a coal mine, "Elizabeth I" and "World War I" are no personal information',
    ),
    Deviation(
        "Language",
        "English Flickr captions found by English query nouns; no language check is said",
        "a sentence written mostly in a non-Latin script, or with two or more other languages' function words and "
        "no English one, fails step `In English` before the three rules (the scorer's check, "
        "`metrics.language.clearly_foreign`)",
        "any source here mixes languages; a German \"die\" would be a visible thing by WordNet",
    ),
    Deviation(
        "Distinct images",
        "distinct Flickr photos",
        "the build's image identity: a wiki's titles (redirects and SHA-1 with `--identity`), a crawl's URLs or "
        "pixels (`--equivalence`), a dataset's pixels",
        "what each source knows of when two images are one",
    ),
    Deviation(
        "More than one user",
        "Flickr users",
        "a wiki's pages; a crawl's sites (the registered domain of the page's URL, by the Public Suffix List); a "
        "dataset's user column (`--deja-user-column`, else `author`, `user_nsid`, `owner` or `user`, the first the "
        "shards' metadata or the caption TSV has; a sample without a user counts for none); a dataset without one "
        "names no user, so there a caption is kept by the images rule alone (no step, and the card says so)",
        "who wrote a caption is what each source tells: a page's editors, a site, RedCaps's and YFCC100M's "
        "owners; Conceptual Captions and COCO name no photographer",
    ),
    Deviation(
        "Rows",
        "a bipartite graph of captions and images, the original captions kept (footnote 2)",
        "one row per caption–image edge, with its first occurrence's sentence as written, page and record, and "
        "the edge's occurrences counted",
        "one edge once; the other occurrences are the `references` config's rows",
    ),
    Deviation(
        "Tokens (Table 2)",
        "not defined",
        "the tokens of the caption's first sentence (by image) that hold a letter or a digit",
        "punctuation is not a word",
    ),
    Deviation(
        "Captions searched again (footnote 1)",
        "captions with at most 10 images searched again across all years",
        "not done",
        "the toolkit reads what it is given; it queries no service",
    ),
    Deviation(
        "Visual paraphrases: query images (§5)",
        "two of each caption's images, sampled at random",
        "the first two by the MD5 of the caption's canonical form and the image",
        "the same input gives the same pairs on every engine and run",
    ),
    Deviation(
        "Visual paraphrases: the query image",
        "not said",
        "left out of each candidate's images that φ compares with it (`--deja-query-image` keeps it)",
        "else another writer's caption of the query image itself wins at φ = 0 (759 of 782 COCO picks), and the "
        "visual step decides nothing",
    ),
    Deviation(
        "Ties among candidates (§5, §8.2)",
        "PARAcaption draws at random",
        "drawn by the MD5 of the caption pair, for PARAcaption and for the K candidates of §5",
        "random but the same on every run and engine; the alphabetical first gave 59 of Flickr8k's 446 captions "
        "one paraphrase",
    ),
    Deviation(
        "Candidates (§5, §8.2)",
        "K = 100 candidate captions for image captioning (§3); for paraphrases, the captions \"that share the largest "
        "number of physical-object nouns with c\"",
        "the captions that share the most nouns with c among the 1,000 that each of c's nouns offers (drawn by MD5); "
        "§5 keeps the K = 100 best of them",
        "the captions sharing a noun grow with the square of their number (4,000 sharing \"dog\": 33 s); bounded per "
        "noun they grow linearly, and a caption still sees ten times K per noun",
    ),
    Deviation(
        "Visual paraphrases: reranking feature (§5)",
        "\"the same neighborhood-based affinity as described in §3\"; the feature is not named",
        "Tinyimage by default (`--deja-feature gist`, `gist+tiny` on demand)",
        "Table 6's best ASSOC (0.184 / 0.034), and about 180 times cheaper than GIST per image",
    ),
    Deviation(
        "Visual paraphrases: σ (footnote 5)",
        "chosen on a held-out development set of 300 images (for captioning, §4)",
        "chosen in the build the same way: 300 of the graph's images (the first by MD5), each captioned by ASSOC "
        "from the graph without its own captions and their images, σ the best mean BLEU@1 against its own captions "
        "(ties: the smaller σ); `--deja-sigma N` fixes it",
        "the build has no other held-out set; leaving the image's captions out of the pool makes it held out",
    ),
    Deviation(
        "Visual paraphrases: similarities",
        "−‖Q − I‖²",
        "the same, quantised to 2⁻³² before φ sums them (Tinyimage's are whole numbers, exact)",
        "a sum of numbers on that grid is exact in any order: φ, its ties and the pairs are the same on both engines",
    ),
    Deviation(
        "Visual paraphrases: sources",
        "Flickr photos",
        "crawls and image–caption datasets, whose images the build decodes; a dump has no pixels and is refused "
        "before the work (its text-only variant is `deja-paracaption`)",
        "a dump names its images; it holds none",
    ),
)


def deja_markdown_table() -> str:
    """The Déjà configs' deviations from the paper as one Markdown table, for docs/deja.md and a Déjà card."""
    return _table(DEJA_DEVIATIONS, "Paper")


def _table(deviations: tuple[Deviation, ...], reference: str) -> str:
    """Deviations as one Markdown table, their reference (the thesis, a paper) named in the second column."""
    lines = [f"| Step | {reference} | This toolkit | Why |", "|---|---|---|---|"]
    lines += [f"| {d.step} | {d.authors} | {d.ours} | {d.why} |" for d in deviations]
    return "\n".join(lines) + "\n"
