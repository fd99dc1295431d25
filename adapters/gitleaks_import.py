"""Refresh the credential rule corpus from a gitleaks checkout (docs/decisions.md#credential-rule-corpus).

    python -m adapters.gitleaks_import /path/to/gitleaks [--commit SHA]

Reads the default rule set ``config/gitleaks.toml`` and the rule sources under
``cmd/generate/config/rules/`` of a gitleaks checkout, and writes

* ``domain/safety/gitleaks_rules.py``: every rule as literal data (id, a Python regular expression,
  keywords, secret group, entropy threshold, allowlists) with the MIT licence notice of gitleaks;
* ``tests/data/gitleaks_examples.json``: each rule's own true-positive examples, taken from the
  ``tps`` of its Go source (literal strings, and the strings its helpers build: sample assignments
  around a secret, and secrets drawn from the rule's simple generator patterns with a fixed seed).

It then checks that every regular expression compiles under Python and reports the examples that
their own rule does not find. Only the standard library is used; nothing on the hook path imports
this module (a maintainer runs it to refresh the data).

Go RE2 → Python ``re``: a ``(?i)`` after the start of a pattern becomes a scoped ``(?i:…)`` up to the
end of its alternative, POSIX classes (``[[:alnum:]]``) are spelled out, ``\\z`` becomes ``\\Z``, and
patterns compile with ``re.ASCII`` (RE2's ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII). The
identifier prefix ``[\\w.-]{0,50}?`` of the semi-generic rules is dropped: it only widens a match to
the left (the redaction replaces the secret group, never the label), and without it a search does
not try 50 lazy expansions at every position; the engine widens the match itself where an allowlist
reads the whole match. The end of a secret (``(?:[\\x60'"\\s;]|\\\\[nr]|$)``) also accepts the
punctuation that ends a value in prose (``.``, ``,``, ``)``, ``。``, …).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tomllib
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

REPO = Path(__file__).resolve().parent.parent
OUT_MODULE = REPO / "domain" / "safety" / "gitleaks_rules.py"
OUT_EXAMPLES = REPO / "tests" / "data" / "gitleaks_examples.json"

# ---------------------------------------------------------------------------------------------
# RE2 → Python
# ---------------------------------------------------------------------------------------------

_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "xdigit": "0-9A-Fa-f",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\s",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
}
IDENTIFIER_PREFIX = r"[\w.-]{0,50}?"
SECRET_SUFFIX = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
#: The same end of a secret, also ended by prose punctuation (ASCII and full-width).
PROSE_SUFFIX = r"""(?:[\x60'"\s;.,:!?)\]}>|]|[，。、：；！？）」』】]|\\[nr]|$)"""


def _class_end(pattern: str, start: int) -> int:
    """The index just past the character class that opens at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            if close != -1:
                i = close + 2
                continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    raise ValueError(f"unterminated class in {pattern!r}")


def _scan(pattern: str) -> Iterator[tuple[int, str]]:
    """(index, token) for the structural tokens outside classes and escapes: ``(``, ``)``, ``|``."""
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            continue
        if ch in "()|":
            yield i, ch
        i += 1


def _scope_inline_flags(pattern: str) -> str:
    """``x(?i)y|z`` (flags to the end of the group, over later alternatives too) → ``x(?i:y)|(?i:z)``."""
    while True:
        at = next(
            (i for i, tok in _scan(pattern) if tok == "(" and pattern.startswith("(?i)", i) and i > 0), None
        )
        if at is None:
            return pattern
        depth = 0
        cuts: list[int] = []  # the top-level | of the rest of the enclosing group, then its end
        end = len(pattern)
        for i, tok in _scan(pattern):
            if i <= at + 3:
                continue
            if tok == "(":
                depth += 1
            elif tok == ")":
                if depth == 0:
                    end = i
                    break
                depth -= 1
            elif tok == "|" and depth == 0:
                cuts.append(i)
        pieces = []
        start = at + 4
        for cut in [*cuts, end]:
            pieces.append(f"(?i:{pattern[start:cut]})")
            start = cut + 1
        pattern = pattern[:at] + "|".join(pieces) + pattern[end:]


def _posix_classes(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if pattern[i] == "[":
            end = _class_end(pattern, i)
            body = pattern[i:end]
            for name, spelled in _POSIX.items():
                body = body.replace(f"[:{name}:]", spelled)
            out.append(body)
            i = end
            continue
        out.append(pattern[i])
        i += 1
    return "".join(out)


def convert(pattern: str) -> tuple[str, bool]:
    """The Python spelling of an RE2 pattern, and whether its identifier prefix was dropped."""
    flags = ""
    if pattern.startswith("(?i)"):
        flags, pattern = "(?i)", pattern[4:]
    widened = pattern.startswith(IDENTIFIER_PREFIX)
    if widened:
        pattern = pattern[len(IDENTIFIER_PREFIX) :]
    pattern = pattern.replace(SECRET_SUFFIX, PROSE_SUFFIX)
    pattern = _posix_classes(_scope_inline_flags(pattern))
    pattern = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", pattern)
    return flags + pattern, widened


def compile_python(pattern: str) -> re.Pattern[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return re.compile(pattern, re.ASCII)


# ---------------------------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------------------------


def _allowlists(rule: dict[str, Any]) -> list[tuple[str, list[str], list[str]]]:
    """(target, regexes, stopwords) of each allowlist that can apply to a text without a path or a
    commit: one that needs a path or a commit (alone, or with condition AND) never does."""
    out = []
    for allow in rule.get("allowlists", []):
        needs_place = bool(allow.get("paths") or allow.get("commits"))
        if needs_place and (
            allow.get("condition", "OR") == "AND" or not (allow.get("regexes") or allow.get("stopwords"))
        ):
            continue
        regexes = [convert(r)[0] for r in allow.get("regexes", [])]
        out.append(
            (allow.get("regexTarget", "secret"), regexes, [w.lower() for w in allow.get("stopwords", [])])
        )
    return out


def load_rules(config: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    rules = []
    skipped: list[str] = []
    for rule in data["rules"]:
        if "regex" not in rule or "path" in rule:  # a rule on file names, or for one kind of file only
            skipped.append(rule["id"])
            continue
        pattern, widened = convert(rule["regex"])
        compile_python(pattern)
        for _, regexes, _ in _allowlists(rule):
            for r in regexes:
                compile_python(r)
        rules.append(
            {
                "id": rule["id"],
                "regex": pattern,
                "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
                "secret_group": int(rule.get("secretGroup", 0)),
                "entropy": float(rule.get("entropy", 0.0)),
                "allowlists": _allowlists(rule),
                "widened": widened,
            }
        )
    allow = data.get("allowlist", {})
    global_allow = {
        "regexes": [convert(r)[0] for r in allow.get("regexes", [])],
        "stopwords": [w.lower() for w in allow.get("stopwords", [])],
        "min_version": data.get("minVersion", ""),
        "skipped": skipped,
    }
    for r in global_allow["regexes"]:
        compile_python(r)
    return rules, global_allow


def _lines(items: list[str], width: int = 104) -> Iterator[str]:
    line = "    "
    for item in items:
        piece = repr(item) + ", "
        if len(line) + len(piece) > width and line.strip():
            yield line.rstrip()
            line = "    "
        line += piece
    if line.strip():
        yield line.rstrip()


def write_module(
    rules: list[dict[str, Any]], global_allow: dict[str, Any], source: str, licence: str
) -> None:
    notice = "\n".join(f"# {line}".rstrip() for line in licence.strip().splitlines())
    out = [
        "# ruff: noqa: E501",
        "# GENERATED by adapters/gitleaks_import.py from the gitleaks default rule set; do not edit by hand.",
        f"# Source: {source}.",
        "# The rules are data of gitleaks, used under its licence:",
        "#",
        notice,
        '"""The gitleaks default rule set as literal data (docs/decisions.md#credential-rule-corpus).',
        "",
        "Each rule: ``(id, pattern, keywords, secret_group, entropy, widened, allowlists)``.",
        "``pattern`` is a Python regular expression (compile with ``re.ASCII``); ``keywords`` are lower",
        "case, and a rule only runs on a text whose lower-cased form holds one of them; ``secret_group``",
        "0 means the first non-empty group; a secret whose Shannon entropy is not above ``entropy`` is",
        "not one; ``widened`` rules had their identifier prefix dropped. Each allowlist: ``(target,",
        "regexes, stopwords)`` with target ``secret``, ``match`` or ``line``. They are applied by",
        ":mod:`domain.safety.rule_corpus`.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        f"SOURCE: Final = {source!r}",
        "#: Rules left out: they apply to file names or to one kind of file, and a text has no file name.",
        f"SKIPPED: Final = {tuple(global_allow['skipped'])!r}",
        "",
        "RULES: Final = (",
    ]
    for rule in rules:
        allow = tuple((t, tuple(r), tuple(s)) for t, r, s in rule["allowlists"] if not s)
        stop = [(t, tuple(r), s) for t, r, s in rule["allowlists"] if s]
        fields = (
            rule["id"],
            rule["regex"],
            tuple(rule["keywords"]),
            rule["secret_group"],
            rule["entropy"],
            rule["widened"],
        )
        if not stop:
            out.append(f"    ({', '.join(repr(f) for f in fields)}, {allow!r}),")
            continue
        # a long stopword list (the generic rule's) is written one line of words at a time
        out.append(f"    ({', '.join(repr(f) for f in fields)}, (")
        out.extend(f"        {a!r}," for a in allow)
        for target, regexes, words in stop:
            out.append(f"        ({target!r}, {regexes!r}, (")
            out.extend("    " + line for line in _lines(words, 100))
            out.append("        )),")
        out.append("    )),")
    out.append(")")
    out.append("")
    out.append("GLOBAL_ALLOW_REGEXES: Final = (")
    out.extend(f"    {r!r}," for r in global_allow["regexes"])
    out.append(")")
    out.append(f"GLOBAL_STOPWORDS: Final = {tuple(global_allow['stopwords'])!r}")
    OUT_MODULE.write_text("\n".join(out) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# The examples: a small evaluator for the Go expressions that build ``tps``
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<raw>`[^`]*`)|(?P<str>\"(?:[^\"\\\n]|\\.)*\")|(?P<rune>'(?:[^'\\]|\\.)+')"
    r"|(?P<nl>\n)|(?P<ws>[ \t\r]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<num>[0-9][0-9.xa-fA-F_]*)|(?P<op>\.\.\.|:=|[-+*/%&|^<>=!]=?|&&|\|\||[()\[\]{},;:.])",
    re.DOTALL,
)


class Unsupported(Exception):
    pass


def _go_string(token: str) -> str:
    if token.startswith("`"):
        return token[1:-1].replace("\r", "")
    body = token[1:-1]
    out, i = [], 0
    simple = {
        "n": "\n",
        "t": "\t",
        "r": "\r",
        "\\": "\\",
        '"': '"',
        "'": "'",
        "a": "\a",
        "b": "\b",
        "f": "\f",
        "v": "\v",
    }
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif nxt in "uU":
            size = 4 if nxt == "u" else 8
            out.append(chr(int(body[i + 2 : i + 2 + size], 16)))
            i += 2 + size
        else:
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
    return "".join(out)


def _tokens(source: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            raise Unsupported(f"cannot read Go source at {source[pos : pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup or ""
        if kind in ("ws",):
            continue
        if kind == "comment":
            if "\n" in m.group(0):
                out.append(("nl", "\n"))
            continue
        out.append((kind, m.group(0)))
    return out


def _sample(pattern: str, rng: random.Random) -> str:
    """A string the (simple) generator pattern matches, drawn with ``rng``."""
    # start-up time: only the generator of examples reads patterns with the interpreter's parser
    from re import _constants as c, _parser as p  # type: ignore[attr-defined]

    def chars(items: Any) -> list[str]:
        pool: list[str] = []
        negate = False
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                pool.append(chr(av))
            elif op is c.RANGE:
                pool.extend(chr(x) for x in range(av[0], av[1] + 1))
            elif op is c.CATEGORY:
                table = {
                    c.CATEGORY_DIGIT: "0123456789",
                    c.CATEGORY_WORD: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
                    c.CATEGORY_SPACE: " ",
                }
                if av not in table:
                    raise Unsupported(f"category {av}")
                pool.extend(table[av])
            else:
                raise Unsupported(f"class item {op}")
        if negate:
            pool = [ch for ch in map(chr, range(0x21, 0x7F)) if ch not in pool]
        return pool

    def gen(seq: Any) -> str:
        out = []
        for op, av in seq:
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.IN:
                out.append(rng.choice(chars(av)))
            elif op is c.ANY:
                out.append(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                low, high, sub = av
                high = low + 8 if high is c.MAXREPEAT else high
                out.extend(gen(sub) for _ in range(rng.randint(low, high)))
            elif op is c.SUBPATTERN:
                out.append(gen(av[-1]))
            elif op is c.BRANCH:
                out.append(gen(rng.choice(av[1])))
            elif op is c.AT:
                continue
            else:
                raise Unsupported(f"pattern item {op}")
        return "".join(out)

    return gen(p.parse(pattern))


_SAMPLE_TEMPLATES: list[str] = []


def _sample_templates(generate_go: str) -> list[str]:
    """The templates of ``utils.GenerateSampleSecrets`` in their source order."""
    body = generate_go[generate_go.index("func GenerateSampleSecrets") :]
    body = body[body.index("map[string]string{") : body.index("replacer :=")]
    tokens = [t for t in _tokens(body) if t[0] != "nl"]
    templates = []
    for i, (kind, _) in enumerate(tokens):
        if kind in ("str", "raw") and i + 1 < len(tokens) and tokens[i + 1] == ("op", ":"):
            templates.append(_go_string(tokens[i + 2][1]))
    return templates


_SIZES: Final[Mapping[str, str]] = {
    "utils.Numeric": "[0-9]{%s}",
    "utils.Hex": "[a-f0-9]{%s}",
    "utils.AlphaNumeric": "[a-z0-9]{%s}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
    "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
}


class _Eval:
    """Evaluates the Go expressions of one rule function: strings, lists of strings, and the helpers."""

    def __init__(self, tokens: list[tuple[str, str]], rng: random.Random) -> None:
        self.tokens = [t for t in tokens if t[0] != "nl"]
        self.pos = 0
        self.rng = rng
        self.env: dict[str, Any] = {}

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ("eof", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise Unsupported(f"expected {value!r}, got {tok[1]!r}")
        self.pos += 1
        return tok

    def expr(self) -> Any:
        value = self.term()
        while self.peek() == ("op", "+"):
            self.take()
            right = self.term()
            if not (isinstance(value, str) and isinstance(right, str)):
                raise Unsupported("+ on non-strings")
            value += right
        return value

    def args(self) -> list[Any]:
        self.take("(")
        out: list[Any] = []
        while self.peek()[1] != ")":
            value = self.expr()
            if self.peek()[1] == "...":
                self.take()
                out.extend(value)
            else:
                out.append(value)
            if self.peek()[1] == ",":
                self.take()
        self.take(")")
        return out

    def term(self) -> Any:
        kind, value = self.take()
        if kind in ("str", "raw"):
            return _go_string(value)
        if value == "[" and self.peek()[1] == "]":  # []string{...}
            self.take("]")
            self.take("string")
            return self.composite(keyed=False)
        if value == "map":
            for expected in ("[", "string", "]", "string"):
                self.take(expected)
            return self.composite(keyed=True)
        if kind != "name":
            raise Unsupported(f"term {value!r}")
        if self.peek()[1] != "(":
            if value not in self.env:
                raise Unsupported(f"unknown name {value}")
            return self.env[value]
        args = self.args()
        if value == "utils.GenerateSampleSecrets":
            ident, secret = args
            return [
                t.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret)
                for t in _SAMPLE_TEMPLATES
            ]
        if value == "utils.GenerateSampleSecret":
            return f'{args[0]}_api_token = "{args[1]}"'
        if value == "secrets.NewSecret":
            return _sample(args[0], self.rng)
        if value in _SIZES:
            return _SIZES[value] % args[0]
        if value == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if value == "append":
            return [*args[0], *args[1:]]
        if value == "strings.Repeat":
            return args[0] * int(args[1])
        if value == "fmt.Sprintf":
            return args[0].replace("%%", "\0") % tuple(args[1:]) if "%s" in args[0] else args[0]
        raise Unsupported(f"call {value}")

    def composite(self, *, keyed: bool) -> list[str]:
        self.take("{")
        out: list[str] = []
        while self.peek()[1] != "}":
            first = self.expr()
            if keyed:
                self.take(":")
                second = self.expr()
                out.append(second if second else first)
            else:
                out.append(first)
            if self.peek()[1] == ",":
                self.take()
        self.take("}")
        return out


def _functions(tokens: list[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
    i = 0
    while i < len(tokens):
        if tokens[i] == ("name", "func"):
            j = i
            while tokens[j][1] != "{":
                j += 1
            depth, k = 0, j
            while True:
                if tokens[k][1] == "{":
                    depth += 1
                elif tokens[k][1] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            yield tokens[j + 1 : k]
            i = k
        i += 1


def _statements(body: list[tuple[str, str]]) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """``(name, expression tokens)`` of each ``name := expr`` / ``name = expr`` (also inside ``var (…)``)."""
    i = 0
    while i < len(body):
        kind, value = body[i]
        starts = i == 0 or body[i - 1][0] == "nl" or body[i - 1][1] in ("(", "var", ";")
        if kind == "name" and starts and i + 1 < len(body) and body[i + 1][1] in (":=", "="):
            j, depth = i + 2, 0
            while j < len(body):
                v = body[j][1]
                if v in "([{":
                    depth += 1
                elif v in ")]}":
                    if depth == 0:
                        break
                    depth -= 1
                elif body[j][0] == "nl" and depth == 0 and body[j - 1][1] not in ("+", ",", "(", "{"):
                    break
                j += 1
            yield value, body[i + 2 : j]
            i = j
            continue
        i += 1


def extract_examples(rules_dir: Path) -> dict[str, list[str]]:
    examples: dict[str, list[str]] = {}
    for path in sorted(rules_dir.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        for body in _functions(_tokens(path.read_text(encoding="utf-8"))):
            ids = [
                _go_string(body[i + 2][1])
                for i in range(len(body) - 2)
                if body[i] == ("name", "RuleID") and body[i + 1][1] in (":", "=") and body[i + 2][0] == "str"
            ]
            if len(ids) != 1:
                continue
            rng = random.Random(ids[0])
            env: dict[str, Any] = {}
            tps: list[str] = []
            for name, expr in _statements(body):
                ev = _Eval(expr, rng)
                ev.env = env
                try:
                    value = ev.expr()
                except (Unsupported, IndexError, ValueError, TypeError):
                    continue
                if name == "tps":
                    tps = list(value) if isinstance(value, list) else [value]
                else:
                    env[name] = value
            if tps:
                examples[ids[0]] = [t for t in tps if isinstance(t, str) and t]
    return examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitleaks", type=Path, help="a gitleaks checkout")
    parser.add_argument("--commit", help="the checkout's commit (default: git rev-parse HEAD in it)")
    args = parser.parse_args(argv)
    root: Path = args.gitleaks
    commit = (
        args.commit
        or subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    rules, global_allow = load_rules(root / "config" / "gitleaks.toml")
    source = f"gitleaks commit {commit}, config/gitleaks.toml (minVersion {global_allow['min_version']})"
    licence = (root / "LICENSE").read_text(encoding="utf-8")
    write_module(rules, global_allow, source, licence)
    _SAMPLE_TEMPLATES[:] = _sample_templates(
        (root / "cmd/generate/config/utils/generate.go").read_text("utf-8")
    )
    examples = extract_examples(root / "cmd" / "generate" / "config" / "rules")
    known = {r["id"] for r in rules}
    examples = {k: v for k, v in sorted(examples.items()) if k in known}
    payload = {"source": source, "examples": examples}
    OUT_EXAMPLES.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(
        f"{len(rules)} rules compiled; examples for {len(examples)} rules "
        f"({sum(map(len, examples.values()))} in all); none for: {sorted(known - set(examples))}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
