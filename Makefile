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

## Each question file at its floor (percent), scored on as many processes as there are cores.
gates:
	$(VENV)/python scripts/score_gate.py \
		../shared/eval/questions.jsonl:95 \
		tests/eval/questions_extra.jsonl:90 \
		../shared/eval/realworld_dev.jsonl:66 \
		tests/eval/realworld_heldout.jsonl:85 \
		tests/eval/paraphrase_fresh.jsonl:95 \
		tests/eval/realworld_fresh.jsonl:80 \
		tests/eval/realworld_blind2.jsonl:75 \
		tests/eval/realworld_blind4.jsonl:80 \
		tests/eval/realworld_blind4a.jsonl:70 \
		tests/eval/realworld_blind5.jsonl:75 \
		tests/eval/realworld_blind6.jsonl:80 \
		tests/eval/realworld_blind6a.jsonl:65 \
		tests/eval/realworld_blind9.jsonl:70 \
		tests/eval/realworld_blind10.jsonl:75 \
		tests/eval/realworld_blind11.jsonl:60 \
		tests/eval/realworld_blind12.jsonl:55 \
		tests/eval/realworld_blind14.jsonl:75 \
		tests/eval/realworld_blind15.jsonl:60 \
		tests/eval/realworld_blind16.jsonl:55 \
		tests/eval/realworld_blind18.jsonl:45 \
		tests/eval/realworld_blind19.jsonl:55 \
		tests/eval/realworld_blind21.jsonl:50 \
		tests/eval/realworld_blind22.jsonl:70 \
		tests/eval/realworld_blind23.jsonl:65 \
		tests/eval/realworld_blind24.jsonl:70 \
		tests/eval/realworld_blind25.jsonl:65 \
		tests/eval/realworld_blind26.jsonl:60 \
		tests/eval/realworld_blind27.jsonl:75 \
		tests/eval/realworld_blind28.jsonl:70 \
		tests/eval/realworld_blind29.jsonl:78 \
		tests/eval/realworld_blind30.jsonl:85 \
		tests/eval/realworld_blind31.jsonl:70 \
		tests/eval/realworld_blind32.jsonl:60 \
		tests/eval/realworld_blind33.jsonl:65 \
		tests/eval/realworld_blind34.jsonl:70 \
		tests/eval/realworld_blind35.jsonl:65 \
		tests/eval/realworld_blind36.jsonl:50 \
		tests/eval/realworld_blind37.jsonl:65 \
		tests/eval/realworld_blind38.jsonl:65 \
		tests/eval/realworld_blind39.jsonl:75 \
		tests/eval/realworld_blind40.jsonl:45 \
		tests/eval/realworld_blind41.jsonl:70 \
		tests/eval/realworld_blind42.jsonl:60 \
		tests/eval/realworld_blind43.jsonl:60 \
		tests/eval/realworld_blind44.jsonl:60 \
		tests/eval/realworld_blind45.jsonl:60 \
		tests/eval/realworld_blind46.jsonl:65 \
		tests/eval/realworld_blind47.jsonl:60 \
		tests/eval/realworld_blind48.jsonl:60 \
		tests/eval/realworld_blind49.jsonl:75 \
		tests/eval/realworld_blind50.jsonl:55 \
		tests/eval/realworld_blind51.jsonl:60 \
		tests/eval/realworld_blind52.jsonl:65 \
		tests/eval/realworld_blind53.jsonl:70 \
		tests/eval/realworld_blind54.jsonl:50 \
		tests/eval/realworld_blind55.jsonl:75 \
		tests/eval/realworld_blind56.jsonl:75 \
		tests/eval/realworld_blind57.jsonl:75 \
		tests/eval/realworld_blind58.jsonl:70 \
		tests/eval/realworld_blind59.jsonl:60 \
		tests/eval/paraphrase_blind5.jsonl:85 \
		tests/eval/paraphrase_blind6.jsonl:85 \
		tests/eval/paraphrase_blind7.jsonl:85 \
		tests/eval/paraphrase_blind8.jsonl:90 \
		tests/eval/paraphrase_blind9.jsonl:90 \
		tests/eval/paraphrase_blind10.jsonl:90 \
		tests/eval/paraphrase_blind11.jsonl:90 \
		tests/eval/paraphrase_blind12.jsonl:75 \
		tests/eval/paraphrase_blind13.jsonl:80 \
		tests/eval/paraphrase_blind14.jsonl:90 \
		tests/eval/paraphrase_blind15.jsonl:75 \
		tests/eval/paraphrase_blind16.jsonl:90 \
		tests/eval/paraphrase_blind17.jsonl:90 \
		tests/eval/paraphrase_blind18.jsonl:80 \
		tests/eval/paraphrase_blind19.jsonl:75 \
		tests/eval/paraphrase_blind20.jsonl:85 \
		tests/eval/paraphrase_blind21.jsonl:85 \
		tests/eval/paraphrase_blind22.jsonl:80 \
		tests/eval/paraphrase_blind23.jsonl:85 \
		tests/eval/paraphrase_blind24.jsonl:85 \
		tests/eval/paraphrase_blind25.jsonl:85 \
		tests/eval/paraphrase_blind26.jsonl:75 \
		tests/eval/paraphrase_blind27.jsonl:80 \
		tests/eval/paraphrase_blind28.jsonl:85 \
		tests/eval/offtopic_real1.jsonl:70 \
		tests/eval/offtopic_real2.jsonl:60 \
		tests/eval/offtopic_real3.jsonl:35 \
		tests/eval/offtopic_real4.jsonl:30 \
		tests/eval/offtopic_real5.jsonl:75 \
		tests/eval/offtopic_real6.jsonl:75 \
		tests/eval/probes.jsonl:92 \
		tests/eval/written_reports.jsonl:80

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
