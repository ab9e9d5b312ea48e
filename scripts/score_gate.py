"""Run the shared scorer on a question file and pass when accuracy reaches a threshold.

The scorer itself exits non-zero on any failed question; CI's bar is a share (95% of the
development set), so this wrapper prints the scorer's report and applies that bar instead.

Usage: python scripts/score_gate.py QUESTIONS.jsonl [--min 95]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCORER = ROOT.parent / "shared" / "eval" / "score.py"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("questions")
    parser.add_argument("--min", type=float, default=95.0, help="least accuracy in percent (default 95)")
    args = parser.parse_args()
    stackgraph = str(Path(sys.executable).parent / "stackgraph")
    done = subprocess.run(
        [sys.executable, str(SCORER), args.questions, "--", stackgraph, "ask", "--json", "-"],
        capture_output=True,
        text=True,
    )
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    match = re.search(r"accuracy ([\d.]+)%", done.stdout)
    if match is None:
        print(f"score_gate: the scorer printed no accuracy (exit {done.returncode})", file=sys.stderr)
        return 1
    accuracy = float(match.group(1))
    if accuracy < args.min:
        print(f"score_gate: accuracy {accuracy:.1f}% is below {args.min:.0f}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
