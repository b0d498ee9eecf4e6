"""The site's one stylesheet and one script (files of the site: nothing inline runs, CSP
``'self'``). The script sorts tables and draws each chart from the JSON beside it; the
pages read fully without it (every chart's numbers are in a table too)."""

from __future__ import annotations

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'")

# the rules plotly.js would add in a <style> element of its own (refused under this
# CSP: the page carries an element with its id, marked as already styled)
PLOTLY_CSS = """.js-plotly-plot .plotly,.js-plotly-plot .plotly div{direction:ltr;margin:0;
padding:0;border:0}
.js-plotly-plot .plotly .main-svg{position:absolute;top:0;left:0;pointer-events:none}
.js-plotly-plot .plotly .main-svg .draglayer{pointer-events:all}
.js-plotly-plot .plotly .crisp{shape-rendering:crispEdges}
.js-plotly-plot .plotly .user-select-none{user-select:none}
.js-plotly-plot .plotly .cursor-crosshair{cursor:crosshair}
.js-plotly-plot .plotly .cursor-pointer{cursor:pointer}
.js-plotly-plot .plotly .cursor-ew-resize{cursor:ew-resize}
.js-plotly-plot .plotly .cursor-ns-resize{cursor:ns-resize}
.js-plotly-plot .plotly .cursor-move{cursor:move}
.js-plotly-plot .plotly .modebar{position:absolute;top:2px;right:2px}
.js-plotly-plot .plotly .modebar-group{float:left;display:inline-block;padding-left:8px}
.js-plotly-plot .plotly .modebar-btn{position:relative;font-size:16px;padding:3px 4px;
height:22px;cursor:pointer;line-height:normal;box-sizing:border-box}
.plotly-notifier{position:fixed;top:50px;right:20px;z-index:10000;font-size:10pt}
"""

STYLE = """*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;
background:#fafafa;line-height:1.45}
a{color:#0b5cad} a:focus-visible,button:focus-visible{outline:3px solid #e69f00;
outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.4em .8em;z-index:10}
.skip:focus{left:.5em}
header{background:#20232a;color:#f0f0f0;padding:.6em 1.2em;display:flex;gap:1.4em;
align-items:center;flex-wrap:wrap}
header a{color:#bfe0ff;text-decoration:none} header a:hover{text-decoration:underline}
header .brand{font-weight:700;color:#fff}
main{padding:1em 1.2em;max-width:1400px}
h1{font-size:1.45em;margin:.3em 0 .5em} h2{font-size:1.15em;margin:1.6em 0 .4em}
h3{font-size:1em;margin:1.2em 0 .3em}
p,li{max-width:62em}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;background:#fff;margin:.4em 0}
caption{text-align:left;font-size:12px;color:#555;padding:.2em 0;caption-side:bottom}
th,td{border-bottom:1px solid #e3e3e3;padding:4px 9px;text-align:right;white-space:nowrap}
th{background:#f0f0f0} td.l,th.l{text-align:left}
th button{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer;
color:inherit;text-align:inherit}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
tbody tr:hover td{background:#f5f9ff}
.num{font-variant-numeric:tabular-nums}
.muted,.prov{color:#555} .prov{font-size:12px}
.bad{color:#b00020} .ok{color:#137333} .warn{color:#8a5300}
.tag{display:inline-block;border-radius:3px;padding:0 5px;font-size:12px;
background:#eef3fb;color:#0b3d78}
.tag.front{background:#e3f4e8;color:#0d5c2a} .tag.maybe{background:#fff1d6;color:#6b4100}
.tag.regress{background:#fde7ea;color:#8c0016}
figure.chart{margin:.8em 0 1.2em;background:#fff;border:1px solid #e3e3e3;padding:.5em;
max-width:980px}
figure.chart .plot{width:100%;height:440px;position:relative}
figure.chart img{max-width:100%;height:auto}
figure.chart figcaption{font-size:12px;color:#444;margin-top:.3em}
.plot[data-drawn] img.fallback{display:none}
.map td.present{background:#e3f4e8} .map td.missing{background:#fde7ea}
.map td.other{background:#fff1d6}
dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;margin:.4em 0}
dl.prov dt{font-weight:600} dl.prov dd{margin:0;word-break:break-all}
details{margin:.5em 0} summary{cursor:pointer}
footer{padding:1em 1.2em;color:#555;font-size:12px;border-top:1px solid #e3e3e3}
""" + PLOTLY_CSS

SCRIPT = r"""// vendbench site: sortable tables and hoverable charts (no inline code, no requests)
(function () {
  "use strict";
  function value(cell) {
    var v = cell.getAttribute("data-v");
    if (v === null) { v = cell.textContent.trim(); }
    var n = parseFloat(v);
    return (v !== "" && !isNaN(n) && isFinite(n) && /^[-+0-9.eE]+$/.test(v)) ? n : v.toLowerCase();
  }
  function sortBy(table, index, th) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a.cells[index]), y = value(b.cells[index]);
      var blankX = x === "" || x === "\u2014", blankY = y === "" || y === "\u2014";
      if (blankX !== blankY) { return blankX ? 1 : -1; }
      if (typeof x === typeof y) { return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1); }
      return (typeof x === "number" ? -1 : 1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (c) {
      if (c !== th) { c.setAttribute("aria-sort", "none"); }
    });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head) { return; }
    Array.prototype.forEach.call(head.cells, function (th, index) {
      var button = th.querySelector("button");
      if (button) { button.addEventListener("click", function () { sortBy(table, index, th); }); }
    });
  });
  if (typeof Plotly === "undefined") { return; }
  Array.prototype.forEach.call(document.querySelectorAll(".plot[data-figure]"), function (div) {
    var source = document.getElementById(div.getAttribute("data-figure"));
    if (!source) { return; }
    var figure = JSON.parse(source.textContent);
    div.setAttribute("data-drawn", "1");
    Plotly.newPlot(div, figure.data, figure.layout,
                   {responsive: true, displaylogo: false, displayModeBar: false});
  });
})();
"""

ROBOTS = """# vendbench site. Transcripts, where published (--transcripts), teach the next model
# the benchmark: crawlers that gather training data are asked to stay out of the whole
# site, every crawler out of the transcripts.
User-agent: GPTBot
User-agent: ChatGPT-User
User-agent: CCBot
User-agent: Google-Extended
User-agent: anthropic-ai
User-agent: ClaudeBot
User-agent: Bytespider
User-agent: PerplexityBot
Disallow: /

User-agent: *
Disallow: /transcripts/
"""
