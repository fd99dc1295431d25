"""Which kind of check a shell command runs (typecheck, test, lint, build, runtime), from its command
word and its subcommand or script name, never from any substring of the line
(docs/decisions.md#hot-session-state-errors)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from domain.enums import ErrorCategory
from domain.text import lazy_compile

_CATEGORY_PRIORITY: Final = (
    ErrorCategory.TYPECHECK,
    ErrorCategory.TEST,
    ErrorCategory.LINT,
    ErrorCategory.BUILD,
)


_NAME_RULES: Final[tuple[tuple[re.Pattern[str], ErrorCategory], ...]] = tuple(
    (lazy_compile(rf"(?<![A-Za-z0-9_])(?:{words})(?![A-Za-z0-9_])"), category)
    for words, category in (
        ("tsc|typecheck", ErrorCategory.TYPECHECK),
        ("test|vitest|jest|mocha|pytest", ErrorCategory.TEST),
        ("lint|eslint|biome", ErrorCategory.LINT),
        ("build|webpack|tsup", ErrorCategory.BUILD),
    )
)


#: Programs that are themselves a check of one category, whatever their arguments.
_DIRECT_TOOLS: Final[dict[str, ErrorCategory]] = {
    "tsc": ErrorCategory.TYPECHECK,
    "vue-tsc": ErrorCategory.TYPECHECK,
    "vitest": ErrorCategory.TEST,
    "jest": ErrorCategory.TEST,
    "mocha": ErrorCategory.TEST,
    "pytest": ErrorCategory.TEST,
    "eslint": ErrorCategory.LINT,
    "biome": ErrorCategory.LINT,
    "webpack": ErrorCategory.BUILD,
    "tsup": ErrorCategory.BUILD,
}


#: Package managers: ``<pm> test`` and ``<pm> run <script>`` (yarn, pnpm and bun also ``<pm> <script>``).
_PACKAGE_MANAGERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})
_BARE_SCRIPT_MANAGERS: Final = frozenset({"pnpm", "yarn", "bun"})
#: Programs whose subcommand (``go test``, ``cargo build``, ``vite build``, ``make test``) names the check.
_SUBCOMMAND_TOOLS: Final = frozenset(
    {"go", "cargo", "deno", "dotnet", "vite", "next", "nx", "turbo", "make", "just", "gradle", "mvn"}
)


#: Prefixes that run the next word as the real command.
_WRAPPERS: Final = frozenset({"sudo", "time", "env", "nice", "command", "exec", "npx", "bunx", "pnpx"})
_RUNNER_SUBCOMMANDS: Final[dict[str, frozenset[str]]] = {
    "uv": frozenset({"run"}),
    "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run"}),
    "npm": frozenset({"exec"}),
    "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"exec", "dlx"}),
    "bun": frozenset({"x"}),
}


_SEGMENT_SPLIT: Final = lazy_compile(r"&&|\|\||[;|&\n\r]")
_ENV_ASSIGNMENT: Final = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_QUOTES: Final = "\"'`"


def _name_category(name: str) -> ErrorCategory | None:
    """The category a script or target name stands for (``test:unit`` -> test, ``lint-fix`` -> lint)."""
    for pattern, category in _NAME_RULES:
        if pattern.search(name):
            return category
    return None


def _first_operand(tokens: Sequence[str]) -> tuple[str | None, Sequence[str]]:
    """The first token that is not an option, and the tokens after it."""
    for index, token in enumerate(tokens):
        if not token.startswith("-"):
            return token, tokens[index + 1 :]
    return None, ()


def _segment_category(tokens: Sequence[str]) -> ErrorCategory | None:
    """Classify one simple command, given as lower-cased words."""
    index = 0
    while index < len(tokens) and (tokens[index] in _WRAPPERS or _ENV_ASSIGNMENT.match(tokens[index])):
        index += 1
        # options of a wrapper (``env -i``, ``npx --yes``) belong to the wrapper
        while index < len(tokens) and tokens[index].startswith("-"):
            index += 1
    if index >= len(tokens):
        return None
    word = tokens[index].rsplit("/", 1)[-1]
    rest = tokens[index + 1 :]

    if word.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
        return _segment_category(rest[1:])
    sub, after = _first_operand(rest)
    if sub is not None and sub in _RUNNER_SUBCOMMANDS.get(word, frozenset()):
        return _segment_category(after)
    if word in _DIRECT_TOOLS:
        return _DIRECT_TOOLS[word]
    if word in _PACKAGE_MANAGERS:
        if sub in ("test", "t", "tst"):
            return ErrorCategory.TEST
        if sub in ("run", "run-script"):
            script, _ = _first_operand(after)
            return _name_category(script) if script is not None else None
        if word in _BARE_SCRIPT_MANAGERS and sub is not None:
            return _name_category(sub)
        return None
    if word in _SUBCOMMAND_TOOLS and sub is not None:
        return _name_category(sub)
    return None


def classify_command(command: str) -> ErrorCategory | None:
    """The kind of check a shell command runs, judged by its command word and subcommand or script:
    typecheck, test, lint or build, else ``None``. In a compound command (``cd x && npm test``) each
    simple command is classified and the first category in the order typecheck, test, lint, build wins,
    as in the reference."""
    found: set[ErrorCategory] = set()
    for segment in _SEGMENT_SPLIT.split(command.lower()):
        tokens = [token.strip(_QUOTES) for token in segment.replace("(", " ").replace(")", " ").split()]
        category = _segment_category([token for token in tokens if token])
        if category is not None:
            found.add(category)
    return next((category for category in _CATEGORY_PRIORITY if category in found), None)
