#!/usr/bin/env bash
# Set up everything stackgraph needs on a fresh machine, idempotently:
#   a virtualenv in .venv, torch's CPU build first (a plain `torch` would pull a multi-GB CUDA
#   build), the project with its test extras, the one-time ONNX export of the embedding model,
#   and, with --test, the system tools the tests use (Graphviz `dot`, the npm Mermaid parser and
#   Comunica SPARQL client).
set -euo pipefail
cd "$(dirname "$0")/.."

want_test_tools=0
[ "${1:-}" = "--test" ] && want_test_tools=1

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1

if ! python -c "import torch" 2>/dev/null; then
  echo "setup: installing torch 2.13.0 (CPU build)" >&2
  pip install -q torch==2.13.0
fi
echo "setup: installing stackgraph and its dependencies" >&2
pip install -q -e ".[test]" 2>&1 | grep -v -e "is ignored" -e "^$" >&2 || true
python -c "import stackgraph.graph.engine" # fail here, loudly, if the install did not work

echo "setup: preparing the embedding model and the graph's embedding index (once; cached)" >&2
python -m stackgraph.graph.embeddings --prepare
python -c "from stackgraph.graph.engine import Engine; Engine.load().prepare_semantic()"

if [ "$want_test_tools" = 1 ]; then
  if ! command -v dot >/dev/null 2>&1; then
    echo "setup: installing Graphviz" >&2
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && apt-get install -y -qq graphviz >/dev/null) || echo "setup: could not install Graphviz; DOT rendering tests will be skipped" >&2
    else
      echo "setup: Graphviz missing and not root; DOT rendering tests will be skipped" >&2
    fi
  fi
  # (Re)install when node_modules is missing or older than the lock file (a dependency was added).
  if [ -f tests/js/package.json ] && command -v npm >/dev/null 2>&1 \
     && { [ ! -f tests/js/node_modules/.package-lock.json ] || [ tests/js/package-lock.json -nt tests/js/node_modules/.package-lock.json ]; }; then
    echo "setup: installing the JavaScript test tools: Mermaid parser, Comunica SPARQL client (npm)" >&2
    (cd tests/js && npm ci --silent --no-audit --no-fund) || echo "setup: npm install failed; Mermaid and Comunica tests will be skipped" >&2
  fi
fi
echo "setup: done" >&2
