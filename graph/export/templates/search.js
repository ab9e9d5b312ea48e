// The docs site's offline search: STACKGRAPH_SEARCH (search-index.js, the same data as
// search-index.json) holds one entry per page; no network, works from file://.
"use strict";
(function () {
  const entries = window.STACKGRAPH_SEARCH || [];
  const input = document.getElementById("search-q");
  const list = document.getElementById("search-results");
  if (!input || !list) return;
  const fold = (s) => s.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  for (const e of entries) e.hay = fold([e.t, e.k, (e.a || []).join(" "), e.d || ""].join(" "));
  function score(e, words, phrase) {
    const title = fold(e.t);
    let s = 0;
    if (title === phrase) s += 100;
    else if (title.startsWith(phrase)) s += 50;
    for (const w of words) {
      if (!e.hay.includes(w)) return 0;
      s += title.includes(w) ? 10 : (e.a || []).some((a) => fold(a).includes(w)) ? 6 : 1;
    }
    return s;
  }
  function run() {
    const phrase = fold(input.value.trim());
    const words = phrase.split(/\s+/).filter(Boolean);
    list.replaceChildren();
    if (!words.length) return;
    const hits = entries.map((e) => [score(e, words, phrase), e]).filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1].t.localeCompare(b[1].t)).slice(0, 50);
    for (const [, e] of hits) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = e.u; a.textContent = e.t;
      const kind = document.createElement("span");
      kind.className = "kind"; kind.textContent = " " + e.k;
      li.append(a, kind);
      if (e.d) { const p = document.createElement("div"); p.textContent = e.d; li.append(p); }
      list.append(li);
    }
    if (!hits.length) { const li = document.createElement("li"); li.textContent = "Nothing matches."; list.append(li); }
  }
  input.addEventListener("input", run);
  const q = new URLSearchParams(location.search).get("q");
  if (q) { input.value = q; }
  run();
})();
