// Checks Mermaid diagrams with the real mermaid parser (mermaid.parse) under jsdom, no browser.
//
// Usage:  node mermaid_parse.mjs FILE...     each .mmd file is one diagram; .md/.html files are
//                                            scanned for ```mermaid fences / <pre class="mermaid">
//         node mermaid_parse.mjs < diagram   one diagram on stdin
// Prints "ok NAME" or "error NAME: message" per diagram; exits 1 if any diagram fails to parse,
// 2 if a file holds no diagram at all (so a broken extractor cannot pass silently).
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const key of ["Element", "HTMLElement", "SVGElement", "Node", "DOMParser", "navigator"]) {
  if (!(key in globalThis)) globalThis[key] = dom.window[key];
}
const createDOMPurify = (await import("dompurify")).default;
globalThis.DOMPurify = createDOMPurify(dom.window);

const mermaid = (await import("mermaid")).default;
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });

function unescapeHtml(text) {
  return text
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

function diagramsIn(name, text) {
  if (name.endsWith(".md")) {
    return [...text.matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  }
  if (name.endsWith(".html")) {
    return [...text.matchAll(/<pre class="mermaid">([\s\S]*?)<\/pre>/g)].map((m) => unescapeHtml(m[1]));
  }
  return [text];
}

const inputs = process.argv.length > 2
  ? process.argv.slice(2).map((f) => [f, readFileSync(f, "utf8")])
  : [["<stdin>", readFileSync(0, "utf8")]];

let failed = 0;
let empty = 0;
for (const [name, text] of inputs) {
  const diagrams = diagramsIn(name, text);
  if (diagrams.length === 0) {
    console.log(`error ${name}: no mermaid diagram found`);
    empty += 1;
    continue;
  }
  for (const [i, diagram] of diagrams.entries()) {
    const label = diagrams.length > 1 ? `${name}#${i + 1}` : name;
    try {
      await mermaid.parse(diagram);
      console.log(`ok ${label}`);
    } catch (error) {
      failed += 1;
      console.log(`error ${label}: ${String(error?.message ?? error).split("\n").slice(0, 4).join(" | ")}`);
    }
  }
}
process.exit(failed ? 1 : empty ? 2 : 0);
