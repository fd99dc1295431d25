"""URL normalisation for memory identities: the effects of the WHATWG URL parser that matter for an
identity (http and https only; docs/decisions.md#memory-keys).

:func:`normalize_url` gives what ``new URL(raw).href`` gives for an http(s) URL (scheme and host
lower-cased, IDNA labels as Punycode, IPv4 and IPv6 hosts in canonical form, default ports dropped,
dot segments resolved, the WHATWG percent-encode sets applied), with the fragment dropped and
trailing slashes of a longer path removed, or ``None`` where the parser would throw.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from typing import Final

from domain.text import lazy_compile, strip_trailing_punctuation

__all__ = ["normalize_url"]

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
    cleaned = strip_trailing_punctuation(raw).strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "")
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
