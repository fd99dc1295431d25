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

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from domain.enums import MemoryType
from domain.ids import hash16
from domain.jsregex import BOUNDARY
from domain.model import MemoryEntry
from domain.text import WS, js_trim, lazy_compile, memory_key, strip_trailing_punctuation
from domain.urls import normalize_url as normalize_url  # re-exported: its old import path

if TYPE_CHECKING:
    from domain.caches import Caches

# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------

_ENTITY_TYPES: Final = frozenset({MemoryType.PROJECT, MemoryType.REFERENCE})


def entry_keys(entry: MemoryEntry, caches: Caches | None = None) -> tuple[str, str]:
    """``(exact_key(entry), identity_key(entry))``; filed per entry object in ``caches`` when given
    (docs/decisions.md#d14): consolidation, promotion and evidence ask for the keys of every stored
    entry several times per operation, and the keys depend on the entry's type and text alone."""
    if caches is not None:
        hit = caches.keys.table.get(id(entry))  # inlined IdentityMemo.get: the hottest lookup
        if hit is not None and hit[0] is entry:
            return hit[1]
    # A StrEnum formats as its value; reading ``.value`` goes through the slow enum descriptor.
    exact = memory_key(entry.type, entry.text)
    identity = exact
    if entry.type in _ENTITY_TYPES:
        concrete = concrete_identity(entry.text)
        if concrete is not None:
            identity = f"{entry.type}:{concrete}"
    if caches is not None:
        caches.keys.put(entry, (exact, identity))
    return exact, identity


def exact_key(entry: MemoryEntry, caches: Caches | None = None) -> str:
    """``type:canonical(text)``."""
    if caches is None:
        return memory_key(entry.type, entry.text)
    return entry_keys(entry, caches)[0]


def identity_key(entry: MemoryEntry, caches: Caches | None = None) -> str:
    """``type:url:…`` / ``type:path:…`` for project and reference memories that name a concrete URL or
    path; the exact key otherwise (and always for feedback and decisions)."""
    return entry_keys(entry, caches)[1]


def entry_key_hashes(entry: MemoryEntry, caches: Caches | None = None) -> tuple[str, str]:
    """``(key_hash(exact_key(entry)), key_hash(identity_key(entry)))``; filed per entry object in
    ``caches`` when given: archive revival compares every stored entry's key hashes with the archive
    markers at every normalisation (docs/performance.md, "Simulation")."""
    if caches is not None:
        hit = caches.key_hashes.table.get(id(entry))  # inlined IdentityMemo.get: the hottest lookup
        if hit is not None and hit[0] is entry:
            return hit[1]
    exact, identity = entry_keys(entry, caches)
    hashes = (key_hash(exact), key_hash(identity))
    if caches is not None:
        caches.key_hashes.put(entry, hashes)
    return hashes


# The two memos below take strings alone (the text of a memory, a key): pure functions of plain
# strings, shared by every caller of the process as the other string memos of the core are
# (domain/text.py, docs/decisions.md#d14).
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
# Paths, and URLs in text (a URL itself is normalised by domain.urls)
# ---------------------------------------------------------------------------------------------

_EXTENSIONS: Final = "json|jsonc|ts|tsx|js|jsx|mjs|cjs|md|yaml|yml|toml|lock|config"
_NOT_IN_TOKEN: Final = f"[^{WS}`\"'<>]"
# JavaScript's ASCII ``\b`` followed by the alternative ``$`` (end of input).
_JS_BOUNDARY_OR_END: Final = f"(?:{BOUNDARY}|\\Z)"

_WRAPPED: Final = lazy_compile("[`\"']([^`\"']+)[`\"']")
_BARE_PATH: Final = lazy_compile(
    "(?:"
    f"~?/{_NOT_IN_TOKEN}+"
    f"|(?:\\.{{1,2}}[\\\\/]|[A-Za-z0-9_.-]+[\\\\/]){_NOT_IN_TOKEN}+"
    f"|[A-Za-z0-9_.-]+\\.(?i:{_EXTENSIONS})"
    f"){_JS_BOUNDARY_OR_END}"
)
_URL_IN_TEXT: Final = lazy_compile(f"https?://{_NOT_IN_TOKEN}+", re.IGNORECASE)
_EDGE_QUOTES: Final = lazy_compile("^[`\"']+|[`\"']+\\Z")
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
    unwrapped = strip_trailing_punctuation(unwrapped)
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
