"""Run the shared scorer on question files and pass when each reaches its threshold.

The scorer itself exits non-zero on any failed question; CI's bar is a share (95% of the
development set), so this wrapper prints the scorer's report and applies that bar instead.

Several files are scored at once, on as many processes as the machine has cores: each scorer run
starts `stackgraph ask` (once per file and once per conversation), which is mostly one core's
work. Reports are printed whole and in the order given, whatever order they finish in. `make
gates` runs it on the development sets only: the many sets written after them are scored inside
pytest from answers asked once (tests/test_single_turn_sets.py), since ninety of these processes
took three of CI's twenty minutes.

Usage:
    python scripts/score_gate.py QUESTIONS.jsonl [--min 95]
    python scripts/score_gate.py A.jsonl:95 B.jsonl:80 ... [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCORER = ROOT.parent / "shared" / "eval" / "score.py"


@dataclass(frozen=True)
class Gate:
    """A question file and the least accuracy (percent) it must reach."""

    questions: str
    least: float


@dataclass(frozen=True)
class Outcome:
    """What one gate printed, and whether it passed."""

    report: str
    errors: str
    passed: bool


def parse_gate(text: str, default: float) -> Gate:
    """ "file.jsonl:80" is that file at 80%; a bare "file.jsonl" takes ``default``."""
    path, sep, least = text.rpartition(":")
    if sep and path.endswith(".jsonl"):
        try:
            return Gate(path, float(least))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a percentage after the colon: {text!r}") from None
    return Gate(text, default)


def run_gate(gate: Gate) -> Outcome:
    stackgraph = str(Path(sys.executable).parent / "stackgraph")
    done = subprocess.run(
        [sys.executable, str(SCORER), gate.questions, "--", stackgraph, "ask", "--json", "-"],
        capture_output=True,
        text=True,
    )
    errors = done.stderr
    match = re.search(r"accuracy ([\d.]+)%", done.stdout)
    if match is None:
        errors += f"score_gate: {gate.questions}: the scorer printed no accuracy (exit {done.returncode})\n"
        return Outcome(done.stdout, errors, False)
    accuracy = float(match.group(1))
    if accuracy < gate.least:
        errors += f"score_gate: {gate.questions}: accuracy {accuracy:.1f}% is below {gate.least:.0f}%\n"
        return Outcome(done.stdout, errors, False)
    return Outcome(done.stdout, errors, True)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("gates", nargs="+", metavar="QUESTIONS[:MIN]")
    parser.add_argument("--min", type=float, default=95.0, help="least accuracy in percent (default 95)")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="files scored at once (default: the cores)"
    )
    args = parser.parse_args()
    gates = [parse_gate(text, args.min) for text in args.gates]
    missing = [g.questions for g in gates if not Path(g.questions).is_file()]
    if missing:
        print(f"score_gate: no such question file: {', '.join(missing)}", file=sys.stderr)
        return 1
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for gate, outcome in zip(gates, pool.map(run_gate, gates), strict=True):
            if len(gates) > 1:
                print(f"== {gate.questions} (at least {gate.least:.0f}%)")
            sys.stdout.write(outcome.report)
            sys.stderr.write(outcome.errors)
            sys.stdout.flush()
            failed += not outcome.passed
    if failed and len(gates) > 1:
        print(f"score_gate: {failed} of {len(gates)} gates failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
