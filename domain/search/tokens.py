"""Word forms for search (docs/decisions.md#d16): text → index terms, and any text → a query.

A term is a lower-cased word with its diacritics removed, stemmed by the Porter algorithm (the one
SQLite's ``porter`` tokenizer runs), so ``deploys``, ``deployed`` and ``deploying`` are one term. A
run of CJK characters, which has no spaces between its words, becomes its overlapping character
pairs (a single character stays itself). A handful of English function words are dropped: they
answer nothing and only turn an AND query into no match. Every function here is total: any string —
quotes, NUL, lone surrogates, a megabyte of text — gives terms or none, never an error.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

#: A query longer than this is cut (a search is a few words; a pasted file is still a valid query).
MAX_QUERY_CHARS: Final = 2000
#: At most this many distinct terms of a query are used (the first ones).
MAX_QUERY_TERMS: Final = 32

_WORD: Final = re.compile(r"[^\W_]+", re.UNICODE)
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

STOPWORDS: Final = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def _fold(text: str) -> str:
    """Lower case without diacritics (``remove_diacritics 2``); lone surrogates are dropped."""
    if text.isascii():
        return text.lower()  # nothing to decompose, drop or encode (most memories)
    clean = text.encode("utf-8", "ignore").decode("utf-8")
    decomposed = unicodedata.normalize("NFKD", clean.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def words(text: str) -> list[str]:
    """The folded words of ``text`` in order, CJK runs as their character pairs, before stemming."""
    found: list[str] = []
    for word in _WORD.findall(_fold(text)):
        if not _CJK.search(word):
            found.append(word)
            continue
        at = 0
        for match in _CJK.finditer(word):
            if match.start() > at:
                found.append(word[at : match.start()])
            found.extend(_cjk_terms(match.group()))
            at = match.end()
        if at < len(word):
            found.append(word[at:])
    return found


def terms(text: str) -> list[str]:
    """The index terms of ``text`` in order (stop words dropped, every other word stemmed)."""
    return list(_terms(text))


def term_tuple(text: str) -> tuple[str, ...]:
    """:func:`terms` as the tuple it is remembered as (no copy, for a caller that only reads it)."""
    return _terms(text)


# Sized for a store of 100,000 memories (docs/performance.md, "Search"): a smaller table evicts
# texts a search over such a store needs again at once (its terms take about as much memory as the
# texts themselves).
@functools.lru_cache(maxsize=131072)
def _terms(text: str) -> tuple[str, ...]:
    """:func:`terms` remembered by text (a memory's text is tokenised once per process)."""
    return tuple(stem(w) for w in words(text) if w not in STOPWORDS)


def query_terms(query: str) -> tuple[str, ...]:
    """The distinct terms of a query, in order. A query of stop words only keeps them (``how`` is
    then what was asked for)."""
    cut = query[:MAX_QUERY_CHARS]
    found = [w for w in words(cut) if w not in STOPWORDS] or words(cut)
    seen: dict[str, None] = {}
    for word in found:
        seen.setdefault(stem(word), None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return tuple(seen)


def fts_literal(term: str) -> str:
    """``term`` as an FTS5 string literal: any character is safe inside double quotes."""
    return '"' + term.replace('"', '""') + '"'


# ---------------------------------------------------------------------------------------------------
# The Porter stemmer (M. F. Porter, 1980), as SQLite's ``porter`` tokenizer applies it: only to
# ASCII letters; a word with a digit or another script is kept as it is.
# ---------------------------------------------------------------------------------------------------

_ASCII_WORD: Final = re.compile(r"[a-z]+")
_VOWELS: Final = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    c = word[i]
    if c in _VOWELS:
        return False
    if c == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem_: str) -> int:
    """The number of vowel-consonant sequences (``m`` of the algorithm)."""
    pattern = "".join("c" if _is_consonant(stem_, i) else "v" for i in range(len(stem_)))
    return len(re.findall("v+c+", pattern))


def _has_vowel(stem_: str) -> bool:
    return any(not _is_consonant(stem_, i) for i in range(len(stem_)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    if len(word) < 3:
        return False
    last = len(word) - 1
    return (
        _is_consonant(word, last - 2)
        and not _is_consonant(word, last - 1)
        and _is_consonant(word, last)
        and word[-1] not in "wxy"
    )


def _replace(word: str, suffixes: tuple[tuple[str, str], ...], min_measure: int) -> str:
    for suffix, replacement in suffixes:
        if word.endswith(suffix):
            base = word[: len(word) - len(suffix)]
            return base + replacement if _measure(base) > min_measure else word
    return word


_STEP2: Final = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    ("logi", "log"),
)  # fmt: skip
_STEP3: Final = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
    ("ness", ""),
)  # fmt: skip
_STEP4: Final = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
    "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _step1(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                return word + "e"
            if _double_consonant(word) and word[-1] not in "lsz":
                return word[:-1]
            if _measure(word) == 1 and _cvc(word):
                return word + "e"
            return word
    return word


def _step4(word: str) -> str:
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if word.endswith(suffix):
            base = word[: len(word) - len(suffix)]
            if _measure(base) > 1 and (suffix != "ion" or base.endswith(("s", "t"))):
                return base
            return word
    return word


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter stem of an ASCII word of three letters or more; any other word unchanged."""
    if len(word) < 3 or not _ASCII_WORD.fullmatch(word):
        return word
    word = _step1(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    word = _step4(word)
    if word.endswith("e"):
        base = word[:-1]
        if _measure(base) > 1 or (_measure(base) == 1 and not _cvc(base)):
            word = base
    if _double_consonant(word) and word.endswith("l") and _measure(word) > 1:
        word = word[:-1]
    return word
