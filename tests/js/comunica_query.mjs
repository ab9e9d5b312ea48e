// Run SPARQL queries with Comunica (a real SPARQL client) against an endpoint; print JSON lines.
// usage: node comunica_query.mjs ENDPOINT QUERY...   (tests/test_sparql_comunica.py drives it)
import { QueryEngine } from "@comunica/query-sparql";

const [endpoint, ...queries] = process.argv.slice(2);
const engine = new QueryEngine();
const context = { sources: [{ type: "sparql", value: endpoint }], lenient: false };

for (const query of queries) {
  try {
    const result = await engine.query(query, context);
    if (result.resultType === "boolean") {
      console.log(JSON.stringify({ boolean: await result.execute() }));
    } else if (result.resultType === "bindings") {
      const rows = await (await result.execute()).toArray();
      console.log(JSON.stringify({ rows: rows.map((b) => Object.fromEntries([...b].map(([k, v]) => [k.value, v.value]))) }));
    } else {
      const quads = await (await result.execute()).toArray();
      console.log(JSON.stringify({ triples: quads.map((q) => [q.subject.value, q.predicate.value, q.object.value]) }));
    }
  } catch (error) {
    console.log(JSON.stringify({ error: String(error.message || error).split("\n")[0] }));
  }
}
