"""The figures of docs/simulation.md are what fresh runs print (bench/docs_figures.py), and every
shipped scenario has its chart in docs/."""

from __future__ import annotations

import difflib
import re

import pytest

from bench import docs_figures
from tests.support.cli import REPO


def test_the_docs_figures_are_what_fresh_runs_print() -> None:
    doc = docs_figures.DOC.read_text(encoding="utf-8")
    fresh = docs_figures.fresh_doc()
    diff = "\n".join(difflib.unified_diff(doc.splitlines(), fresh.splitlines(), "doc", "fresh", lineterm=""))
    assert fresh == doc, f"docs/simulation.md is out of date; run python -m bench.docs_figures\n{diff}"


def test_rewrite_replaces_only_the_marked_regions() -> None:
    doc = (
        "intro 42\n<!-- figures:a -->\nold 1\n<!-- /figures:a -->\n"
        "middle 7\n<!-- figures:b -->\n<!-- /figures:b -->\n"
    )
    new = docs_figures.rewrite(doc, {"a": "new 2\n", "b": "more 3\n"})
    assert new == (
        "intro 42\n<!-- figures:a -->\nnew 2\n<!-- /figures:a -->\n"
        "middle 7\n<!-- figures:b -->\nmore 3\n<!-- /figures:b -->\n"
    )
    with pytest.raises(ValueError, match="do not match"):
        docs_figures.rewrite(doc, {"a": "x\n"})  # a region without its figure
    with pytest.raises(ValueError, match="do not match"):
        docs_figures.rewrite(doc, {"a": "x\n", "b": "y\n", "c": "z\n"})  # a figure without its region


def test_every_figure_has_one_region_in_the_doc() -> None:
    doc = docs_figures.DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- figures:([a-z-]+) -->", doc)
    assert sorted(found) == sorted(docs_figures.FIGURES)


def test_each_shipped_scenario_has_its_chart_in_the_docs() -> None:
    doc = docs_figures.DOC.read_text(encoding="utf-8")
    names = sorted(p.stem for p in (REPO / "scenarios").glob("*.toml"))
    assert sorted(docs_figures.CHARTED) == names
    for name in [*names, "from-store"]:
        image = REPO / "docs" / f"simulation-{name}.png"
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert image.stat().st_size < 120_000
        assert f"](simulation-{name}.png)" in doc
