"""Caption cleaning (before Table 3's step 0): caption wikitext to the plain text a reader sees.

The paper's pre-processing: cleansing of Wikitext markup, removal of line
breaks and non-printable characters, whitespace normalization. Links become
their labels, formatting and references disappear, and the templates whose text
matters in captions (ship names, unit conversions, language wrappers, dates…)
are rendered; every other template is dropped. Nested ``[[File:…]]`` links are
image references of their own (:mod:`builder.extract.wikitext` finds them), not caption text.

Cleaning takes time linear in the caption's length, whatever the markup. A
single left-to-right scan (:class:`_Scanner`) first does what MediaWiki's
preprocessor does – comments, ``<nowiki>``-like and ``<ref>``-like tags, bracket
matching – and hands mwparserfromhell only balanced markup: every template and
link it opens is closed (unclosed ones at the end of the caption, as a browser
closes unclosed HTML), stray closers are gone, HTML tags are reduced to the
whitespace they stand for, links are resolved to their text, and quote marks and
line-start markup (lists, headings) are stripped. The parser backtracks on
unclosed markup, which made it quadratic (or worse) in the length of the text; on
balanced markup it is not. See ``docs/cleaning.md``.

:data:`RENDERERS`, :data:`ALIASES` and :data:`DROPPED` say which templates are
known; :func:`is_known_template` lets callers count the ones that are not.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import re

import mwparserfromhell
from mwparserfromhell.definitions import URI_SCHEMES
from mwparserfromhell.nodes import (
    Argument,
    ExternalLink,
    Heading,
    HTMLEntity,
    Node,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.parser import ParserError
from mwparserfromhell.wikicode import Wikicode

from builder.extract.inline import InlineTable, parser_function
from builder.extract.templates import DROPPED, Arguments, renderer_of, resolve_template, template_key
from builder.lang.text import preprocess_caption, printable

__all__ = ["CaptionError", "Rendering", "clean_caption", "preprocess_caption", "render_caption"]


# Nesting levels of templates and links a caption may have. MediaWiki shows an error in place of templates
# nested past its expansion depth; we drop such a caption (CaptionError, counted by extraction).
# mwparserfromhell stops nesting templates at about 33 levels (it leaves the inner ones as text) and
# recursion errors came from deeper ones; no real caption comes near 20.
MAX_DEPTH = 20


class CaptionError(ValueError):
    """A caption that cannot be rendered: nested past :data:`MAX_DEPTH`, or mwparserfromhell failed on it.

    The caller drops that one caption and counts it; the rest of the page is not affected.
    """


# Captions without any of these need neither the scanner nor the parser (a free URL needs the parser alone).
_MARKUP = re.compile(r"[\[\]{}<>&]|''")
_LINE_MARKUP = re.compile(r"^(?:[*#:;=]|----)", re.MULTILINE)
_FREE_URL = re.compile(r"\b(?:" + "|".join(URI_SCHEMES) + r"):", re.IGNORECASE)

# The scanner's tokens: a comment, a tag (closing slash, name, attributes), a brace run, a bracket run of at
# least two, a pipe, any other "<", and the bracket of an external link. Every alternative is
# linear: ``[^<>]*`` stops at the next angle bracket, so a tag that never closes costs one scan to the next "<".
_TOKEN = re.compile(
    r"<!--|<(/?)([A-Za-z][A-Za-z0-9]*)((?:[\s/][^<>]*)?)>|\{+|\}+|\[{2,}|\]{2,}|\||<"
    r"|(\[)(?=//|(?:" + "|".join(URI_SCHEMES) + r"):)",
    re.IGNORECASE,
)
_EXTERNAL_LINK_END = re.compile(r"[\]\n]")
_QUOTE_RUN = re.compile(r"('{2,})")
_LINE_START_MARKUP = re.compile(r"^(?:[*#:;]+|-{4,})", re.MULTILINE)
_HEADING_START = re.compile(r"^=", re.MULTILINE)

# HTML tags show their content; a line break or a block boundary is whitespace. Their attributes are not text.
_HTML_TAGS = frozenset(
    "abbr b bdi bdo big blockquote br caption center cite code data dd del dfn div dl dt em font "
    "h1 h2 h3 h4 h5 h6 hr i ins kbd li mark ol p q rb rp rt rtc ruby s samp small span strike strong "
    "sub sup table td th time tr tt u ul var wbr".split()
)
_BLOCK_TAGS = frozenset(
    "br p div li dt dd ul ol dl table caption tr td th blockquote center hr h1 h2 h3 h4 h5 h6".split()
)
# Extension tags whose content is no caption text, and those whose content is shown as written.
_DROPPED_TAGS = frozenset(
    "ref references gallery score timeline syntaxhighlight source templatedata templatestyles graph "
    "imagemap inputbox categorytree mapframe maplink indicator section hiero includeonly noinclude".split()
)
_VERBATIM_TAGS = frozenset({"nowiki", "pre", "math", "chem", "ce"})

# Verbatim text reaches the parser as character references, so none of it can be read as markup.
_VERBATIM_ESCAPES = {ord(char): f"&#{ord(char)};" for char in "[]{}<>|='&*#:;~-"}
_LINK_ESCAPES = {ord("|"): "&#124;", ord("="): "&#61;"}
# Brackets the parser refused to read as markup (a template name with a tag in it…) are no caption text.
_LEFTOVER_BRACKETS = re.compile(r"\[\[+|\]\]+|\{\{+|\}\}+")

_SPACE_BEFORE = re.compile(r" ([,.;:!?)])")
_SPACE_AFTER = re.compile(r"\( ")

_HIDDEN_LINK_NAMESPACES = frozenset({"file", "image", "media", "category"})


def normalize_text(text: str) -> str:
    """One line of printable text with single spaces, as the paper's pre-processing leaves it."""
    if not text.isprintable():
        text = "".join(printable(char) for char in text)
    text = " ".join(text.split())
    if " " in text:
        text = _SPACE_AFTER.sub("(", _SPACE_BEFORE.sub(r"\1", text))
    return text


@dataclasses.dataclass(frozen=True)
class Rendering:
    """A caption's plain text, how many templates it held, and the titles of those nothing renders.

    A caller that publishes whole captions only drops one with ``unrendered`` titles (the no-hole rule).
    """

    text: str
    templates: int = 0
    unrendered: tuple[str, ...] = ()


@dataclasses.dataclass
class _Context:
    """What rendering one caption uses and finds: the edition's inline templates (None: English's alone)."""

    table: InlineTable | None
    templates: int = 0
    unrendered: list[str] = dataclasses.field(default_factory=list)


def clean_caption(wikitext: str, table: InlineTable | None = None) -> str:
    """The plain text of a caption or alt text given as wikitext.

    ``table`` holds the inline templates of the caption's edition (:func:`builder.extract.inline.inline_templates`);
    without it, English's alone are rendered, as the authors' extractor did.
    Raises :class:`CaptionError`, and nothing else, for a caption that cannot be rendered.
    """
    return render_caption(wikitext, table).text


def render_caption(wikitext: str, table: InlineTable | None = None) -> Rendering:
    """:func:`clean_caption` with what it met: the count of templates and the titles it could not render."""
    prepared = wikitext
    if _MARKUP.search(wikitext) or _LINE_MARKUP.search(wikitext):
        prepared = _Scanner(wikitext).run()
    if _MARKUP.search(prepared) or (":" in prepared and _FREE_URL.search(prepared)):
        context = _Context(table)
        text = normalize_text(_parse_and_render(prepared, context))
        return Rendering(text, context.templates, tuple(context.unrendered))
    return Rendering(normalize_text(prepared))


def _parse_and_render(prepared: str, context: _Context | None = None) -> str:
    """Templates, arguments, entities and external links of scanned text, rendered."""
    try:
        return _render(mwparserfromhell.parse(prepared, skip_style_tags=True), context or _Context(None))
    except (ParserError, RecursionError) as error:
        raise CaptionError(f"cannot parse the caption ({type(error).__name__}: {error})") from error


@dataclasses.dataclass
class _Element:
    """An open template (``{{``), argument (``{{{``) or link (``[[``) of the scan."""

    kind: str
    parts: list[str] = dataclasses.field(default_factory=list)
    pipe: int | None = None  # index in parts where the first top-level pipe was


class _Scanner:
    """One pass over a caption that leaves mwparserfromhell only balanced markup (see the module docstring).

    Links are resolved here, to their label or title, because a link the parser refuses (a line break or a
    tag in its title) would otherwise show its brackets; inside templates their ``|`` and ``=`` become
    character references so that they do not split parameters.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[str] = []
        self.stack: list[_Element] = []
        self.open_counts: dict[str, int] = {}
        self.closers: dict[str, tuple[int, re.Match[str] | None]] = {}
        self.link_end: tuple[int, re.Match[str] | None] = (len(text) + 1, None)

    def run(self) -> str:
        position = 0
        while (match := _TOKEN.search(self.text, position)) is not None:
            self._emit_text(self.text[position : match.start()])
            position = self._token(match)
        self._emit_text(self.text[position:])
        while self.stack:
            self._close_top()
        return _strip_quotes(_strip_line_markup("".join(self.out)))

    def _emit(self, text: str) -> None:
        if not self.stack:
            self.out.append(text)
        else:
            self.stack[-1].parts.append(text)

    def _emit_text(self, text: str) -> None:
        if text and self.stack and self.stack[-1].kind == "[[":
            text = text.translate(_LINK_ESCAPES)
        if text:
            self._emit(text)

    def _token(self, match: re.Match[str]) -> int:
        """Handle one token; return where the scan goes on."""
        token = match.group()
        end = match.end()
        if token == "<!--":
            close = self.text.find("-->", end)
            return len(self.text) if close < 0 else close + 3
        if match.group(2) is not None:
            return self._tag(match)
        if match.group(4) is not None:
            self._external_link(end)
            return end
        if token == "<":
            self._emit("&lt;")
        elif token[0] == "{":
            self._open_braces(token)
        elif token[0] == "}":
            self._close_braces(len(token))
        elif token[0] == "[":
            self._emit("[" * (len(token) % 2))
            for _ in range(len(token) // 2):
                self._push("[[")
        elif token[0] == "]":
            self._close_links(len(token))
        else:
            self._pipe()
        return end

    def _push(self, kind: str) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise CaptionError(f"markup nested deeper than {MAX_DEPTH} levels")
        self.stack.append(_Element(kind))
        self.open_counts[kind] = self.open_counts.get(kind, 0) + 1

    def _close_top(self, kind: str | None = None) -> None:
        """Close the innermost element, as ``kind`` when given (an argument closed by two braces is a template)."""
        element = self.stack.pop()
        self.open_counts[element.kind] -= 1
        if kind is not None:
            element.kind = kind
        self._emit(_render_element(element))

    def _close(self, kind: str) -> None:
        """Close the innermost open element of a kind (one is open) and every element opened inside it."""
        while self.stack[-1].kind != kind:
            self._close_top()
        self._close_top()

    def _open_braces(self, run: str) -> None:
        """Two braces open a template and three an argument; longer runs nest them, the argument innermost."""
        count = len(run)
        if count == 1:
            self._emit("&#123;")
            return
        for _ in range(count // 2 - count % 2):
            self._push("{{")
        if count % 2:
            self._push("{{{")

    def _close_braces(self, count: int) -> None:
        """Close templates and arguments, innermost first; a brace left over is markup residue and goes."""
        if count == 1:
            self._emit("&#125;")
            return
        while count >= 2 and (self.open_counts.get("{{") or self.open_counts.get("{{{")):
            innermost = next(element for element in reversed(self.stack) if element.kind[0] == "{")
            if innermost.kind == "{{{" and count >= 3:
                self._close("{{{")
                count -= 3
            elif innermost.kind == "{{{":
                while self.stack[-1] is not innermost:
                    self._close_top()
                self._close_top("{{")
                count -= 2
            else:
                self._close("{{")
                count -= 2

    def _close_links(self, count: int) -> None:
        """A run of closing brackets is read from its end: in ``]]]`` the first closes an external link."""
        links = min(count // 2, self.open_counts.get("[[", 0))
        if links and count % 2:
            self._emit("]")
        for _ in range(links):
            self._close("[[")

    def _pipe(self) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and top.kind in ("[[", "{{", "{{{") and top.pipe is None:
            top.pipe = len(top.parts)
            if top.kind == "[[":
                return
        elif top is not None and top.kind == "[[":
            self._emit("&#124;")
            return
        self._emit("|")

    def _external_link(self, start: int) -> None:
        """``[http://… label]`` ends at the next "]" of its line; an unclosed one is text, not a parser attempt."""
        searched_from, found = self.link_end
        if searched_from > start or (found is not None and found.start() < start):
            found = _EXTERNAL_LINK_END.search(self.text, start)
            self.link_end = (start, found)
        self._emit("[" if found is not None and found.group() == "]" else "&#91;")

    def _tag(self, match: re.Match[str]) -> int:
        """Extension tags as MediaWiki's preprocessor reads them; HTML tags only separate blocks of text."""
        closing, name, attributes = match.group(1), match.group(2).casefold(), match.group(3)
        if name in _DROPPED_TAGS or name in _VERBATIM_TAGS:
            if closing or attributes.endswith("/"):
                return match.end()
            content, end = self._extension_content(name, match.end())
            if name in _VERBATIM_TAGS:
                self._emit(html.unescape(content).translate(_VERBATIM_ESCAPES))
            return end
        if name in _HTML_TAGS:
            self._emit_text("\n" if name in _BLOCK_TAGS else "")
            return match.end()
        self._emit("&lt;")
        return match.start() + 1

    def _extension_content(self, name: str, start: int) -> tuple[str, int]:
        """MediaWiki's rule: an extension tag ends at the next closing tag of its name, else at the end.

        The last search for each name is kept, so that many unclosed tags still cost one scan.
        """
        searched_from, found = self.closers.get(name, (len(self.text) + 1, None))
        if searched_from > start or (found is not None and found.start() < start):
            found = re.compile(rf"</{name}\s*>", re.IGNORECASE).search(self.text, start)
            self.closers[name] = (start, found)
        if found is None:
            return self.text[start:], len(self.text)
        return self.text[start : found.start()], found.end()


def _strip_line_markup(text: str) -> str:
    """List bullets, indents and rules start a line but are no text; a heading line keeps its title.

    Runs on the scanned text, where verbatim text is already made of character references.
    """
    text = _LINE_START_MARKUP.sub("", text)
    if not _HEADING_START.search(text):
        return text
    return "\n".join(_heading_title(line) for line in text.split("\n"))


def _heading_title(line: str) -> str:
    stripped = line.rstrip()
    if len(stripped) > 1 and stripped[0] == stripped[-1] == "=":
        return stripped.strip("=")
    return line


def _render_element(element: _Element) -> str:
    """The markup the parser gets for a closed element: links are resolved, invalid templates dropped."""
    content = "".join(element.parts)
    head = "".join(element.parts[: element.pipe]) if element.pipe is not None else content
    if element.kind == "[[":
        if _is_hidden_link(head):
            return ""
        if element.pipe is not None:
            return "".join(element.parts[element.pipe :])
        return _display_target(head)
    if not head.strip() or "\n" in head.strip() or any(char in head for char in "[]<>"):
        return ""  # MediaWiki shows such "templates" as text; as unknown templates they are dropped
    # A space keeps nested braces apart: "{{{{x}}}}" would read as an argument.
    inner = f" {content}" if content.startswith("{") else content
    inner = f"{inner} " if inner.endswith("}") else inner
    return element.kind + inner + "}" * len(element.kind)


def _is_hidden_link(target: str) -> bool:
    """File, image and category links show no text; a leading colon makes them ordinary links."""
    title = target.strip()
    if title.startswith(":"):
        return False
    namespace, colon, _ = title.partition(":")
    return bool(colon) and namespace.strip().casefold() in _HIDDEN_LINK_NAMESPACES


def _display_target(target: str) -> str:
    return target.strip().removeprefix(":")


def _strip_quotes(text: str) -> str:
    """Bold and italic marks go, line by line, by MediaWiki's rules (its parser's ``doQuotes``)."""
    if "''" not in text:
        return text
    return "\n".join(_line_without_quotes(line) if "''" in line else line for line in text.split("\n"))


def _line_without_quotes(line: str) -> str:
    """Runs of 2, 3 and 5 apostrophes are markup; 4 keep one apostrophe and 6 or more the excess.

    When a line has an odd number of both italic and bold marks, one bold mark is an
    apostrophe before an italic mark: the first one after a one-letter word (as in
    ``l'``, French for "the"), else the first after a longer word, else the first after a space.
    """
    pieces = _QUOTE_RUN.split(line)  # text, run, text, run, …, text
    runs = pieces[1::2]
    visible = ["'" if len(run) == 4 else "'" * max(0, len(run) - 5) for run in runs]
    marks = [3 if len(run) == 4 else min(len(run), 5) for run in runs]
    italics = sum(1 for mark in marks if mark in (2, 5))
    bolds = sum(1 for mark in marks if mark in (3, 5))
    if italics % 2 and bolds % 2:
        candidates: dict[str, int] = {}
        for index, mark in enumerate(marks):
            if mark != 3:
                continue
            before = pieces[2 * index] + visible[index]
            if before[-1:] in ("", " "):
                kind = "space"
            elif before[-2:-1] in ("", " "):
                kind = "one-letter word"
            else:
                kind = "longer word"
            candidates.setdefault(kind, index)
        for kind in ("one-letter word", "longer word", "space"):
            if kind in candidates:
                visible[candidates[kind]] += "'"
                break
    out = [pieces[0]]
    for index, extra in enumerate(visible):
        out.append(extra)
        out.append(pieces[2 * index + 2])
    return "".join(out)


def _render(code: Wikicode, context: _Context) -> str:
    return "".join(_render_node(node, context) for node in code.nodes)


@functools.singledispatch
def _render_node(node: Node, context: _Context) -> str:
    """A node type this renderer does not know shows as its wikitext."""
    return str(node)


@_render_node.register
def _render_text(node: Text, context: _Context) -> str:
    return _LEFTOVER_BRACKETS.sub(" ", node.value)  # a space: "[]][" must not become "[["


@_render_node.register
def _render_wikilink(node: Wikilink, context: _Context) -> str:
    """The scanner resolves links; one the parser still finds (``[`` next to a resolved link) shows its text."""
    if _is_hidden_link(str(node.title)):
        return ""
    return _render(node.text, context) if node.text is not None else _display_target(_render(node.title, context))


@_render_node.register
def _render_external_link(node: ExternalLink, context: _Context) -> str:
    """A labelled link shows its label; a bare or numbered URL is no caption text."""
    if node.brackets and node.title is not None:
        return _render(node.title, context)
    return ""


@_render_node.register
def _render_entity(node: HTMLEntity, context: _Context) -> str:
    return node.normalize()


@_render_node.register
def _render_heading(node: Heading, context: _Context) -> str:
    """The scan turned real headings into their titles; the parser also reads ``=a=b`` as one, which is text."""
    marks = "=" * node.level
    return marks + _render(node.title, context) + marks


@_render_node.register
def _render_argument(node: Argument, context: _Context) -> str:
    """Outside a template ``{{{1|default}}}`` shows its default."""
    return _render(node.default, context) if node.default is not None else ""


@_render_node.register
def _render_template(node: Template, context: _Context) -> str:
    """English's renderers alone without a table (the authors' cleaning); with one, the edition's first.

    A template nothing renders prints nothing; its title is recorded for the no-hole rule.
    """
    context.templates += 1
    name = _template_name(node)
    key = resolve_template(name)
    if context.table is None:
        renderer = renderer_of(key)
        if renderer is None:
            if not _is_silent(key):
                context.unrendered.append(template_key(name))
            return ""
        return renderer(_arguments(node, context))
    entry = context.table.find(template_key(name))
    if entry is not None:
        return entry.render(template_key(name), _arguments(node, context))
    if ":" in name:
        function, _, argument = _render(node.name, context).partition(":")
        text = parser_function(function, argument)
        if text is not None:
            return text
        context.unrendered.append(function.strip())
        return ""
    renderer = renderer_of(key)
    if renderer is not None:
        return renderer(_arguments(node, context))
    if not _is_silent(key):
        context.unrendered.append(template_key(name))
    return ""


def _is_silent(key: str) -> bool:
    """Templates known to print no caption text (footnotes, maintenance tags, citations)."""
    return key in DROPPED or key.startswith("Cite ")


def _template_name(template: Template) -> str:
    return str(template.name)


def _arguments(template: Template, context: _Context) -> Arguments:
    """Later parameters of one name win, as in MediaWiki (``{{x|a|1=b}}`` has 1 = b)."""
    values = {}
    for parameter in template.params:
        values[str(parameter.name).strip()] = _render(parameter.value, context).strip()
    return Arguments(values)
