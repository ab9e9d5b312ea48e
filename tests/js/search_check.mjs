// Open the docs site's search.html in jsdom (its own local scripts run, no network), type each
// query given, print the result titles as JSON lines. tests/test_docs.py drives it.
// usage: node search_check.mjs /path/to/search.html QUERY...
import { JSDOM } from "jsdom";
import { pathToFileURL } from "node:url";

const [page, ...queries] = process.argv.slice(2);
const dom = await JSDOM.fromFile(page, { runScripts: "dangerously", resources: "usable", url: pathToFileURL(page).href });
await new Promise((resolve) => dom.window.addEventListener("load", resolve));
const { document, Event } = dom.window;
const input = document.getElementById("search-q");
for (const query of queries) {
  input.value = query;
  input.dispatchEvent(new Event("input"));
  const hits = [...document.querySelectorAll("#search-results li > a")].map((a) => ({ t: a.textContent, u: a.getAttribute("href") }));
  console.log(JSON.stringify({ query, hits }));
}
