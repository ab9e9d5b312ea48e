# The two quickstart commands (see README): `make demo` and `make test`.
# Everything CI runs is `make test` (.ci/run calls it).

VENV := .venv/bin

.PHONY: setup demo test check gates lint format eval bench

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
	$(MAKE) gates

## The development sets at their floors (percent), through the shared scorer and the real
## `stackgraph ask`. The other single-question sets are scored at theirs by pytest
## (tests/test_single_turn_sets.py), from answers the suite asks once.
gates:
	$(VENV)/python scripts/score_gate.py \
		../shared/eval/questions.jsonl:95 \
		tests/eval/questions_extra.jsonl:90 \
		../shared/eval/realworld_dev.jsonl:66

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
