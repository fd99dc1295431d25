"""``workmem simulate`` end to end: output, determinism, errors, plots, comparisons, sweeps and the
read-only forecast from a real store."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from domain.simulation.engine import simulate
from domain.simulation.scenario import decode_scenario
from tests.support.cli import REPO, Cli, one_line_error

SMALL = """\
name = "small"
start = 2026-01-05
days = 10
seed = 5

[pattern]
sessions_per_weekday = 2
weekend_sessions = 1

[session]
candidates = 3.0
noise_share = 0.3
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    return path


def test_table_and_summary(cli: Cli, scenario: Path) -> None:
    run = cli.ok("simulate", str(scenario))
    lines = run.out.splitlines()
    assert lines[0] == "scenario 'small', seed 5, 10 days from 2026-01-05"
    assert lines[2].split()[:5] == ["week", "from", "sess", "active", "shown"]
    assert lines[3].split()[:3] == ["1", "2026-01-05", "12"]  # 5 weekdays x 2 + 2 weekend days
    assert any(line.startswith("median days rendered by type:") for line in lines)
    assert any(line.startswith("block churn per session:") for line in lines)


def test_same_scenario_and_seed_give_the_same_bytes(cli: Cli, scenario: Path) -> None:
    assert cli.ok("simulate", str(scenario)).out == cli.ok("simulate", str(scenario)).out
    first = cli.ok("simulate", str(scenario), "--json").out
    assert cli.ok("simulate", str(scenario), "--json").out == first
    assert cli.ok("simulate", str(scenario), "--json", "--set", "seed=6").out != first


def test_json_document(cli: Cli, scenario: Path) -> None:
    doc = cli.ok("simulate", str(scenario), "--json", "--days", "9", "--set", "half_life_days=60").json()
    assert doc["scenario"] == "small" and doc["days"] == 9
    assert doc["parameters"]["half_life_days"] == 60.0
    assert [w["week"] for w in doc["weeks"]] == [1, 2]
    assert set(doc["weeks"][0]) >= {
        "sessions",
        "active",
        "rendered",
        "rendered_by_type",
        "rejected",
        "entered",
    }
    assert doc["summary"]["days"] == 9 and doc["summary"]["sessions"] == sum(
        w["sessions"] for w in doc["weeks"]
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["--set", "pattern.weekend_sessions=two"],
            "scenario: Expected `int`, got `str` - at `$.pattern.weekend_sessions`",
        ),
        (["--set", "half_lif_days=3"], "unknown field `half_lif_days`"),
        (["--set", "novalue"], "expected NAME=VALUE"),
        (["--days", "0"], "--days must be between 1 and 3650"),
        (["--plot", "chart.pdf"], "--plot FILE must end in .svg or .png"),
        (["--sweep", "half_life_days="], "expected --sweep NAME=V1,V2"),
    ],
)
def test_usage_errors_are_one_line(cli: Cli, scenario: Path, args: list[str], fragment: str) -> None:
    run = cli("simulate", str(scenario), *args)
    one_line_error(run, 2)
    assert fragment in run.err


def test_unreadable_or_invalid_scenario_files(cli: Cli, tmp_path: Path) -> None:
    one_line_error(cli("simulate", str(tmp_path / "missing.toml")), 2)
    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n", encoding="utf-8")
    run = cli("simulate", str(broken))
    one_line_error(run, 2)
    assert "invalid TOML" in run.err
    one_line_error(cli("simulate"), 2)


def test_plot_without_matplotlib_is_a_usage_error(
    cli: Cli, scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    run = cli("simulate", str(scenario), "--plot", str(tmp_path / "chart.png"))
    one_line_error(run, 2)
    assert "pip install 'workmem[sim]'" in run.err
    assert not (tmp_path / "chart.png").exists()


def _ids(svg: Path, prefix: str) -> list[ET.Element]:
    return [el for el in ET.parse(svg).getroot().iter() if el.get("id", "").startswith(prefix)]


def _memories(scenario: Path) -> list[str]:
    import tomllib

    data = tomllib.loads(scenario.read_text(encoding="utf-8"))
    return [m.type for m in simulate(decode_scenario(data).unwrap(), trace=True).memories]


def test_plot_files_are_valid_and_deterministic(cli: Cli, scenario: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "chart.png"
    svg = tmp_path / "chart.svg"
    cli.ok("simulate", str(scenario), "--plot", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cli.ok("simulate", str(scenario), "--plot", str(svg))
    # more memories than a small store: a median line and a band per type, no line per memory
    kinds = set(_memories(scenario))
    assert len(_memories(scenario)) > 12 and not _ids(svg, "memory-")
    assert {el.get("id") for el in _ids(svg, "median-")} == {f"median-{k}" for k in kinds}
    first = svg.read_bytes()
    cli.ok("simulate", str(scenario), "--plot", str(svg))
    assert svg.read_bytes() == first


def test_a_small_store_is_plotted_one_line_per_memory(cli: Cli, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "tiny.toml"
    path.write_text(SMALL.replace("sessions_per_weekday = 2", "sessions_per_weekday = 1")
                    .replace("days = 10", "days = 4").replace("candidates = 3.0", "candidates = 1.0"),
                    encoding="utf-8")  # fmt: skip
    svg = tmp_path / "chart.svg"
    cli.ok("simulate", str(path), "--plot", str(svg))
    assert 0 < len(_ids(svg, "memory-")) == len(_memories(path)) <= 12


def test_plot_into_a_missing_directory_fails_before_the_run(cli: Cli, scenario: Path, tmp_path: Path) -> None:
    run = cli("simulate", str(scenario), "--plot", str(tmp_path / "no" / "such" / "chart.png"))
    one_line_error(run, 2)
    assert "no directory" in run.err and run.out == ""


def test_compare_lists_block_differences_and_metric_deltas(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "month.toml"
    path.write_text(SMALL.replace("days = 10", "days = 31"), encoding="utf-8")
    run = cli.ok("simulate", str(path), "--compare", "global_cap=5")
    assert run.out.startswith("scenario 'small': baseline vs. global_cap=5")
    assert "day 30: " in run.out and "baseline only: [" in run.out
    doc = cli.ok("simulate", str(path), "--compare", "global_cap=5", "--json").json()
    (block,) = doc["blocks"]
    assert block["day"] == 30 and block["only_baseline"] and not block["only_variant"]
    shown = next(m for m in doc["metrics"] if m["name"] == "final_rendered")
    assert shown["variant"] == 5 and shown["delta"] == 5 - shown["baseline"]


def test_sweep_gives_one_row_per_value(cli: Cli, scenario: Path) -> None:
    run = cli.ok("simulate", str(scenario), "--sweep", "global_cap=4,9,28")
    lines = run.out.splitlines()
    assert lines[0].split()[:3] == ["global_cap", "shown", "active"]
    assert [line.split()[:2] for line in lines[1:]][:2] == [["4", "4"], ["9", "9"]]
    doc = cli.ok("simulate", str(scenario), "--sweep", "global_cap=4,9", "--json").json()
    assert [row["value"] for row in doc["rows"]] == ["4", "9"]
    assert [row["summary"]["final_rendered"] for row in doc["rows"]] == [4, 9]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_from_store_forecasts_without_writing(cli: Cli, scenario: Path) -> None:
    cli.ok("remember", "Use UTC timestamps everywhere in the billing service", "--type", "decision")
    cli.ok("remember", "The user prefers small focused commits", "--type", "feedback")
    before = _snapshot(cli.home)
    idle = cli.ok("simulate", "--from-store", "--days", "60")
    assert "the block after 60 days:" in idle.out
    assert "Use UTC timestamps everywhere in the billing service" in idle.out
    assert idle.out.splitlines()[0].startswith("scenario 'idle forecast'")
    busy = cli.ok("simulate", str(scenario), "--from-store", "--json")
    assert "Use UTC timestamps" in busy.json()["final_block"]
    assert _snapshot(cli.home) == before


def test_no_progress_bar_when_stderr_is_not_a_terminal(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "long.toml"
    path.write_text(SMALL.replace("days = 10", "days = 70").replace("= 2\n", "= 0\n", 1), encoding="utf-8")
    assert cli.ok("simulate", str(path)).err == ""


def test_building_the_parser_does_not_import_the_simulator() -> None:
    code = (
        "import sys, adapters.cli as c; c.build_parser(); "
        "sys.exit(any(m.startswith(('domain.simulation', 'matplotlib', 'tqdm')) for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO, check=False).returncode == 0


def test_help_lists_simulate(cli: Cli) -> None:
    run = cli("simulate", "--help")
    assert run.code == 0 and "--compare" in run.out and "--from-store" in run.out


def test_idle_stretches_are_the_long_runs_without_sessions(scenario: Path) -> None:
    import tomllib

    from adapters.simulation_plot import idle_stretches

    data = tomllib.loads(scenario.read_text(encoding="utf-8"))
    data["days"] = 30
    data["pattern"]["breaks"] = [{"start": "2026-01-12", "days": 9}]
    run = simulate(decode_scenario(data).unwrap())
    assert idle_stretches(run) == [(7, 15)]  # weekend sessions keep the short gaps out


def test_progress_bar_only_on_a_terminal_for_long_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tqdm")
    from adapters.commands import simulate as command

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = command.progress_bar(90, True)
    assert bar is not None
    bar.close()
    assert command.progress_bar(90, False) is None  # --json
    assert command.progress_bar(30, True) is None  # short run
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert command.progress_bar(90, True) is None


def test_compare_and_sweep_plot_the_variant_and_the_first_value(
    cli: Cli, scenario: Path, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    for mode in (["--compare", "global_cap=5"], ["--sweep", "global_cap=5,9"]):
        svg = tmp_path / "chart.svg"
        cli.ok("simulate", str(scenario), *mode, "--plot", str(svg))
        lines = _ids(svg, "median-")
        paths = [p.get("d", "") for el in lines for p in el.iter("{http://www.w3.org/2000/svg}path")]
        assert lines and all(" L " in d for d in paths)  # lines with data, not empty series
