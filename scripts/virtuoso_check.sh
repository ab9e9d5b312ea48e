#!/usr/bin/env bash
# Prove stackgraph against Virtuoso open source: install, start on loopback, push, query, stop.
#
#   scripts/virtuoso_check.sh            # needs root (apt-get) or Virtuoso already installed
#
# What it does, step by step:
#   1. apt-get installs the Debian package virtuoso-opensource-7-bin (virtuoso-t, isql-vt) when
#      virtuoso-t is missing; nothing is started as a system service.
#   2. Writes a minimal virtuoso.ini in a temporary directory: database files there, SQL and HTTP
#      ports bound to 127.0.0.1 only (free ports picked at random), then starts virtuoso-t in the
#      foreground as a background job and waits until isql answers (first start takes a few s).
#   3. Grants SPARQL_UPDATE to the SPARQL user (and write permission on graphs) so that the
#      /sparql endpoint accepts INSERT DATA. Only loopback can reach it, and it is stopped at the end.
#   4. stackgraph push http://127.0.0.1:PORT/sparql --graph G: Virtuoso's INSERT DATA needs a graph.
#   5. Compares the triple count in G with the embedded graph, runs a SPARQL query and a few
#      development questions through --store 'http://127.0.0.1:PORT/sparql?default-graph-uri=G',
#      and prints the embedded answer next to the remote one.
#   6. Stops Virtuoso and removes the temporary directory (also on failure).
#
# Exit code 0 when the counts match and every question gets the same answer text.
set -euo pipefail

GRAPH="https://w3id.org/stackgraph/graph/virtuoso-check"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$HERE/.venv/bin/python}"
SG=("$PY" -m stackgraph.cli.main)

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

if ! command -v virtuoso-t >/dev/null; then
  echo "== installing virtuoso-opensource-7-bin (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends virtuoso-opensource-7-bin >/dev/null
fi
ISQL="$(command -v isql-vt || command -v isql)"

WORK="$(mktemp -d)"
SQL_PORT="$(free_port)"
HTTP_PORT="$(free_port)"
PID=""
cleanup() {
  if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then
    "$ISQL" "127.0.0.1:$SQL_PORT" dba dba exec="shutdown;" >/dev/null 2>&1 || kill "$PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/virtuoso.ini" <<EOF
[Database]
DatabaseFile       = $WORK/virtuoso.db
ErrorLogFile       = $WORK/virtuoso.log
LockFile           = $WORK/virtuoso.lck
TransactionFile    = $WORK/virtuoso.trx
xa_persistent_file = $WORK/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = $WORK/virtuoso-temp.db
TransactionFile    = $WORK/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort         = 127.0.0.1:$SQL_PORT
ServerThreads      = 10
CheckpointInterval = 60
NumberOfBuffers    = 10000
MaxDirtyBuffers    = 6000
DirsAllowed        = ., $WORK
DefaultIsolation   = 4

[HTTPServer]
ServerPort            = 127.0.0.1:$HTTP_PORT
ServerRoot            = $WORK
MaxClientConnections  = 5
ServerThreads         = 5

[SPARQL]
ResultSetMaxRows      = 100000
MaxQueryExecutionTime = 60
MaxQueryCostEstimationTime = 400
EOF

echo "== starting virtuoso-t (SQL 127.0.0.1:$SQL_PORT, HTTP 127.0.0.1:$HTTP_PORT)" >&2
started=$(date +%s.%N)
(cd "$WORK" && exec virtuoso-t -f -c "$WORK/virtuoso.ini" >"$WORK/stdout.log" 2>&1) &
PID=$!
for _ in $(seq 1 150); do
  if "$ISQL" "127.0.0.1:$SQL_PORT" dba dba exec="status();" >/dev/null 2>&1; then break; fi
  kill -0 "$PID" 2>/dev/null || { echo "virtuoso-t died:" >&2; tail -20 "$WORK/virtuoso.log" >&2; exit 1; }
  sleep 0.2
done
ENDPOINT="http://127.0.0.1:$HTTP_PORT/sparql"
until curl -sf -o /dev/null "$ENDPOINT?query=ASK%7B%7D"; do sleep 0.2; done
echo "   ready in $(echo "$(date +%s.%N) - $started" | bc) s" >&2

echo "== granting SPARQL_UPDATE to the SPARQL user" >&2
"$ISQL" "127.0.0.1:$SQL_PORT" dba dba exec="GRANT SPARQL_UPDATE TO \"SPARQL\"; DB.DBA.RDF_DEFAULT_USER_PERMS_SET ('nobody', 7);" >/dev/null

echo "== stackgraph push $ENDPOINT --graph $GRAPH" >&2
"${SG[@]}" push "$ENDPOINT" --graph "$GRAPH" --clear --batch 500

STORE="$ENDPOINT?default-graph-uri=$GRAPH"
COUNT_Q='SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'
remote=$("${SG[@]}" sparql --store "$STORE" --format csv "$COUNT_Q" | tail -1 | tr -d '\r')
embedded=$("${SG[@]}" sparql --format csv "$COUNT_Q" | tail -1 | tr -d '\r')
echo "== triples: embedded $embedded, Virtuoso $remote" >&2

echo "== a SPARQL query through --store" >&2
"${SG[@]}" sparql --store "$STORE" 'SELECT ?code ?layer WHERE { ?l a/rdfs:subClassOf* sg:Layer ; sg:code ?code ; rdfs:label ?layer } ORDER BY ?code LIMIT 8'

echo "== development questions, embedded vs --store" >&2
"$PY" - "$STORE" <<'EOF'
import json, sys, time
from pathlib import Path
from stackgraph.graph.engine import Engine

store = sys.argv[1]
questions = [json.loads(l)["q"] for l in Path("/work/shared/eval/questions.jsonl").read_text().splitlines() if '"q"' in l][:8]
embedded, remote = Engine.load(semantic=False), Engine.load(store_url=store, semantic=False)
same = 0
for q in questions:
    a = embedded.ask(q).answer
    t = time.perf_counter(); b = remote.ask(q).answer; ms = (time.perf_counter() - t) * 1000
    same += a == b
    print(f"{'same' if a == b else 'DIFF'} {ms:6.1f} ms  {q}\n     {b[:150]}")
print(f"{same}/{len(questions)} answers identical")
sys.exit(0 if same == len(questions) else 1)
EOF
answers=$?

if [[ "$remote" != "$embedded" ]]; then echo "FAIL: triple counts differ" >&2; exit 1; fi
exit "$answers"
