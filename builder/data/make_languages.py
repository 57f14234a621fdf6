"""Writes ``languages.json``: every Wikipedia's File namespace names, image options and redirect words.

Run ``python builder/data/make_languages.py MEDIAWIKI CONFIG`` with a MediaWiki core checkout
(``languages/messages/Messages*.php``, ``includes/Defines.php``, the language converters in
``includes/language/``) and a checkout of Wikimedia's ``operations-mediawiki-config``
(``dblists/wikipedia.dblist``, ``wmf-config/``). The PHP files are read, never run: a small
reader takes the literal arrays and strings of the few variables needed.

How MediaWiki merges these items along a language's fallbacks (read in MediaWiki 1.43,
``LocalisationCache::loadCoreData``/``recache``/``mergeItem``/``mergeMagicWords`` and
``Language::getNamespaces``/``getNamespaceAliases``/``getNsIndex``), which this script mirrors:

* The fallback sequence is the language's own ``$fallback`` (a comma-separated list, not
  followed further: each file lists its whole chain) with ``en`` appended when it does not end
  there; English has none. A code without a Messages file gets English's data.
* ``namespaceNames`` and ``namespaceAliases`` are maps merged with PHP's ``+``: the language's
  own entry wins and a fallback only fills keys still missing. So the File namespace's name
  is the first one defined along ``code, fallbacks…, en``, and a fallback's name that the
  language replaced is *not* valid there (``lb`` says ``Fichier``; German ``Datei`` is not
  a name of lbwiki's File namespace), while aliases (keyed by the alias) accumulate along the
  whole chain, English ``Image`` included. ``namespaceGenderAliases`` is not merged: the first
  file along the chain that has it gives it.
* ``magicWords`` merge word by word: the synonyms of the language come first, then each
  fallback's not yet present, and the case flag (first element) is the fallback's, so that
  after the final English merge every word English defines has English's flag (all ``img_*``
  words are case-sensitive, ``redirect`` is not).
* A language with a converter (``LanguageConverterFactory``: ``sr``, ``zh``, ``sh``, ``ku`` …)
  also accepts the File namespace name of each of its variants (``getNamespaceAliases`` adds
  ``convertNamespace`` of every variant, which core gives from the variant's own names).
* ``File`` is always valid (``NamespaceInfo::getCanonicalIndex``) and ``Image`` comes from
  English's aliases; names match case-insensitively as a whole (``Language::lc``), with spaces
  and underscores alike. A wiki's ``$wgExtraNamespaces`` may rename the File namespace and its
  ``$wgNamespaceAliases`` add names (``wmf-config/core-Namespaces.php``); both are kept per wiki.

Which wikis are Wikipedias is ``dblists/wikipedia.dblist``; a wiki's language is its
``wgLanguageCode`` setting, else (``SiteConfiguration::siteFromDB``) the db name without
``wiki`` with ``_`` read as ``-``. The output is byte-for-byte reproducible from the same inputs.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent / "languages.json"
NS_FILE = 6
_WANTED = ("fallback", "namespaceNames", "namespaceAliases", "namespaceGenderAliases", "magicWords")
_CONVERTER_FACTORY = Path("includes/language/LanguageConverterFactory.php")
_CONVERTERS = Path("includes/language/converters")
_TOKEN = re.compile(
    r"""(?P<space>\s+)
    |(?P<comment>//[^\n]*|\#(?!\[)[^\n]*|/\*.*?\*/)
    |(?P<tag><\?php|\?>)
    |(?P<single>'(?:[^'\\]|\\.)*')
    |(?P<double>"(?:[^"\\]|\\.)*")
    |(?P<variable>\$[A-Za-z_]\w*)
    |(?P<number>0[xX][0-9A-Fa-f]+|\d+(?:\.\d+)?)
    |(?P<name>[A-Za-z_\\][\w\\]*)
    |(?P<operator>=>|::|<<<|==|!=|<=|>=|\?\?|&&|\|\||\.=|\+=)
    |(?P<char>.)""",
    re.VERBOSE | re.DOTALL,
)
_DOUBLE_ESCAPE = re.compile(r"\\(?:([ntrvef\\$\"])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u\{([0-9A-Fa-f]+)\})")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "e": "\x1b", "f": "\f", "\\": "\\", "$": "$", '"': '"'}
_INTERPOLATION = re.compile(r"(?<!\\)(?:\\\\)*\$[A-Za-z_{]|\{\$")
_DEFINE = re.compile(r"""define\(\s*['"](\w+)['"]\s*,\s*(-?\d+|'[^']*')\s*\)""")
_CONVERTER_ENTRY = re.compile(r"""'([a-z0-9-]+)'\s*=>\s*\[\s*'class'\s*=>\s*(\w+)::class""")
_VARIANTS_FUNCTION = re.compile(r"function\s+getLanguageVariants\s*\(\s*\)\s*(?::\s*array\s*)?\{\s*return\b")
_SETTING = r"""['"]{}['"]\s*=>"""
_VALID_CODE = re.compile(r"^[a-z0-9-]{2,128}$")


class SourceError(Exception):
    """A source file this script cannot read; the message names the file and the line."""


class _Reader:
    """The tokens of one PHP file and a parser for the literal values PHP's Messages files assign.

    Literals only: strings (single- or double-quoted, with their escapes, joined with ``.``),
    numbers, ``true``/``false``/``null``, constants the caller knows, and arrays in both
    ``[…]`` and ``array(…)`` syntax with PHP's key rules. Anything else in a wanted value
    is an error, so that a change of syntax upstream stops the script instead of losing data.
    """

    def __init__(self, text: str, path: Path, constants: dict[str, int | str], start: int = 0) -> None:
        self.text = text
        self.path = path
        self.constants = constants
        self.tokens: list[tuple[str, str, int]] = []
        for match in _TOKEN.finditer(text, start):
            kind = match.lastgroup
            assert kind is not None
            if kind in ("space", "comment", "tag"):
                continue
            if (kind == "char" and match.group() in "'\"") or match.group() == "<<<":
                # What follows cannot be told apart; reading stops here, and only if the reader gets this far
                self.tokens.append(("invalid", match.group(), match.start()))
                break
            self.tokens.append((kind, match.group(), match.start()))
        self.index = 0

    def _line(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def error(self, message: str) -> SourceError:
        offset = self.tokens[self.index][2] if self.index < len(self.tokens) else len(self.text)
        return SourceError(f"{self.path}: line {self._line(offset)}: {message}")

    def peek(self) -> str:
        if self.index < len(self.tokens) and self.tokens[self.index][0] == "invalid":
            raise self._invalid()
        return self.tokens[self.index][1] if self.index < len(self.tokens) else ""

    def _invalid(self) -> SourceError:
        if self.tokens[self.index][1] == "<<<":
            return self.error("heredoc strings are not supported")
        return self.error("unterminated string")

    def take(self, expected: str | None = None) -> tuple[str, str, int]:
        if self.index >= len(self.tokens):
            raise self.error(f"file ends where {expected or 'a value'} was expected")
        token = self.tokens[self.index]
        if token[0] == "invalid":
            raise self._invalid()
        if expected is not None and token[1].casefold() != expected.casefold():
            raise self.error(f"expected {expected!r}, found {token[1]!r}")
        self.index += 1
        return token

    def assignments(self, wanted: Iterable[str]) -> dict[str, object]:
        """The values of the top-level ``$name = …;`` statements for the wanted names; other statements skipped."""
        wanted = set(wanted)
        values: dict[str, object] = {}
        while self.index < len(self.tokens):
            kind, text, _ = self.tokens[self.index]
            if kind == "variable" and text[1:] in wanted:
                self.index += 1
                if self.peek() != "=":
                    raise self.error(f"unsupported statement on {text} (only '{text} = …;' is read)")
                self.index += 1
                values[text[1:]] = self.value()
                self.take(";")
            else:
                self._skip_statement()
        return values

    def _skip_statement(self) -> None:
        depth = 0
        while self.index < len(self.tokens):
            text = self.take()[1]
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
                if depth <= 0 and text == "}":
                    return
            elif text == ";" and depth <= 0:
                return

    def value(self) -> object:
        """One literal value; strings joined with ``.`` become one string."""
        result = self._term()
        while self.peek() == ".":
            self.index += 1
            right = self._term()
            if not isinstance(result, (str, int)) or not isinstance(right, (str, int)):
                raise self.error("only strings and numbers can be joined with '.'")
            result = f"{result}{right}"
        return result

    def _term(self) -> object:
        kind, text, _ = self.take()
        if kind == "single":
            return re.sub(r"\\([\\'])", r"\1", text[1:-1])
        if kind == "double":
            return self._double_quoted(text[1:-1])
        if kind == "number":
            return int(text, 16) if text[:2].lower() == "0x" else (float(text) if "." in text else int(text))
        if text in ("-", "+") and self.index < len(self.tokens) and self.tokens[self.index][0] == "number":
            number = self._term()
            assert isinstance(number, (int, float))
            return -number if text == "-" else number
        if text == "[":
            return self._array("]")
        if kind == "name":
            lowered = text.casefold()
            if lowered == "array" and self.peek() == "(":
                self.index += 1
                return self._array(")")
            if lowered in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[lowered]
            if text in self.constants and self.peek() != "::":
                return self.constants[text]
            self.index -= 1
            raise self.error(f"unknown constant or unsupported expression {text!r}")
        self.index -= 1
        raise self.error(f"unsupported expression starting with {text!r}")

    def _double_quoted(self, body: str) -> str:
        if _INTERPOLATION.search(body):
            self.index -= 1
            raise self.error("double-quoted string with a variable in it is not supported")
        out = bytearray()
        position = 0
        for match in _DOUBLE_ESCAPE.finditer(body):
            out += body[position : match.start()].encode()
            simple, octal, hexa, code_point = match.groups()
            if simple is not None:
                out += _SIMPLE_ESCAPES[simple].encode()
            elif octal is not None:
                out.append(int(octal, 8) & 0xFF)
            elif hexa is not None:
                out.append(int(hexa, 16))
            else:
                out += chr(int(code_point, 16)).encode()
            position = match.end()
        out += body[position:].encode()
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError as error:
            self.index -= 1
            raise self.error(f"string escapes do not form UTF-8 text ({error})") from error

    def _array(self, closer: str) -> dict[int | str, object]:
        """A PHP array as an ordered dict with PHP's keys: a repeated key keeps its place and takes the later value."""
        result: dict[int | str, object] = {}
        next_index = 0
        while self.peek() != closer:
            first = self.value()
            if self.peek() == "=>":
                self.index += 1
                key = _php_key(first)
                result[key] = self.value()
            else:
                key = next_index
                result[key] = first
            if isinstance(key, int) and key >= next_index:
                next_index = key + 1
            if self.peek() != closer:
                self.take(",")
        self.take(closer)
        return result


def _php_key(value: object) -> int | str:
    """PHP's array key for a value: decimal-integer strings, booleans and floats become integers."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return int(value)
    if value is None:
        return ""
    if isinstance(value, str) and re.fullmatch(r"-?(0|[1-9]\d*)", value) and value != "-0":
        return int(value)
    if isinstance(value, (int, str)):
        return value
    raise SourceError(f"an array cannot be an array key ({value!r})")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise SourceError(f"{path}: not found") from error
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(f"{path}: cannot read ({error})") from error


def read_defines(mediawiki: Path) -> tuple[dict[str, int | str], str]:
    """The ``NS_*`` constants and ``MW_VERSION`` of ``includes/Defines.php``."""
    path = mediawiki / "includes" / "Defines.php"
    constants: dict[str, int | str] = {}
    for name, value in _DEFINE.findall(_read(path)):
        constants[name] = value[1:-1] if value.startswith("'") else int(value)
    version = constants.pop("MW_VERSION", None)
    if not isinstance(version, str):
        raise SourceError(f"{path}: no define( 'MW_VERSION', … ) found")
    if constants.get("NS_FILE") != NS_FILE:
        raise SourceError(f"{path}: NS_FILE is not defined as {NS_FILE}")
    return {name: value for name, value in constants.items() if name.startswith("NS_")}, version


class MessagesData:
    """The wanted variables of every ``Messages*.php`` file read so far, by language code."""

    def __init__(self, mediawiki: Path, constants: dict[str, int | str]) -> None:
        self.directory = mediawiki / "languages" / "messages"
        self.constants = constants
        self.files: dict[str, dict[str, object]] = {}
        if not (self.directory / "MessagesEn.php").is_file():
            raise SourceError(f"{self.directory / 'MessagesEn.php'}: not found (is this a MediaWiki checkout?)")

    def path(self, code: str) -> Path:
        """``LanguageNameUtils::getFileName``: ``Messages`` + ucfirst(code) with ``-`` as ``_``."""
        return self.directory / f"Messages{(code[:1].upper() + code[1:]).replace('-', '_')}.php"

    def has_file(self, code: str) -> bool:
        return bool(_VALID_CODE.match(code)) and self.path(code).is_file()

    def get(self, code: str) -> dict[str, object]:
        """The file's variables; an empty dict when the language has no Messages file."""
        if code not in self.files:
            if not self.has_file(code):
                self.files[code] = {}
            else:
                path = self.path(code)
                self.files[code] = _Reader(_read(path), path, self.constants).assignments(_WANTED)
        return self.files[code]


def fallback_sequence(messages: MessagesData, code: str) -> list[str]:
    """``LocalisationCache::loadCoreData``: the file's own ``$fallback`` list, ending at ``en``."""
    if code == "en":
        return []
    fallback = messages.get(code).get("fallback") if messages.has_file(code) else None
    sequence = [part.strip() for part in fallback.split(",")] if isinstance(fallback, str) and fallback else []
    if not sequence or sequence[-1] != "en":
        sequence.append("en")
    return sequence


def _map(messages: MessagesData, code: str, key: str) -> dict[int | str, object]:
    value = messages.get(code).get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SourceError(f"{messages.path(code)}: ${key} is not an array")
    return value


def merged_map(messages: MessagesData, chain: list[str], key: str) -> dict[int | str, object]:
    """A mergeable map item: PHP ``$value += $fallbackValue`` along the chain (earlier entries win)."""
    merged: dict[int | str, object] = {}
    for code in chain:
        for name, value in _map(messages, code, key).items():
            merged.setdefault(name, value)
    return merged


def merged_magic_words(messages: MessagesData, chain: list[str]) -> dict[str, list[object]]:
    """``LocalisationCache::mergeMagicWords`` along the chain: own synonyms first, the fallback's case flag."""
    merged: dict[str, list[object]] = {}
    for code in chain:
        for name, info in _map(messages, code, "magicWords").items():
            if not isinstance(info, dict) or not info:
                raise SourceError(f"{messages.path(code)}: magic word {name!r} is not a non-empty array")
            entry = list(info.values())
            if name not in merged:
                merged[str(name)] = entry
            else:
                synonyms = merged[str(name)][1:] + entry[1:]
                merged[str(name)] = [entry[0], *dict.fromkeys(str(synonym) for synonym in synonyms)]
    return merged


def _flag(value: object) -> int:
    """A magic word's case flag as PHP reads it (``'0'``, ``0``, ``''`` are false): 1 is case-sensitive."""
    return 0 if value in (0, "0", "", False, None) else 1


def _normalized(entry: list[object]) -> list[object]:
    return [_flag(entry[0]), *entry[1:]]


def _display(name: object) -> str:
    """A namespace name as titles show it (``Language::getFormattedNsText``): underscores are spaces."""
    return str(name).replace("_", " ")


def file_namespace(messages: MessagesData, code: str) -> str:
    chain = [code, *fallback_sequence(messages, code)]
    return _display(merged_map(messages, chain, "namespaceNames")[NS_FILE])


def read_converters(mediawiki: Path, constants: dict[str, int | str]) -> dict[str, list[str]]:
    """Each converter language's variants (``LanguageConverterFactory`` and ``getLanguageVariants``)."""
    factory = mediawiki / _CONVERTER_FACTORY
    if not factory.is_file():
        print(f"note: {factory} not found; variant names of the File namespace are left out", file=sys.stderr)
        return {}
    variants: dict[str, list[str]] = {}
    for code, class_name in _CONVERTER_ENTRY.findall(_read(factory)):
        path = mediawiki / _CONVERTERS / f"{class_name}.php"
        text = _read(path)
        function = _VARIANTS_FUNCTION.search(text)
        if function is None:
            raise SourceError(f"{path}: no getLanguageVariants() returning an array literal")
        listed = _Reader(text, path, constants, function.end()).value()
        if not isinstance(listed, dict) or not all(isinstance(item, str) for item in listed.values()):
            raise SourceError(f"{path}: getLanguageVariants() does not return a list of codes")
        variants[code] = [str(item) for item in listed.values()]
    return variants


def language_entry(
    messages: MessagesData, code: str, variants: list[str], english: dict[str, list[object]]
) -> dict[str, object]:
    """The table's record of one language; magic words equal to English's are left out (the API fills them in).

    ``english`` holds English's wanted magic words, flags normalized.
    """
    chain = [code, *fallback_sequence(messages, code)]
    names = merged_map(messages, chain, "namespaceNames")
    aliases = [name for name, index in merged_map(messages, chain, "namespaceAliases").items() if index == NS_FILE]
    genders = next((g for c in chain if (g := _map(messages, c, "namespaceGenderAliases"))), {})
    gender_forms = genders.get(NS_FILE, {})
    if isinstance(gender_forms, dict):
        aliases += list(gender_forms.values())
    words = merged_magic_words(messages, chain)
    magic = {}
    for name, english_entry in english.items():
        entry = _normalized(words[name])
        if entry != english_entry:
            magic[name] = entry
    record: dict[str, object] = {
        "fallbacks": chain[1:],
        "file_namespace": _display(names[NS_FILE]),
        "file_aliases": list(dict.fromkeys(_display(alias) for alias in aliases)),
        "messages_file": messages.has_file(code),
    }
    variant_names = [file_namespace(messages, variant) for variant in variants if variant != code]
    if variant_names:
        record["file_variant_names"] = sorted(set(variant_names))
    if magic:
        record["magic_words"] = magic
    return record


def read_dblist(path: Path) -> list[str]:
    """The db names of a ``.dblist`` file (one a line; ``#`` comments)."""
    names = []
    for line in _read(path).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def read_setting(config: Path, setting: str, constants: dict[str, int | str]) -> tuple[dict, Path]:
    """The array of one setting (``'wgLanguageCode' => [ … ]``) in the ``wmf-config/*.php`` that assigns it.

    The ``*-labs.php`` files (the Beta Cluster's overrides) are not production's settings.
    """
    pattern = re.compile(_SETTING.format(re.escape(setting)))
    for path in sorted(path for path in (config / "wmf-config").glob("*.php") if "labs" not in path.name):
        text = _read(path)
        found = pattern.search(text)
        if found is None:
            continue
        value = _Reader(text, path, constants, found.end()).value()
        if not isinstance(value, dict):
            raise SourceError(f"{path}: {setting} is not an array")
        return value, path
    raise SourceError(f"{config / 'wmf-config'}: no file assigns {setting!r}")


def wiki_language(dbname: str, codes: dict) -> str:
    """``SiteConfiguration::siteFromDB`` for Wikipedias, unless ``wgLanguageCode`` names the wiki."""
    code = codes.get(dbname)
    if isinstance(code, str) and code != "$lang":
        return code
    if not dbname.endswith("wiki"):
        raise SourceError(f"db name {dbname!r} of the Wikipedia list does not end in 'wiki'")
    return dbname[: -len("wiki")].replace("_", "-")


def _wiki_values(dbname: str, setting: dict) -> list[dict]:
    """A wiki's own entries of a per-wiki setting (keys ``dbname`` and ``+dbname``)."""
    return [value for key in (dbname, "+" + dbname) if isinstance(value := setting.get(key), dict)]


def wiki_file_aliases(dbname: str, aliases: dict) -> list[str]:
    """The names a wiki's ``$wgNamespaceAliases`` add to its File namespace."""
    names = []
    for value in _wiki_values(dbname, aliases):
        names += [_display(name) for name, index in value.items() if index == NS_FILE]
    return names


def wiki_file_rename(dbname: str, extra: dict) -> str | None:
    """The File namespace's name a wiki's ``$wgExtraNamespaces`` sets (it replaces the language's)."""
    names = [value[NS_FILE] for value in _wiki_values(dbname, extra) if NS_FILE in value]
    return _display(names[-1]) if names else None


def _git_commit(path: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def build_table(mediawiki: Path, config: Path, mediawiki_source: str = "", config_source: str = "") -> dict:
    """The whole table, from the two checkouts; ``*_source`` describe them (default: their git commit)."""
    constants, version = read_defines(mediawiki)
    messages = MessagesData(mediawiki, constants)
    image_words = sorted(str(name) for name in _map(messages, "en", "magicWords") if str(name).startswith("img_"))
    converters = read_converters(mediawiki, constants)
    dbnames = read_dblist(config / "dblists" / "wikipedia.dblist")
    codes, codes_file = read_setting(config, "wgLanguageCode", constants)
    aliases, aliases_file = read_setting(config, "wgNamespaceAliases", constants)
    extra, extra_file = read_setting(config, "wgExtraNamespaces", constants)
    wikis: dict[str, dict[str, object]] = {}
    for dbname in dbnames:
        wiki: dict[str, object] = {"language": wiki_language(dbname, codes)}
        renamed = wiki_file_rename(dbname, extra)
        if renamed is not None:
            wiki["file_namespace"] = renamed
        added = wiki_file_aliases(dbname, aliases)
        if added:
            wiki["file_aliases"] = list(dict.fromkeys(added))
        wikis[dbname] = wiki
    english = {name: _normalized(entry) for name, entry in merged_magic_words(messages, ["en"]).items()}
    english = {name: english[name] for name in [*image_words, "redirect"]}
    languages = {
        code: language_entry(messages, code, converters.get(code, []), english)
        for code in sorted({str(wiki["language"]) for wiki in wikis.values()} | {"en"})
    }
    languages["en"]["magic_words"] = english
    return {
        "source": {
            "mediawiki": {"version": version, "commit": mediawiki_source or _git_commit(mediawiki)},
            "wikis": {
                "commit": config_source or _git_commit(config),
                "dblist": "dblists/wikipedia.dblist",
                "language_codes": f"{codes_file.relative_to(config).as_posix()} (wgLanguageCode)",
                "namespace_aliases": f"{aliases_file.relative_to(config).as_posix()} (wgNamespaceAliases)",
                "extra_namespaces": f"{extra_file.relative_to(config).as_posix()} (wgExtraNamespaces)",
            },
            "generator": "builder/data/make_languages.py",
        },
        "image_options": image_words,
        "languages": languages,
        "wikis": wikis,
    }


def dumps(value: object, indent: int = 0) -> str:
    """JSON with sorted keys, one object member a line and every list on one line: small diffs on regeneration."""
    if not isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if not value:
        return "{}"
    pad = " " * (indent + 1)
    members = [f"{pad}{json.dumps(key, ensure_ascii=False)}: {dumps(value[key], indent + 1)}" for key in sorted(value)]
    return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mediawiki", type=Path, help="MediaWiki core checkout")
    parser.add_argument("config", type=Path, help="operations-mediawiki-config checkout")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT, help="where to write (default: %(default)s)")
    parser.add_argument("--mediawiki-source", default="", help="where the MediaWiki files came from (default: git)")
    parser.add_argument("--config-source", default="", help="where the config files came from (default: git)")
    args = parser.parse_args(argv)
    try:
        table = build_table(args.mediawiki, args.config, args.mediawiki_source, args.config_source)
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    temporary = args.output.with_name(args.output.name + ".tmp")
    temporary.write_text(dumps(table) + "\n", encoding="utf-8")
    temporary.replace(args.output)
    print(f"{args.output}: {len(table['languages'])} languages, {len(table['wikis'])} wikis")
    return 0


if __name__ == "__main__":
    sys.exit(main())
