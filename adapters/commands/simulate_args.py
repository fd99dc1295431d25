"""The arguments of ``workmem simulate``, apart from the command itself so that building the parser
imports nothing of the simulator (every hook builds the parser)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario", nargs="?", metavar="SCENARIO", help="scenario file (TOML); optional with --from-store"
    )
    parser.add_argument("--days", type=int, metavar="N", help="simulate N days (overrides the scenario)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="override a parameter or field"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--compare", nargs="+", metavar="NAME=VALUE", help="run a variant and compare it with the baseline"
    )
    mode.add_argument("--sweep", metavar="NAME=V1,V2,...", help="one run per value, one summary row each")
    parser.add_argument(
        "--from-store", action="store_true", help="start from this workspace's store (read-only)"
    )
    parser.add_argument("--plot", metavar="FILE", help="write charts to FILE.svg or FILE.png")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
