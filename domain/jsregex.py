"""The JavaScript regex dialect, in Python: the fragments and the translator the core's patterns share.

The reference's patterns are JavaScript regular expressions. Python's ``re`` differs in ways that
change what matches: ``\\b``, ``\\w`` and ``\\d`` are Unicode-aware, ``\\s`` is a different set,
``.`` excludes only ``\\n`` and ``$`` also matches before a final newline. The fragments here spell
out the JavaScript meaning:

* :data:`domain.text.WS` is JavaScript's ``\\s`` (a class body); :data:`HS` is the same set without
  the line terminators (:data:`LINE_TERMINATORS`); :data:`DOT` is JavaScript's ``.``.
* :data:`WORD` is the body of JavaScript's ``\\w`` class; :data:`WORD_START`/:data:`WORD_END` are the
  outside halves of an ASCII ``\\b`` and :data:`BOUNDARY` a whole one.
* :func:`ascii_only` wraps a fragment in ``(?-i:...)``. Under ``re.IGNORECASE`` Python case-folds a
  class such as ``[A-Za-z]``, so that ``\\u212a`` KELVIN SIGN or ``\\u017f`` LONG S fall into it;
  JavaScript does not. The ``JS_`` fragments are wrapped; the bare fragments are not, and the
  patterns that use them bare keep that (case-folded) behaviour on purpose.
* :func:`js_compile` translates a whole JavaScript source (no ``m``/``s`` flags) and compiles it
  lazily (:func:`domain.text.lazy_compile`: nothing is compiled at import).
"""

from __future__ import annotations

import re
from typing import Final

from domain.text import WS, lazy_compile

__all__ = [
    "BOUNDARY",
    "DOT",
    "HS",
    "JS_BOUNDARY",
    "JS_BOUNDARY_AFTER_WORD",
    "JS_BOUNDARY_BEFORE_WORD",
    "JS_DOT",
    "JS_NOT_SPACE",
    "JS_PATTERNS",
    "JS_SPACE",
    "JS_WORD",
    "LINE_TERMINATORS",
    "WORD",
    "WORD_CHAR",
    "WORD_END",
    "WORD_START",
    "ascii_only",
    "js_compile",
    "translate",
]

#: JavaScript line terminators (what ``.`` excludes and where ``^``/``$`` stop under the m flag).
LINE_TERMINATORS: Final = r"\n\r\u2028\u2029"
#: JavaScript whitespace without the line terminators (a class body, like :data:`WS`).
HS: Final = r"\t\v\f \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff"
#: JavaScript ``.``: any character except the four line terminators.
DOT: Final = f"[^{LINE_TERMINATORS}]"

#: The body of JavaScript's ``\w`` class: the ASCII word characters.
WORD: Final = "A-Za-z0-9_"
WORD_CHAR: Final = f"[{WORD}]"
#: Not preceded / not followed by a word character: the outside half of ``\b`` next to a word
#: character of the pattern.
WORD_START: Final = f"(?<!{WORD_CHAR})"
WORD_END: Final = f"(?!{WORD_CHAR})"
#: JavaScript ``\b``: a boundary between an ASCII word character and anything else (an alternation;
#: put it inside a group).
BOUNDARY: Final = f"(?<={WORD_CHAR})(?!{WORD_CHAR})|(?<!{WORD_CHAR})(?={WORD_CHAR})"


def ascii_only(fragment: str) -> str:
    """``fragment`` matched without case folding, whatever the pattern's flags.

    A case-folded class that holds characters above U+00FF is also very slow to compile."""
    return f"(?-i:{fragment})"


#: JavaScript ``\w``, ``\b``, ``.``, ``\s`` and ``\S``, never case-folded.
JS_WORD: Final = ascii_only(WORD_CHAR)
JS_BOUNDARY: Final = ascii_only(BOUNDARY)
#: ``\b`` where the pattern itself supplies the word character on the inside (``\b(?:word|...)``
#: at the start, ``(...)\b`` at the end): only the outside needs checking, which is much faster.
JS_BOUNDARY_BEFORE_WORD: Final = ascii_only(WORD_START)
JS_BOUNDARY_AFTER_WORD: Final = ascii_only(WORD_END)
JS_DOT: Final = ascii_only(DOT)
JS_SPACE: Final = ascii_only(f"[{WS}]")
JS_NOT_SPACE: Final = ascii_only(f"[^{WS}]")


#: Every pattern compiled by :func:`js_compile`, with its source and flags (the tests check the fast
#: edge boundaries against the general translation).
JS_PATTERNS: Final[list[tuple[str, int, re.Pattern[str]]]] = []


def js_compile(source: str, flags: int = 0) -> re.Pattern[str]:
    """Compile a JavaScript regex source (no ``m``/``s`` flags) with JavaScript semantics.

    ``\\b``, ``\\w`` and ``\\d`` become ASCII-only, ``\\s``/``\\S`` use the JavaScript whitespace
    set, ``.`` excludes the JavaScript line terminators and ``$`` means the end of the input. Case
    folding (``re.I``) stays Unicode-aware, so ``CONTRASEÑA`` still matches ``contraseña``. A ``\\b``
    that opens or closes the whole source must sit next to a word character of the pattern.
    """
    pattern = lazy_compile(translate(source, edge_boundaries=True), flags)
    JS_PATTERNS.append((source, flags, pattern))
    return pattern


def translate(source: str, *, edge_boundaries: bool) -> str:
    """The Python source for a JavaScript regex source (see :func:`js_compile`). With
    ``edge_boundaries`` a ``\\b`` at the very start or end only checks its outside."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            nxt = source[i + 1]
            i += 2
            if nxt == "b" and not in_class:
                if edge_boundaries and i == 2:
                    out.append(JS_BOUNDARY_BEFORE_WORD)
                elif edge_boundaries and i == len(source):
                    out.append(JS_BOUNDARY_AFTER_WORD)
                else:
                    out.append(JS_BOUNDARY)
            elif nxt == "d":
                out.append("0-9" if in_class else "[0-9]")
            elif nxt == "w":
                out.append(WORD if in_class else JS_WORD)
            elif nxt == "s":
                out.append(WS if in_class else JS_SPACE)
            elif nxt == "S" and not in_class:
                out.append(JS_NOT_SPACE)
            else:
                out.append("\\" + nxt)
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            # A leading ``^`` negates the class.
            if i < len(source) and source[i] == "^":
                out.append("^")
                i += 1
            continue
        elif ch == ".":
            out.append(JS_DOT)
            i += 1
            continue
        elif ch == "$":
            out.append("\\Z")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)
