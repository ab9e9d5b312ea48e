# The two quickstart commands (see README): `make demo` and `make test`.
# Everything CI runs is `make test` (.ci/run calls it).

VENV := .venv/bin

.PHONY: setup demo test check lint format eval bench

setup:
	bash scripts/setup.sh

## Set up, then run the main job on the built-in graph: validate it, count it, answer questions.
demo: setup
	$(VENV)/stackgraph validate
	$(VENV)/stackgraph stats
	$(VENV)/python scripts/demo.py

## Set up (with the test tools), then lint, run the test suite and score the development questions.
test:
	bash scripts/setup.sh --test
	$(MAKE) check

## What CI runs, without the setup step.
check: lint
	$(VENV)/python -m pytest
	$(VENV)/python scripts/score_gate.py ../shared/eval/questions.jsonl --min 95
	$(VENV)/python scripts/score_gate.py tests/eval/questions_extra.jsonl --min 90
	$(VENV)/python scripts/score_gate.py ../shared/eval/realworld_dev.jsonl --min 66
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_heldout.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_fresh.jsonl --min 95
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_fresh.jsonl --min 80
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind2.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind4.jsonl --min 80
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind4a.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind5.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind6.jsonl --min 80
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind6a.jsonl --min 65
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind9.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind10.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind11.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind12.jsonl --min 55
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind14.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind15.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind16.jsonl --min 55
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind18.jsonl --min 45
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind19.jsonl --min 55
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind21.jsonl --min 50
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind22.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind23.jsonl --min 65
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind24.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind25.jsonl --min 65
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind26.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind27.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind28.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind29.jsonl --min 78
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind30.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind31.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind32.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind33.jsonl --min 65
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind34.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind35.jsonl --min 65
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind36.jsonl --min 50
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind37.jsonl --min 65
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind38.jsonl --min 65
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind39.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind40.jsonl --min 45
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind41.jsonl --min 70
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind42.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind43.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind44.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/realworld_blind45.jsonl --min 60
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind5.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind6.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind7.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind8.jsonl --min 90
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind9.jsonl --min 90
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind10.jsonl --min 90
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind11.jsonl --min 90
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind12.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind13.jsonl --min 80
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind14.jsonl --min 90
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind15.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind16.jsonl --min 90
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind17.jsonl --min 90
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind18.jsonl --min 80
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind19.jsonl --min 75
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind20.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind21.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind22.jsonl --min 80
	$(VENV)/python scripts/score_gate.py tests/eval/paraphrase_blind23.jsonl --min 85
	$(VENV)/python scripts/score_gate.py tests/eval/probes.jsonl --min 92
	$(VENV)/python scripts/score_gate.py tests/eval/written_reports.jsonl --min 80

lint:
	$(VENV)/ruff check .
	$(VENV)/ruff format --check .

format:
	$(VENV)/ruff check --fix .
	$(VENV)/ruff format .

eval:
	$(VENV)/python ../shared/eval/score.py ../shared/eval/questions.jsonl -- $(VENV)/stackgraph ask --json -

bench:
	$(VENV)/python scripts/bench_engine.py
