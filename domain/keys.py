"""Exact and identity keys of memories (docs/decisions.md#memory-keys, docs/decisions.md#d9).

* The **exact key** is ``type:canonical(text)``; two memories with equal exact keys say the same thing.
* The **identity key** additionally recognises that two project/reference memories are about the same
  concrete thing when they name the same URL or the same file path: ``type:url:<normalised url>``,
  ``type:path:<normalised path>``, and otherwise the exact key. Feedback and decisions have no
  identity beyond their exact key.

Where the reference found "paths" in ordinary prose (``and/or``, ``24/7``, ``unit/integration``,
dates, fractions) workmem follows docs/decisions.md#d9: a path identity needs a file extension, a
leading ``/``, ``./``, ``../`` or ``~/``, or at least two separators with a non-numeric segment.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Final

from domain.ids import hash16
from domain.model import MemoryEntry, MemoryType
from domain.text import WS, js_trim, lazy_compile, memory_key

# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------

_ENTITY_TYPES: Final = frozenset({MemoryType.PROJECT, MemoryType.REFERENCE})


# Both keys of an entry, by entry object (docs/performance.md, "Simulation"). Consolidation,
# promotion and evidence ask for the keys of every stored entry several times per operation, and the
# entries are the same frozen objects from one operation to the next. Keyed by ``id`` with the entry
# kept in the value, so a hit is only a hit for the very same object (an id cannot be reused while it
# is remembered); bounded (emptied when full) and invisible: the keys depend on the entry alone.
_KEYS_LIMIT: Final = 16384
_KEYS: Final[dict[int, tuple[MemoryEntry, str, str]]] = {}


def entry_keys(entry: MemoryEntry) -> tuple[str, str]:
    """``(exact_key(entry), identity_key(entry))``, remembered per entry object."""
    hit = _KEYS.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[1], hit[2]
    # A StrEnum formats as its value; reading ``.value`` goes through the slow enum descriptor.
    exact = memory_key(entry.type, entry.text)
    identity = exact
    if entry.type in _ENTITY_TYPES:
        concrete = concrete_identity(entry.text)
        if concrete is not None:
            identity = f"{entry.type}:{concrete}"
    if len(_KEYS) >= _KEYS_LIMIT:
        _KEYS.clear()
    _KEYS[id(entry)] = (entry, exact, identity)
    return exact, identity


def exact_key(entry: MemoryEntry) -> str:
    """``type:canonical(text)``."""
    hit = _KEYS.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[1]
    return entry_keys(entry)[0]


def identity_key(entry: MemoryEntry) -> str:
    """``type:url:…`` / ``type:path:…`` for project and reference memories that name a concrete URL or
    path; the exact key otherwise (and always for feedback and decisions)."""
    hit = _KEYS.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[2]
    return entry_keys(entry)[1]


def carry_keys(before: MemoryEntry, after: MemoryEntry) -> None:
    """``after`` has the type and text of ``before``: it has the same keys and key hashes."""
    for memo in (_KEYS, _HASHES):
        hit = memo.get(id(before))
        if hit is not None and hit[0] is before:
            if len(memo) >= _KEYS_LIMIT:
                memo.clear()
            memo[id(after)] = (after, hit[1], hit[2])


#: The key hashes of an entry, by entry object (as :data:`_KEYS`).
_HASHES: Final[dict[int, tuple[MemoryEntry, str, str]]] = {}


def entry_key_hashes(entry: MemoryEntry) -> tuple[str, str]:
    """``(key_hash(exact_key(entry)), key_hash(identity_key(entry)))``, remembered per entry object:
    archive revival compares every stored entry's key hashes with the archive markers at every
    normalisation (docs/performance.md, "Simulation")."""
    hit = _HASHES.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[1], hit[2]
    exact, identity = entry_keys(entry)
    hashes = (key_hash(exact), key_hash(identity))
    if len(_HASHES) >= _KEYS_LIMIT:
        _HASHES.clear()
    _HASHES[id(entry)] = (entry, *hashes)
    return hashes


@lru_cache(maxsize=65536)
def key_hash(key: str) -> str:
    """The 16-hex digest of a key, as stored in tombstones and archive markers. Memoised: archive
    revival hashes every stored memory's keys at every normalisation (docs/performance.md)."""
    return hash16(key)


@lru_cache(maxsize=65536)
def concrete_identity(text: str) -> str | None:
    """``url:…`` for the first http(s) URL that parses, else ``path:…`` for the first concrete path
    (quoted candidates first, then bare ones), else ``None``. A pure function of the text, so its
    answers are remembered: consolidation asks for every entry's identity several times per step."""
    url_match = _URL_IN_TEXT.search(text)
    if url_match is not None:
        url = normalize_url(url_match.group(0))
        if url is not None:
            return "url:" + url
    for match in _WRAPPED.finditer(text):
        found = _concrete_path(match.group(1))
        if found is not None:
            return found
    # Unlike the reference (which gives up after the first bare candidate), a false path such as
    # "and/or" does not hide a real one later in the text.
    for match in _BARE_PATH.finditer(text):
        found = _concrete_path(match.group(0))
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------------------------

_EXTENSIONS: Final = "json|jsonc|ts|tsx|js|jsx|mjs|cjs|md|yaml|yml|toml|lock|config"
_NOT_IN_TOKEN: Final = f"[^{WS}`\"'<>]"
_WORDCH: Final = "[A-Za-z0-9_]"
# JavaScript's ASCII ``\b`` followed by the alternative ``$`` (end of input).
_JS_BOUNDARY_OR_END: Final = f"(?:(?<={_WORDCH})(?!{_WORDCH})|(?<!{_WORDCH})(?={_WORDCH})|\\Z)"

_WRAPPED: Final = lazy_compile("[`\"']([^`\"']+)[`\"']")
_BARE_PATH: Final = lazy_compile(
    "(?:"
    f"~?/{_NOT_IN_TOKEN}+"
    f"|(?:\\.{{1,2}}[\\\\/]|[A-Za-z0-9_.-]+[\\\\/]){_NOT_IN_TOKEN}+"
    f"|[A-Za-z0-9_.-]+\\.(?i:{_EXTENSIONS})"
    f"){_JS_BOUNDARY_OR_END}"
)
_EDGE_QUOTES: Final = lazy_compile("^[`\"']+|[`\"']+\\Z")
_TRAILING_PUNCT: Final = lazy_compile("[),.;:!?]+\\Z")
_BACKSLASHES: Final = lazy_compile(r"\\+")
_SLASH_RUN: Final = lazy_compile("/+")
_KNOWN_EXTENSION: Final = lazy_compile(f"\\.(?:{_EXTENSIONS})\\Z", re.IGNORECASE)
# Any extension, for names inside a directory: letters and digits with at least one letter.
_ANY_EXTENSION: Final = lazy_compile(r"[^/]\.[A-Za-z0-9]{0,9}[A-Za-z][A-Za-z0-9]{0,9}\Z")


def normalize_path(raw: str) -> str | None:
    """The path a candidate names, in canonical spelling, or ``None`` when nothing is left.

    Quotes and trailing sentence punctuation are dropped, backslashes become ``/``, runs of ``/``
    collapse (also a leading ``//``), ``.`` segments disappear (so ``./x`` is ``x``), and a trailing
    ``/`` is dropped. Case is kept; ``~`` and ``..`` are kept."""
    unwrapped = _EDGE_QUOTES.sub("", js_trim(raw))
    unwrapped = _TRAILING_PUNCT.sub("", unwrapped)
    unwrapped = _BACKSLASHES.sub("/", unwrapped)
    if not unwrapped:
        return None
    absolute = unwrapped.startswith("/")
    segments = [s for s in unwrapped.split("/") if s and s != "."]
    if not segments:
        return "/" if absolute else None
    return ("/" if absolute else "") + "/".join(segments)


def is_concrete_path(path: str) -> bool:
    """A file extension, a leading ``/``, ``../`` or ``~/`` (``./`` is already folded away), or at
    least two separators with a segment that is not a number (docs/decisions.md#d9)."""
    if path in ("", ".", "..", "/", "~"):
        return False
    if path.startswith(("/", "../", "~/")):
        return True
    if _KNOWN_EXTENSION.search(path):
        return True
    segments = path.split("/")
    if len(segments) >= 2 and _ANY_EXTENSION.search(segments[-1]):
        return True
    return len(segments) >= 3 and any(not s.isdecimal() for s in segments)


def _concrete_path(raw: str) -> str | None:
    path = normalize_path(raw)
    if path is None or not is_concrete_path(path):
        return None
    return "path:" + path


# ---------------------------------------------------------------------------------------------
# URLs: the effects of the WHATWG URL parser that matter for an identity (http and https only)
# ---------------------------------------------------------------------------------------------

_URL_IN_TEXT: Final = lazy_compile(f"https?://{_NOT_IN_TOKEN}+", re.IGNORECASE)
_SCHEME: Final = lazy_compile("(https?):", re.IGNORECASE)
_DEFAULT_PORT: Final = {"http": 80, "https": 443}
_FORBIDDEN_HOST: Final = frozenset("\x00\t\n\r #/:<>?@[\\]^|%\x7f") | frozenset(map(chr, range(0x20)))
_C0_OR_SPACE: Final = "".join(map(chr, range(0x21)))
_PCT: Final = lazy_compile("%([0-9A-Fa-f]{2})")

# Percent-encode sets (WHATWG): C0 controls and everything above "~" always; plus these.
_QUERY_EXTRA: Final = frozenset(" \"#<>'")
_PATH_EXTRA: Final = frozenset(' "#<>?`{}')
_USERINFO_EXTRA: Final = _PATH_EXTRA | frozenset("/:;=@[\\]^|")


def _percent_encode(text: str, extra: frozenset[str]) -> str:
    out: list[str] = []
    for ch in text:
        if ord(ch) < 0x20 or ord(ch) > 0x7E or ch in extra:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return "".join(out)


def _percent_decode(text: str) -> str:
    raw = bytearray()
    i = 0
    encoded = text.encode("utf-8", "surrogatepass")
    while i < len(encoded):
        if encoded[i] == 0x25 and _PCT.fullmatch(encoded[i : i + 3].decode("ascii", "replace")):
            raw.append(int(encoded[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.append(encoded[i])
            i += 1
    return raw.decode("utf-8", "replace")


def _ipv4_number(part: str) -> int | None:
    if not part:
        return None
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, radix = part[1:], 8
    if not part:
        return 0
    try:
        return int(part, radix) if part.isascii() and part.isalnum() else None
    except ValueError:
        return None


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    if last and last.isascii() and last.isdecimal():
        return True
    return _ipv4_number(last) is not None


def _parse_ipv4(host: str) -> str | None:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for index, value in enumerate(values[:-1]):
        address += value * 256 ** (3 - index)
    return ".".join(str((address >> shift) & 0xFF) for shift in (24, 16, 8, 0))


def _domain_label(label: str) -> str | None:
    """UTS-46 style: compatibility-fold and lower-case; a non-ASCII label becomes ``xn--`` Punycode
    (``ß`` is kept, as in non-transitional processing); a malformed ``xn--`` label is an error."""
    folded = unicodedata.normalize("NFKC", label).lower()
    if "\ufffd" in folded:
        return None
    if not folded.isascii():
        return "xn--" + folded.encode("punycode").decode("ascii")
    if folded.startswith("xn--"):
        try:
            decoded = folded[4:].encode("ascii").decode("punycode")
        except UnicodeError:
            return None
        if not decoded or decoded.isascii():
            return None
    return folded


def _parse_host(raw: str) -> str | None:
    if raw.startswith("["):
        if not raw.endswith("]") or "%" in raw:
            return None
        try:
            return f"[{ipaddress.IPv6Address(raw[1:-1]).compressed}]"
        except ValueError:
            return None
    if not raw:
        return None
    labels = [_domain_label(label) for label in _percent_decode(raw).split(".")]
    if any(label is None for label in labels):
        return None
    domain = ".".join(label for label in labels if label is not None)
    if not domain or any(ch in _FORBIDDEN_HOST for ch in domain):
        return None
    if _ends_in_number(domain):
        return _parse_ipv4(domain)
    return domain


def _resolve_path(raw: str) -> str:
    segments: list[str] = []
    pieces = raw.split("/")[1:] if raw else [""]
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        lowered = piece.lower()
        if lowered in ("..", ".%2e", "%2e.", "%2e%2e"):
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif lowered in (".", "%2e"):
            if last:
                segments.append("")
        else:
            segments.append(_percent_encode(piece, _PATH_EXTRA))
    return "/" + "/".join(segments)


def normalize_url(raw: str) -> str | None:
    """``new URL(raw)`` for http(s), with the fragment dropped and trailing slashes of a longer
    path removed; ``None`` when the URL would not parse. Trailing sentence punctuation is ignored."""
    cleaned = _TRAILING_PUNCT.sub("", raw).strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "")
    cleaned = cleaned.replace("\r", "")
    scheme_match = _SCHEME.match(cleaned)
    if scheme_match is None:
        return None
    scheme = scheme_match.group(1).lower()
    rest = cleaned[scheme_match.end() :].lstrip("/\\")
    cut = min((i for i in (rest.find(c) for c in "/\\?#") if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    tail = tail.split("#", 1)[0]
    path, _, query = tail.partition("?")
    path = path.replace("\\", "/")
    has_query = "?" in tail

    userinfo, at, hostport = authority.rpartition("@")
    if not at:
        userinfo, hostport = "", authority
    host_raw, port_raw = hostport, ""
    close = hostport.rfind("]")
    colon = hostport.rfind(":")
    if colon > close:
        host_raw, port_raw = hostport[:colon], hostport[colon + 1 :]
    host = _parse_host(host_raw)
    if host is None:
        return None
    port_text = ""
    if port_raw:
        if not (port_raw.isascii() and port_raw.isdecimal()):
            return None
        port = int(port_raw)
        if port > 65535:
            return None
        if port != _DEFAULT_PORT[scheme]:
            port_text = f":{port}"

    credentials = ""
    if userinfo:
        user, _, password = userinfo.partition(":")
        user = _percent_encode(user, _USERINFO_EXTRA)
        password = _percent_encode(password, _USERINFO_EXTRA)
        if user or password:
            credentials = user + (":" + password if password else "") + "@"

    pathname = _resolve_path(path)
    if len(pathname) > 1:
        pathname = pathname.rstrip("/") or "/"
    search = "?" + _percent_encode(query, _QUERY_EXTRA) if has_query else ""
    return f"{scheme}://{credentials}{host}{port_text}{pathname}{search}"


def first_per_key(
    entries: Iterable[MemoryEntry], key: Callable[[MemoryEntry], str] = exact_key
) -> list[MemoryEntry]:
    """``entries`` with only the first entry of each key (by default the exact key), in order."""
    seen: set[str] = set()
    out: list[MemoryEntry] = []
    for entry in entries:
        k = key(entry)
        if k not in seen:
            seen.add(k)
            out.append(entry)
    return out
