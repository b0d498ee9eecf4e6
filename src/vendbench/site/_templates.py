"""The site's pages (Jinja2, autoescaped): one base, a page template per kind, macros for
the sortable table, the chart and where numbers come from. Every link is relative
(``root`` leads back to the top), so the folder opens from disk or any static host."""

from __future__ import annotations

MACROS = """{% macro chart(name, alt) -%}{% set fig = figures[name] -%}
<figure class="chart"><div class="plot" id="plot-{{ fig.name }}" data-figure="data-{{ fig.name }}"
 role="img" aria-label="{{ alt }}"><img class="fallback" src="{{ root }}charts/{{ fig.name }}.svg" alt="{{ alt }}" width="750" height="460"></div>
<script type="application/json" id="data-{{ fig.name }}">{{ fig.json|safe }}</script>
<figcaption>{{ fig.note }} Hover a point for its values. As a file:
<a href="{{ root }}charts/{{ fig.name }}.svg">SVG</a>, <a href="{{ root }}charts/{{ fig.name }}.png">PNG</a>.</figcaption></figure>
{%- endmacro %}
{% macro th(label, left=False) -%}
<th scope="col"{% if left %} class="l"{% endif %} aria-sort="none"><button type="button">{{ label }}</button></th>
{%- endmacro %}
{% macro provenance(p) -%}
<details><summary>Where these numbers come from</summary><dl class="prov">
<dt>results file</dt><dd>{{ p.file }}</dd><dt>runs</dt><dd>{{ p.runs|join(", ") }}</dd>
<dt>code version</dt><dd>{{ p.code_versions|join(", ") }}</dd>
<dt>prompt SHA-256</dt><dd>{{ p.prompt_sha256 }}</dd><dt>tools SHA-256</dt><dd>{{ p.tools_sha256 }}</dd>
<dt>worlds</dt><dd>{{ p.world_seeds|join(", ") }}{% if p.world_salt_sha256 %} (private, salt SHA-256 {{ p.world_salt_sha256[:12] }}){% endif %}</dd>
<dt>price tables</dt><dd>{% for h in p.prices_sha256 %}{{ h }} {% else %}none stored{% endfor %} (on the run's page)</dd>
<dt>screening</dt><dd>{% for s in p.scanners %}{{ s.scanner }} {{ s.scanner_version }}{% if s.judge %} (judge {{ s.judge }}){% endif %} over {{ s.trials }} trial(s){% if not loop.last %}; {% endif %}{% else %}not screened (vendbench screen){% endfor %}</dd>
<dt>trials counted</dt><dd>{{ p.trials }}</dd><dt>interval</dt><dd>{{ p.interval }}</dd>
</dl></details>
{%- endmacro %}
{% macro pct(v) %}{% if v is none %}—{% else %}{{ "%.1f"|format(v * 100) }}%{% endif %}{% endmacro %}
{% macro ci(c) %}{% if c %}{{ "%.0f"|format(c[0] * 100) }}–{{ "%.0f"|format(c[1] * 100) }}%{% else %}—{% endif %}{% endmacro %}
{% macro usd(v, d=4) %}{% if v is none %}—{% else %}${{ ("%." ~ d ~ "f")|format(v) }}{% endif %}{% endmacro %}
{% macro num(v, d=0) %}{% if v is none %}—{% else %}{{ "{:,.{}f}".format(v, d) }}{% endif %}{% endmacro %}
{% macro dv(v) %}{% if v is not none %} data-v="{{ v }}"{% endif %}{% endmacro %}
{% macro trial_link(t) %}{% if t.transcript %}<a href="{{ root }}{{ t.transcript }}">{{ t.trial_id }}</a>{% else %}{{ t.trial_id }}{% endif %}{% endmacro %}
"""

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{ csp }}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} · vendbench</title>
<link rel="stylesheet" href="{{ root }}assets/site.css"{% if charts %} id="plotly.js-style-global" class="no-inline-styles"{% endif %}>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="{{ root }}index.html">vendbench</a>
<nav aria-label="site"><a href="{{ root }}index.html">Leaderboard</a> · <a href="{{ root }}trend.html">Trend</a> · <a href="{{ root }}runs.html">Runs</a> · <a href="{{ root }}models.html">Models</a></nav></header>
<main id="main">{% block main %}{% endblock %}
<p class="prov">This page's data: <a href="{{ json_href }}">{{ json_href.split("/")[-1] }}</a> · the panel's trials and exchanges: <a href="{{ root }}data/trials.parquet">trials.parquet</a>, <a href="{{ root }}data/exchanges.parquet">exchanges.parquet</a></p>
</main>
<footer>Built by vendbench {{ version }}. Static: nothing here is loaded from elsewhere.</footer>
{% if charts %}{% for g in guards %}<span hidden id="{{ g }}"></span>{% endfor %}
<script src="{{ root }}assets/plotly.min.js"></script>{% endif %}
<script src="{{ root }}assets/site.js"></script>
</body></html>"""

INDEX = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>Leaderboard</h1>
<p>{{ cohorts|length }} cohort(s) from {{ files }} results file(s). A cohort is one task in
the same worlds: world, horizon, starting cash, prompts and tools. Each is ranked on its
newest night; <a href="trend.html">the trend</a> has every night. The share is of what the oracle
gains over doing nothing on the same world and seed: 0% is doing nothing, 100% the oracle;
an unfinished trial scores 0.</p>
{% if not cohorts %}<p class="muted">No ranked run in these files: <code>vendbench run</code> writes one.</p>{% endif %}
{% for c in cohorts %}
<section aria-labelledby="h-{{ c.id }}"><h2 id="h-{{ c.id }}">{{ c.label }}</h2>
<p class="muted">Newest night: run <a href="{{ root }}{{ c.latest.href }}">{{ c.latest.run_id }}</a> ({{ c.latest.date }} UTC, file {{ c.latest.file }}); {{ c.nights }} night(s).</p>
<div class="table-wrap"><table class="sortable" id="rank-{{ c.id }}">
<caption>Share: mean over the trials. t 95%: {{ c.interval_t }}; on held-out shapes where one trial in 8 fails or one in 20 wins big, 3–5 seeds that miss the rare event give a t interval that covers the mean in 27–54% of draws (held-out checks). Any-shape 95%: {{ c.interval_any }}. Cost: API USD per trial (mean). Efficiency: {{ c.currency }} gained per API dollar, over completed priced trials. Flags: findings of vendbench screen at warning or high.</caption>
<thead><tr>{{ th("rank") }}{{ th("model", True) }}{{ th("share") }}{{ th("t 95%") }}{{ th("any-shape 95%") }}{{ th("done") }}{{ th("mean " ~ c.score_name) }}{{ th("cost / trial") }}{{ th(c.currency ~ "/$") }}{{ th("flags") }}{{ th("frontier", True) }}</tr></thead><tbody>
{% for r in c.rows %}<tr><td{{ dv(loop.index) }}>{{ loop.index }}</td>
<td class="l"><a href="{{ root }}{{ r.href }}">{{ r.model }}</a>{% if r.reference %} <span class="tag">reference</span>{% endif %}</td>
<td class="num"{{ dv(r.share) }}>{{ pct(r.share) }}</td><td class="num"{{ dv(r.ci_t[0] if r.ci_t else none) }}>{{ ci(r.ci_t) }}{% if r.ci_doubt %} <abbr title="{{ r.ci_doubt }}">?</abbr>{% endif %}</td>
<td class="num"{{ dv(r.ci_any[0] if r.ci_any else none) }}>{{ ci(r.ci_any) }}</td>
<td{{ dv(r.completed) }}>{{ r.completed }}/{{ r.trials }}</td><td class="num"{{ dv(r.mean_score) }}>{{ num(r.mean_score) }}</td>
<td class="num"{{ dv(r.cost_mean) }}>{{ usd(r.cost_mean) }}</td><td class="num"{{ dv(r.efficiency) }}>{{ num(r.efficiency) }}</td>
<td{{ dv(r.flags) }}>{% if r.flags is none %}<span class="muted">not screened</span>{% elif r.flags %}<span class="bad">{{ r.flags }}</span>{% else %}0{% endif %}</td>
<td class="l">{% if r.frontier == "on" %}<span class="tag front">on the frontier</span>{% elif r.frontier == "possibly" %}<span class="tag maybe">possibly on the frontier</span>{% elif r.frontier == "line" %}<span class="muted">line (no API cost)</span>{% elif r.frontier %}<span class="muted">{{ r.frontier }}</span>{% endif %}</td></tr>
{% endfor %}</tbody></table></div>
{% for n in c.notes %}<p class="prov">{{ n }}</p>{% endfor %}
<h3>Cost against share: the frontier</h3>
{% if c.chart %}{{ chart(c.chart, "The frontier of " ~ c.label ~ ": each model's mean share against its mean API cost, with 95% intervals on both") }}
{% if c.frontier.left_off %}<p class="prov">Left off the frontier:{% for m, why in c.frontier.left_off.items() %} {{ m }} ({{ why }}){% if not loop.last %};{% endif %}{% endfor %}.</p>{% endif %}
{% else %}<p class="muted">No model of this cohort has priced trials with a share: no frontier to draw.</p>{% endif %}
<h3>Which trials exist</h3>
<div class="table-wrap"><table class="map"><caption>Newest night, model by world and seed: each cell the trial's status; "missing": no trial.</caption>
<thead><tr><th scope="col" class="l">model</th>{% for w in c.map.columns %}<th scope="col">world {{ w[0] }} seed {{ w[1] }}{% if c.map.repeats %} repeat {{ w[2] }}{% endif %}</th>{% endfor %}</tr></thead><tbody>
{% for m in c.map.rows %}<tr><th scope="row" class="l">{{ m.model }}</th>{% for cell in m.cells %}<td class="{{ 'missing' if cell is none else 'present' if cell == 'completed' else 'other' }}">{{ cell or "missing" }}</td>{% endfor %}</tr>{% endfor %}
</tbody></table></div>
{{ provenance(c.provenance) }}
</section>
{% endfor %}
{% if arenas %}<h2>Arenas</h2><ul>{% for a in arenas %}<li><a href="{{ root }}{{ a.href }}">{{ a.label }}</a></li>{% endfor %}</ul>{% endif %}
{% if comparisons %}<h2>Comparisons</h2><ul>{% for a in comparisons %}<li><a href="{{ root }}{{ a.href }}">{{ a.label }}</a></li>{% endfor %}</ul>{% endif %}
{% endblock %}"""

MODELS = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>Models</h1><ul>{% for m in models %}<li><a href="{{ root }}{{ m.href }}">{{ m.model }}</a> <span class="muted">({{ m.cohorts }} cohort(s))</span></li>{% endfor %}</ul>
{% endblock %}"""

MODEL = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>{{ model }}</h1>
{% for c in cohorts %}<section aria-labelledby="h-{{ c.id }}"><h2 id="h-{{ c.id }}">{{ c.label }}</h2>
<p>Newest night {{ c.latest.date }} UTC: {{ pct(c.row.share) }} of the oracle's gain (t 95% {{ ci(c.row.ci_t) }}, any-shape 95% {{ ci(c.row.ci_any) }}), rank {{ c.rank }} of {{ c.ranked }}; {{ c.row.completed }}/{{ c.row.trials }} trials completed; {{ usd(c.row.cost_mean) }} a trial.</p>
<h3>Trials by world and seed</h3>
<div class="table-wrap"><table class="sortable"><thead><tr>{{ th("world") }}{{ th("seed") }}{{ th("repeat") }}{{ th("status", True) }}{{ th(c.score_name) }}{{ th("share") }}{{ th("cost") }}{{ th("tokens in") }}{{ th("tokens out") }}{{ th("cached") }}{{ th("flags") }}{{ th("transcript", True) }}</tr></thead><tbody>
{% for t in c.trials %}<tr><td>{{ t.world_seed }}</td><td>{{ t.seed }}</td><td>{{ t.repeat }}</td><td class="l {{ 'ok' if t.status == 'completed' else 'bad' }}">{{ t.status }}</td>
<td class="num"{{ dv(t.score) }}>{{ num(t.score) }}</td><td class="num"{{ dv(t.share) }}>{{ pct(t.share) }}</td><td class="num"{{ dv(t.cost) }}>{{ usd(t.cost) }}</td>
<td class="num"{{ dv(t.input_tokens) }}>{{ num(t.input_tokens) }}</td><td class="num"{{ dv(t.output_tokens) }}>{{ num(t.output_tokens) }}</td><td class="num"{{ dv(t.cached_share) }}>{{ pct(t.cached_share) }}</td>
<td{{ dv(t.flags) }}>{{ t.flags if t.flags is not none else "—" }}</td><td class="l">{{ trial_link(t) }}{% if not t.transcript %} <span class="muted">(not published)</span>{% endif %}</td></tr>{% endfor %}
</tbody></table></div>
<h3>Money over days</h3>
{{ chart(c.money_chart, c.score_name ~ " of " ~ model ~ " day by day: a line per trial, the mean and its band") }}
<h3>Operational profile</h3>
<div class="table-wrap"><table><thead><tr><th scope="col" class="l">metric</th><th scope="col">{{ model }}</th><th scope="col" class="l">better</th></tr></thead><tbody>
{% for m in c.operations %}<tr><td class="l">{{ m.name }}</td><td class="num">{{ num(m.value, 3) }}</td><td class="l">{{ m.direction }}</td></tr>{% endfor %}
</tbody></table></div>
<h3>Diagnostics (the paper's, §32.1)</h3>
{% if c.diagnostics %}<div class="table-wrap"><table><thead><tr><th scope="col" class="l">diagnostic</th><th scope="col">mean</th><th scope="col">95% (t)</th><th scope="col">trials</th></tr></thead><tbody>
{% for k, d in c.diagnostics.diagnostics.items() %}<tr><td class="l">{{ k }}</td><td class="num">{{ num(d.mean, 3) }}</td><td class="num">{% if d.ci %}{{ num(d.ci[0], 3) }} – {{ num(d.ci[1], 3) }}{% else %}—{% endif %}</td><td>{{ d.trials }}</td></tr>{% endfor %}
{% for k, d in c.diagnostics.failure_modes.items() %}<tr><td class="l">{{ k }} (instances a trial)</td><td class="num">{{ num(d.per_trial, 2) }}</td><td class="num">{% if d.ci %}{{ num(d.ci[0], 2) }} – {{ num(d.ci[1], 2) }}{% else %}—{% endif %}</td><td></td></tr>{% endfor %}
</tbody></table></div>{% else %}<p class="muted">Not diagnosed (no world installed for this scenario, or none declared).</p>{% endif %}
<h3>Findings</h3>
{% if c.findings %}<div class="table-wrap"><table class="sortable"><thead><tr>{{ th("trial", True) }}{{ th("day") }}{{ th("severity", True) }}{{ th("category", True) }}{{ th("scanner", True) }}{{ th("quote", True) }}</tr></thead><tbody>
{% for f in c.findings %}<tr><td class="l">{{ f.trial_id }}</td><td>{{ f.day if f.day is not none else "" }}</td><td class="l">{{ f.severity }}</td><td class="l">{{ f.category }}</td><td class="l">{{ f.scanner }} {{ f.scanner_version }}</td><td class="l">{{ f.quote[:160] }}</td></tr>{% endfor %}
</tbody></table></div>{% elif c.row.flags is none %}<p class="muted">Not screened: <code>vendbench screen</code> reads the transcripts.</p>{% else %}<p>No flag in {{ c.screened }} screened trial(s).</p>{% endif %}
<h3>Across nights</h3>
{{ chart(c.trend_chart, model ~ "'s share of the oracle's gain night by night, with its 95% interval") }}
<div class="table-wrap"><table class="sortable"><thead><tr>{{ th("night (UTC)", True) }}{{ th("run", True) }}{{ th("done") }}{{ th("share") }}{{ th("95% (t)") }}{{ th("cost") }}</tr></thead><tbody>
{% for n in c.nights %}<tr><td class="l">{{ n.date }}</td><td class="l">{{ n.run_id }}</td><td>{{ n.completed }}/{{ n.trials }}</td><td class="num"{{ dv(n.oracle_share) }}>{{ pct(n.oracle_share) }}</td><td class="num">{{ ci(n.ci_oracle_share) }}</td><td class="num"{{ dv(n.cost_total_usd) }}>{{ usd(n.cost_total_usd, 2) }}</td></tr>{% endfor %}
</tbody></table></div>
{% for r in c.regressions %}<p><span class="tag regress">regression</span> {{ r.kind }}: {{ r.evidence }}</p>{% else %}<p class="muted">{{ c.regression_note }}</p>{% endfor %}
{{ provenance(c.provenance) }}
</section>{% endfor %}
{% endblock %}"""

RUNS = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>Runs</h1><div class="table-wrap"><table class="sortable"><thead><tr>{{ th("run", True) }}{{ th("file", True) }}{{ th("name", True) }}{{ th("started (UTC)", True) }}{{ th("scenario", True) }}{{ th("days") }}{{ th("kind", True) }}{{ th("status", True) }}{{ th("trials") }}{{ th("cost") }}</tr></thead><tbody>
{% for r in runs %}<tr><td class="l"><a href="{{ root }}{{ r.href }}">{{ r.run_id }}</a></td><td class="l">{{ r.file }}</td><td class="l">{{ r.name or "" }}</td><td class="l">{{ r.date }}</td><td class="l">{{ r.scenario }}</td><td>{{ r.days }}</td><td class="l">{{ r.kind }}</td><td class="l">{{ r.status }}</td><td>{{ r.completed }}/{{ r.trials }}</td><td class="num"{{ dv(r.cost) }}>{{ usd(r.cost, 2) }}</td></tr>{% endfor %}
</tbody></table></div>{% endblock %}"""

RUN = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>Run {{ run.run_id }}</h1>
<dl class="prov"><dt>file</dt><dd>{{ file }}</dd><dt>name</dt><dd>{{ run.name or "" }}</dd><dt>started</dt><dd>{{ run.created_at }} UTC</dd>
<dt>scenario</dt><dd>{{ run.scenario }}, {{ run.days }} days</dd><dt>kind</dt><dd>{{ kind_of_run }}</dd><dt>status</dt><dd>{{ run.status }}</dd>
<dt>code version</dt><dd>{{ run.code_version }}</dd><dt>prompt SHA-256</dt><dd>{{ run.prompt_sha256 }}</dd><dt>tools SHA-256</dt><dd>{{ run.tools_sha256 }}</dd>
<dt>worlds</dt><dd>{{ run.world_seeds }}</dd><dt>run budget</dt><dd>{{ usd(run.total_budget_usd, 2) }}</dd></dl>
<h2>Trials</h2><div class="table-wrap"><table class="sortable"><thead><tr>{{ th("trial", True) }}{{ th("model", True) }}{{ th("world") }}{{ th("seed") }}{{ th("attempt") }}{{ th("status", True) }}{{ th("days") }}{{ th("score") }}{{ th("cost") }}{{ th("budget") }}</tr></thead><tbody>
{% for t in trials %}<tr><td class="l">{{ trial_link(t) }}</td><td class="l">{{ t.model }}</td><td>{{ t.world_seed }}</td><td>{{ t.seed }}</td><td>{{ t.attempt }}</td><td class="l">{{ t.status }}{% if t.reason %} <span class="muted">({{ t.reason }})</span>{% endif %}</td><td>{{ t.days_completed }}</td><td class="num"{{ dv(t.score) }}>{{ num(t.score) }}</td><td class="num"{{ dv(t.cost) }}>{{ usd(t.cost) }}</td><td class="num"{{ dv(t.budget) }}>{{ usd(t.budget, 2) }}</td></tr>{% endfor %}
</tbody></table></div>
{% if warnings %}<h2>Warnings</h2><ul>{% for w in warnings %}<li>{{ w.model }}: {{ w.message }}</li>{% endfor %}</ul>{% endif %}
<h2>Prices</h2>{% if prices %}<div class="table-wrap"><table><thead><tr><th scope="col" class="l">model</th><th scope="col" class="l">price</th></tr></thead><tbody>
{% for m, p in prices.items() %}<tr><td class="l">{{ m }}</td><td class="l">{{ p }}</td></tr>{% endfor %}</tbody></table></div>{% else %}<p class="muted">No price stored (the in-process policies cost nothing).</p>{% endif %}
<h2>Configuration</h2><details><summary>as stored</summary><pre>{{ config }}</pre></details>
{% endblock %}"""

COMPARISON = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>Comparison {{ c.comparison_id }}</h1>
<p>{{ c.scenario }}, {{ c.days }} days; models {{ c.models|join(", ") }}. Verdict: <strong>{{ c.verdict or "none yet" }}</strong>{% if c.best %}, best {{ c.best }}{% endif %}{% if c.reason %} ({{ c.reason }}){% endif %}; {{ c.pairs }} pairs, {{ usd(c.spent_usd, 2) }} spent; {{ c.status }}.</p>
{% if chart_fig %}{{ chart(chart_fig, "Each pair's interval batch by batch") }}{% endif %}
<div class="table-wrap"><table><caption>Each batch: the pairs so far, the models still in, each pair's difference in shares of the oracle's gain (b − a) with its anytime-valid interval.</caption><thead><tr><th scope="col">batch</th><th scope="col" class="l">run</th><th scope="col">pairs</th><th scope="col" class="l">still in</th><th scope="col" class="l">b − a: mean [interval]</th><th scope="col">spent</th></tr></thead><tbody>
{% for s in steps %}<tr><td>{{ s.step }}</td><td class="l">{% if s.href %}<a href="{{ root }}{{ s.href }}">{{ s.run_id }}</a>{% else %}{{ s.run_id }}{% endif %}</td><td>{{ s.pairs }}</td><td class="l">{{ s.survivors|join(", ") }}</td>
<td class="l">{% for p in s.intervals %}{{ p.b }} − {{ p.a }}: {{ pct(p.mean) }} [{{ pct(p.low) }}, {{ pct(p.high) }}]{% if not loop.last %}<br>{% endif %}{% endfor %}</td><td class="num">{{ usd(s.spent_usd, 2) }}</td></tr>{% endfor %}
</tbody></table></div>{% endblock %}"""

ARENA = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>Arena {{ run_id }}</h1>
<p>{{ board.scenario }}, {{ board.days }} days; {{ board.matches }} match(es) of {{ board.seats }} operators. Interval: {{ board.interval_method }}.</p>
<h2>Standings</h2><div class="table-wrap"><table class="sortable"><thead><tr>{{ th("model", True) }}{{ th("seats") }}{{ th("done") }}{{ th("mean score") }}{{ th("share") }}{{ th("95%") }}{{ th("wins") }}{{ th("transfers") }}{{ th("cost") }}{{ th("flags") }}</tr></thead><tbody>
{% for r in board.rows %}<tr><td class="l">{{ r.model }}</td><td>{{ r.trials }}</td><td>{{ r.completed }}</td><td class="num"{{ dv(r.mean_score) }}>{{ num(r.mean_score) }}</td><td class="num"{{ dv(r.oracle_share) }}>{{ pct(r.oracle_share) }}</td><td class="num">{{ ci(r.ci_oracle_share) }}</td><td class="num"{{ dv(r.wins) }}>{{ num(r.wins, 1) }}/{{ r.meetings }}</td><td class="num"{{ dv(r.net_transfers) }}>{{ num(r.net_transfers) }}</td><td class="num"{{ dv(r.cost_usd) }}>{{ usd(r.cost_usd) }}</td><td>{{ r.flags if r.flags is not none else "—" }}</td></tr>{% endfor %}
</tbody></table></div>
<h2>Head to head</h2><div class="table-wrap"><table class="sortable"><thead><tr>{{ th("model", True) }}{{ th("opponent", True) }}{{ th("matches") }}{{ th("won") }}{{ th("tied") }}{{ th("lost") }}{{ th("win rate") }}{{ th("95%") }}{{ th("verdict", True) }}</tr></thead><tbody>
{% for p in board.pairs %}<tr><td class="l">{{ p.model }}</td><td class="l">{{ p.opponent }}</td><td>{{ p.matches }}</td><td>{{ p.wins }}</td><td>{{ p.ties }}</td><td>{{ p.losses }}</td><td class="num"{{ dv(p.win_rate) }}>{{ pct(p.win_rate) }}</td><td class="num">{{ ci(p.ci_win_rate) }}</td><td class="l">{{ p.verdict }}</td></tr>{% endfor %}
</tbody></table></div>{% endblock %}"""

TREND = """{% extends "base" %}{% block main %}{% from "macros" import chart, th, provenance, pct, ci, usd, num, dv, trial_link with context %}
<h1>Trend</h1><p>Every model across nights, per cohort; a regression is the latest night worse than the one before beyond noise ({{ method }}).</p>
{% for c in cohorts %}<section aria-labelledby="h-{{ c.id }}"><h2 id="h-{{ c.id }}">{{ c.label }}</h2>
{{ chart(c.chart, "Every model's share of the oracle's gain night by night, " ~ c.label) }}
<div class="table-wrap"><table class="sortable"><thead><tr>{{ th("model", True) }}{{ th("night (UTC)", True) }}{{ th("file", True) }}{{ th("done") }}{{ th("share") }}{{ th("95% (t)") }}{{ th("cost") }}</tr></thead><tbody>
{% for n in c.nights %}<tr><td class="l"><a href="{{ root }}{{ n.href }}">{{ n.model }}</a></td><td class="l">{{ n.date }}</td><td class="l">{{ n.file }}</td><td>{{ n.completed }}/{{ n.trials }}</td><td class="num"{{ dv(n.oracle_share) }}>{{ pct(n.oracle_share) }}</td><td class="num">{{ ci(n.ci_oracle_share) }}</td><td class="num"{{ dv(n.cost_total_usd) }}>{{ usd(n.cost_total_usd, 2) }}</td></tr>{% endfor %}
</tbody></table></div>
{% for r in c.regressions %}<p><span class="tag regress">regression</span> {{ r.model }} ({{ r.kind }}): {{ r.evidence }}</p>{% endfor %}
{% for n in c.notes %}<p class="prov">{{ n }}</p>{% endfor %}</section>{% endfor %}
{% endblock %}"""

TEMPLATES = {"macros": MACROS, "base": BASE, "index": INDEX, "models": MODELS,
             "model": MODEL, "runs": RUNS, "run": RUN, "comparison": COMPARISON,
             "arena": ARENA, "trend": TREND}
