"""The viewer's pages (Jinja2, autoescaped): one base with the style and the keys, and a
template per page. Every link is relative (``root`` leads back to the top), so the same
pages work served and written as files."""

from __future__ import annotations

import base64
import hashlib

STYLE = """body{font-family:system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#20232a;color:#eee;padding:.6em 1.2em;display:flex;gap:1.2em;
       align-items:center;flex-wrap:wrap}
header a{color:#9cf} main{padding:1em 1.2em;max-width:1500px}
nav.crumbs a{color:#9cf;text-decoration:underline} nav.crumbs span{color:#aaa}
h1{font-size:1.3em;margin:.4em 0} h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;font-size:13px;background:#fff}
th,td{border-bottom:1px solid #e3e3e3;padding:3px 8px;text-align:right;white-space:nowrap}
th{background:#f0f0f0;position:sticky;top:0} td.l,th.l{text-align:left}
tr:hover td{background:#f5f9ff} a{color:#0b5cad}
.bad{color:#b00020} .ok{color:#137333} .muted{color:#5f5f5f} .num{font-variant-numeric:tabular-nums}
pre{background:#fff;border:1px solid #e3e3e3;padding:.6em;white-space:pre-wrap;
    word-break:break-word;max-height:40em;overflow:auto;font-size:12px;margin:.3em 0}
details>summary{cursor:pointer} .call{border-left:3px solid #ccc;padding:.2em .8em;margin:.6em 0}
.call.rejected{border-color:#b00020} .exchange{background:#fff;border:1px solid #e3e3e3;
    padding:.5em .8em;margin:.8em 0} .meta{font-size:12px;color:#555}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}
input[type=search]{padding:.3em .5em;font-size:14px;min-width:18em}
.keys{font-size:12px;color:#aaa} kbd{border:1px solid #888;border-radius:3px;padding:0 3px}
svg text{font-size:10px;fill:#555} td.wrap{white-space:normal}
.c-score{color:#0b5cad} .c-cash{color:#9a6700} .c-spend{color:#b00020}
p a,figcaption a,.meta a{text-decoration:underline}
"""

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{ csp }}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}vendbench{% endblock %} · vendbench view</title>
{% if assets %}<link rel="stylesheet" href="{{ root }}assets/view.css">{% else %}<style>
{{ style }}</style>{% endif %}</head>
<body><header><strong><a href="{{ root }}index.html">vendbench view</a></strong>
<nav class="crumbs">{% for label, href in crumbs %}<span> › </span>{% if href %}<a href="{{ href }}">{{ label }}</a>{% else %}{{ label }}{% endif %}{% endfor %}</nav>
<span class="keys">{% block keys %}{% endblock %}</span>
{% if live %}<span class="muted" id="live" data-state="{{ live.url }}" data-seen="{{ live.seen }}">live: refreshes as days arrive</span>{% endif %}
</header><main>{% block main %}{% endblock %}</main>
{% if assets %}<script src="{{ root }}assets/view.js"></script>{% else %}<script>{{ script }}</script>{% endif %}</body></html>"""

RUNS = """{% extends "base" %}{% block title %}runs{% endblock %}{% block main %}
<h1>Runs in {{ db }}</h1>
{% if not runs %}<p class="muted">No run yet: <code>vendbench run …</code> writes one.</p>{% else %}
<table><thead><tr><th class="l">run</th><th class="l">name</th><th class="l">scenario</th>
<th>days</th><th class="l">status</th><th>trials</th><th>completed</th><th>cost $</th>
<th class="l">started</th></tr></thead><tbody>
{% for r in runs %}<tr><td class="l"><a href="run/{{ r.run_id|path }}.html">{{ r.run_id }}</a></td>
<td class="l">{{ r.name or "" }}</td><td class="l">{{ r.scenario }}</td><td>{{ r.days }}</td>
<td class="l">{{ r.status }}</td><td>{{ r.trials }}</td><td>{{ r.completed }}</td>
<td class="num">{{ money(r.cost_usd, 4) }}</td><td class="l">{{ when(r.created_at) }}</td></tr>{% endfor %}
</tbody></table>{% endif %}{% endblock %}"""

RUN = """{% extends "base" %}{% block title %}run {{ run.run_id }}{% endblock %}
{% block keys %}<kbd>u</kbd> up{% endblock %}{% block main %}
<a id="up" href="{{ root }}index.html" hidden></a>
<h1>Run {{ run.run_id }}{% if run.name %} · {{ run.name }}{% endif %}</h1>
<p class="meta">{{ run.scenario }}, {{ run.days }} days, {{ run.status }}; score: {{ score_name }} ({{ currency }})</p>
<table><thead><tr><th class="l">trial</th><th class="l">model</th><th>world</th><th>seed</th>
<th>rep.</th><th class="l">status</th><th>{{ score_name }}</th><th title="the share of what the oracle gains over doing nothing on the same world and seed: 0% only ends its days, 100% the oracle">of oracle</th><th>cost $</th><th>cached</th>
<th>days</th><th class="l">{{ score_name }} by day</th></tr></thead><tbody>
{% for t in trials %}<tr><td class="l"><a href="{{ root }}trial/{{ t.trial_id|path }}/index.html">{{ t.trial_id }}</a></td>
<td class="l">{{ t.model }}</td><td>{{ t.world_seed }}</td><td>{{ t.seed }}</td><td>{{ t.repeat }}</td>
<td class="l {{ 'ok' if t.status == 'completed' else 'bad' if t.status in ('error', 'budget_exhausted', 'bankrupt') else '' }}">{{ t.status }}</td>
<td class="num">{{ money(t.score) }}</td><td class="num {{ 'bad' if t.share and t.share > 1 }}">{{ percent(t.share) }}{% if t.share and t.share > 1 %} !{% endif %}</td><td class="num">{{ money(t.cost_usd, 4) }}</td>
<td class="num">{{ percent(t.cached) }}</td><td>{{ t.days_completed }}</td>
<td class="l">{{ spark(t.series) }}</td></tr>{% endfor %}</tbody></table>
{% if matches %}<h2>Matches</h2><ul>{% for m in matches %}
<li><a href="{{ root }}match/{{ m.match_id|path }}.html">world {{ m.world_seed }}, seed {{ m.seed }}{% if m.repeat > 1 %}, repeat {{ m.repeat }}{% endif %}{% if m.attempt > 1 %} (attempt {{ m.attempt }}){% endif %}</a>: its operators side by side</li>{% endfor %}</ul>{% endif %}
{% if pairs %}<h2>Side by side</h2><ul>{% for a, b in pairs %}
<li><a href="{{ root }}compare/{{ a.trial_id|path }}/{{ b.trial_id|path }}.html">{{ a.model }} vs {{ b.model }}, world {{ a.world_seed }}, seed {{ a.seed }}</a></li>{% endfor %}</ul>{% endif %}
{% endblock %}"""

TRIAL = """{% extends "base" %}{% block title %}{{ t.trial_id }}{% endblock %}
{% block keys %}<kbd>u</kbd> run · <kbd>/</kbd> search{% endblock %}{% block main %}
<a id="up" href="{{ root }}run/{{ t.run_id|path }}.html" hidden></a>
<h1>{{ t.model }} · world {{ t.world_seed }} · seed {{ t.seed }} · repeat {{ t.repeat }}</h1>
<p class="meta">{{ t.scenario }}, {{ t.days_completed }} of {{ t.horizon }} days; <b>{{ t.status }}</b>{% if t.reason %}: {{ t.reason }}{% endif %};
{{ score_name }} {{ money(t.score) }} {{ currency }}{% if t.share is not none %} ({{ percent(t.share) }} of the oracle's gain over doing nothing on this world and seed){% endif %}; {{ t.exchanges }} requests, {{ t.tool_calls }} tool calls; cost ${{ money(t.cost_usd, 4) }}</p>
{% if t.share and t.share > 1 %}<p class="bad" role="alert"><b>Above the oracle:</b> this trial scored more than the privileged oracle on the same world and seed. That is an exploit of the world or a bug: look at what it did, day by day.</p>{% endif %}
{% if searchable %}<form action="search.html"><input type="search" name="q" placeholder="search calls, results and replies" aria-label="search this trial"> <button>search</button></form>{% endif %}
{{ chart|safe }}
<h2>Days</h2>
<table><thead><tr><th>day</th><th>{{ score_name }}</th><th>cash</th><th>requests</th><th>cost $</th><th>cached</th><th>calls</th><th>rejected</th></tr></thead><tbody>
{% for d in days %}<tr><td><a href="day-{{ d.day }}.html">{{ d.day }}</a></td><td class="num">{{ money(d[score_column]) }}</td>
<td class="num">{{ money(d.cash) }}</td><td>{{ d.exchanges or 0 }}</td><td class="num">{{ money(d.cost_usd, 4) }}</td>
<td class="num">{{ percent(share(d)) }}</td><td>{{ d.calls or 0 }}</td><td class="{{ 'bad' if d.rejected }}">{{ d.rejected or 0 }}</td></tr>{% endfor %}
</tbody></table>
{% if diagnosis %}<h2 id="diagnostics">Diagnostics</h2>
<p class="meta">{% for h, unit, v, scale, places in diagnosis.figures %}{{ h }} <b>{{ '—' if v is none else money(v * scale, places) }}</b> ({{ unit }}){{ '; ' if not loop.last }}{% endfor %}{% for n in diagnosis.notes %}; {{ n }}{% endfor %}{% if diagnosis.idle_days %}; days without an action: {{ diagnosis.idle_days|length }}{% endif %}</p>
{% if diagnosis.incidents %}<table><thead><tr><th>day</th><th>failure mode</th><th>what</th></tr></thead><tbody>
{% for i in diagnosis.incidents %}<tr><td><a href="day-{{ i.day }}.html{% if i.call %}#call-{{ i.call }}{% endif %}">{{ i.day }}</a></td><td>{{ i.header }}</td><td>{{ i.detail }}{% if i.exchange %} · <a href="day-{{ i.day }}.html#exchange-{{ i.exchange }}-1">request {{ i.exchange }}</a>{% endif %}</td></tr>{% endfor %}
</tbody></table>{% else %}<p class="muted">No failure mode found.</p>{% endif %}{% endif %}
<h2 id="findings">Findings</h2>
{% if findings %}<table><thead><tr><th>day</th><th>what</th><th>quote</th><th>found by</th></tr></thead><tbody>
{% for f in findings %}<tr><td>{% if f.href %}<a href="{{ f.href }}">{{ f.day }}</a>{% else %}—{% endif %}</td><td class="{{ 'bad' if f.severity == 'high' }}">{{ f.category }} ({{ f.severity }}): {{ f.explanation }}</td><td><q>{{ f.quote }}</q></td><td>{{ f.scanner }} v{{ f.scanner_version }}{% if f.judge %} ({{ f.judge }}){% endif %}</td></tr>{% endfor %}
</tbody></table>{% elif findings.screened %}<p class="muted">Screened: nothing of severity warning or high.</p>{% else %}<p class="muted">Not screened yet: <code>vendbench screen</code> reads the transcript.</p>{% endif %}
{% endblock %}"""

DAY = """{% extends "base" %}{% block title %}day {{ day }} · {{ t.trial_id }}{% endblock %}
{% block keys %}<kbd>←</kbd><kbd>→</kbd> day · <kbd>u</kbd> trial{% endblock %}{% block main %}
<a id="up" href="index.html" hidden></a>
{% if day > 1 %}<a id="prev" href="day-{{ day - 1 }}.html">← day {{ day - 1 }}</a>{% endif %}
{% if day > 1 and day < last %} · {% endif %}
{% if day < last %}<a id="next" href="day-{{ day + 1 }}.html">day {{ day + 1 }} →</a>{% endif %}
<h1>Day {{ day }} · {{ t.model }} · seed {{ t.seed }}</h1>
{% if row %}<p class="meta">end of day: {{ score_name }} {{ money(row[score_column]) }}, cash {{ money(row.cash) }} {{ currency }}</p>{% endif %}
{% if report %}<details open><summary>Daily report</summary><pre>{{ report }}</pre></details>{% endif %}
{% if notes is not none %}<details><summary>Notes as they stood</summary><pre>{{ notes }}</pre></details>{% endif %}
{% if flags %}<div class="flags"><b>Findings this day</b><ul>{% for f in flags %}<li>{% if f.href %}<a href="{{ f.href }}">{{ f.category }}</a>{% else %}{{ f.category }}{% endif %} ({{ f.severity }}, {{ f.scanner }}): <q>{{ f.quote }}</q> {{ f.explanation }}</li>{% endfor %}</ul></div>{% endif %}
{% for e in exchanges %}<div class="exchange" id="exchange-{{ e.seq }}-{{ e.attempt }}">
<div class="meta">request {{ e.seq }}{% if e.attempt > 1 %} (attempt {{ e.attempt }}){% endif %} ·
{% if e.purpose == 'compaction' %}<b>compaction</b> (the model summarising what leaves its window) ·{% endif %}
<span class="{{ 'ok' if e.status == 'ok' else 'bad' }}">{{ e.status }}</span> ·
{{ e.input_tokens or 0 }} in ({{ percent(share_of(e)) }} cached) / {{ e.output_tokens or 0 }} out ·
${{ money(e.cost_usd, 5) }} · {{ money(e.latency_ms, 0) }} ms ·
<a href="window-{{ e.seq }}-{{ e.attempt }}.html">the window ({{ e.carried }} messages)</a></div>
{% if e.error %}<pre class="bad">{{ e.error }}</pre>{% endif %}
{% if e.reasoning %}<details><summary>reasoning</summary><pre>{{ e.reasoning }}</pre></details>{% endif %}
{% for f in flags.at(e.seq) %}<p class="bad flag">⚑ {{ f.category }} ({{ f.severity }}, {{ f.scanner }}): <q>{{ f.quote }}</q> {{ f.explanation }}</p>{% endfor %}
{% if e.text %}<pre>{{ e.text }}</pre>{% endif %}
{% for c in calls_of(e.seq, e.attempt) %}{% include "call" %}{% endfor %}</div>{% endfor %}
{% if loose %}<h2>Tool calls</h2>{% for c in loose %}{% include "call" %}{% endfor %}{% endif %}
{% if not exchanges and not loose %}<p class="muted">Nothing was logged on this day.</p>{% endif %}
{% endblock %}"""

CALL = """<div class="call{{ ' rejected' if not c.ok }}" id="call-{{ c.seq }}">
<b>{{ c.name }}</b> <span class="{{ 'ok' if c.ok else 'bad' }}">{{ 'ok' if c.ok else 'rejected' }}</span>
<span class="muted">#{{ c.seq }}</span>
<details{{ ' open' if c.args_json|length < 400 }}><summary>arguments</summary><pre>{{ pretty(c.args_json) }}</pre></details>
<details{{ ' open' if c.result_json|length < 600 }}><summary>result ({{ c.result_json|length }} chars)</summary><pre>{{ pretty(c.result_json) }}</pre></details></div>"""

WINDOW = """{% extends "base" %}{% block title %}window {{ seq }} · {{ t.trial_id }}{% endblock %}
{% block keys %}<kbd>u</kbd> day{% endblock %}{% block main %}
<a id="up" href="day-{{ w.day }}.html#exchange-{{ seq }}-{{ attempt }}" hidden></a>
<h1>The window of request {{ seq }}{% if attempt > 1 %} (attempt {{ attempt }}){% endif %} · day {{ w.day }}</h1>
<p class="meta">{{ w.carried|length }} messages, {{ w.tokens }} tokens by our count (the tool schemas aside);
{{ w.evicted|length }} earlier messages left out. Parameters: max_tokens {{ w.request.max_tokens }},
cache points {{ w.request.cache_points }}, status {{ w.status }}.</p>
{% if served %}<table><thead><tr><th>#</th><th class="l">role</th><th>tokens</th><th class="l">text</th></tr></thead><tbody>
{% for m in w.carried %}<tr><td><a href="message-{{ m.msg_id }}.html">{{ m.msg_id }}</a></td>
<td class="l">{{ m.role }}</td><td>{{ m.tokens }}</td><td class="l wrap">{{ m.preview }}</td></tr>{% endfor %}
</tbody></table>
{% if w.evicted %}<details><summary>Evicted: {{ w.evicted|length }} messages, {{ evicted_tokens }} tokens</summary>
<table><tbody>{% for m in w.evicted %}<tr><td>{{ m.msg_id }}</td><td class="l">{{ m.role }}</td><td>{{ m.tokens }}</td>
<td class="l wrap">{{ m.preview }}</td></tr>{% endfor %}</tbody></table></details>{% endif %}
{% else %}<p>Carried, by message number: {{ ranges(w.carried) }}.</p>
{% if w.evicted %}<p>Evicted: {{ ranges(w.evicted) }} ({{ evicted_tokens }} tokens).</p>{% endif %}
<p class="muted">The messages themselves are on the days' pages; <code>vendbench view</code> lists each with its text.</p>{% endif %}
{% endblock %}"""

MESSAGE = """{% extends "base" %}{% block title %}message {{ m.msg_id }}{% endblock %}{% block main %}
<h1>Message {{ m.msg_id }} · {{ m.role }} · {{ m.tokens }} tokens</h1><pre>{{ pretty_obj(m.body) }}</pre>
{% endblock %}"""

SEARCH = """{% extends "base" %}{% block title %}search · {{ t.trial_id }}{% endblock %}
{% block keys %}<kbd>u</kbd> trial{% endblock %}{% block main %}
<a id="up" href="index.html" hidden></a>
<form action="search.html"><input type="search" name="q" value="{{ q }}" aria-label="search this trial" autofocus> <button>search</button></form>
{% if q %}<p class="meta">{{ hits|length }}{% if hits|length >= limit %}+ (the first {{ limit }}){% endif %} matches of “{{ q }}”</p>
<table><thead><tr><th>day</th><th class="l">where</th><th class="l">text</th></tr></thead><tbody>
{% for h in hits %}<tr><td><a href="day-{{ h.day }}.html#{{ 'call' if h.kind == 'call' else 'exchange' }}-{{ h.seq }}{{ '-1' if h.kind == 'reply' }}">{{ h.day }}</a></td>
<td class="l">{{ h.what }}</td><td class="l wrap">{{ h.snippet }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% endblock %}"""

COMPARE = """{% extends "base" %}{% block title %}side by side{% endblock %}{% block main %}
<h1>Side by side · world {{ a.world_seed }} · seed {{ a.seed }}</h1>
<p class="meta">The first day where the two differ in {{ score_name }}: {{ diverge if diverge else "none" }}.</p>
<table><thead><tr><th>day</th><th>{{ a.model }}</th><th>calls</th><th>rejected</th><th>{{ b.model }}</th><th>calls</th><th>rejected</th><th>difference</th></tr></thead><tbody>
{% for r in rows %}<tr id="day-{{ r.day }}"><td>{{ r.day }}</td>
<td class="num">{% if r.a %}<a href="{{ root }}trial/{{ a.trial_id|path }}/day-{{ r.day }}.html">{{ money(r.a[score_column]) }}</a>{% endif %}</td>
<td>{{ r.a.calls if r.a else "" }}</td><td class="{{ 'bad' if r.a and r.a.rejected }}">{{ r.a.rejected if r.a else "" }}</td>
<td class="num">{% if r.b %}<a href="{{ root }}trial/{{ b.trial_id|path }}/day-{{ r.day }}.html">{{ money(r.b[score_column]) }}</a>{% endif %}</td>
<td>{{ r.b.calls if r.b else "" }}</td><td class="{{ 'bad' if r.b and r.b.rejected }}">{{ r.b.rejected if r.b else "" }}</td>
<td class="num">{{ money(r.diff) }}</td></tr>{% endfor %}</tbody></table>{% endblock %}"""

MATCH = """{% extends "base" %}{% block title %}match {{ first.match_id }}{% endblock %}
{% block keys %}<kbd>u</kbd> run{% endblock %}{% block main %}
<a id="up" href="{{ root }}run/{{ first.run_id|path }}.html" hidden></a>
<h1>Match · world {{ first.world_seed }} · seed {{ first.seed }}{% if first.attempt > 1 %} · attempt {{ first.attempt }}{% endif %}</h1>
<p class="meta">{{ first.scenario }}, {{ first.horizon }} days, {{ seats|length }} operators in one world, each scored alone ({{ score_name }}, {{ currency }}).</p>
<table><thead><tr><th>seat</th><th class="l">operator</th><th class="l">model</th><th class="l">status</th><th>{{ score_name }}</th><th>cost $</th><th>requests</th><th>calls</th></tr></thead><tbody>
{% for s in seats %}<tr><td>{{ s.seat }}</td><td class="l">{{ s.operator }}</td>
<td class="l"><a href="{{ root }}trial/{{ s.trial_id|path }}/index.html">{{ s.model }}</a></td>
<td class="l {{ 'ok' if s.status == 'completed' else 'bad' }}">{{ s.status }}</td>
<td class="num">{{ money(s.score) }}</td><td class="num">{{ money(s.cost_usd, 4) }}</td><td>{{ s.exchanges }}</td><td>{{ s.tool_calls }}</td></tr>{% endfor %}</tbody></table>
<h2>Day by day ({{ score_column }})</h2>
<table><thead><tr><th>day</th>{% for s in seats %}<th>{{ s.operator }}</th>{% endfor %}</tr></thead><tbody>
{% for r in rows %}<tr><td>{{ r.day }}</td>{% for c in r.cells %}<td class="num">{% if c %}<a href="{{ root }}trial/{{ seats[loop.index0].trial_id|path }}/day-{{ r.day }}.html">{{ money(c[score_column]) }}</a>{% endif %}</td>{% endfor %}</tr>{% endfor %}
</tbody></table>
<h2>Between the operators</h2>
{% if not messages %}<p class="muted">They sent each other nothing.</p>{% else %}
<table><thead><tr><th>day</th><th class="l">from</th><th class="l">to</th><th class="l">what</th><th class="l">text</th><th class="l"></th></tr></thead><tbody>
{% for m in messages %}<tr><td><a href="{{ root }}trial/{{ m.trial_id|path }}/day-{{ m.day }}.html#call-{{ m.seq }}">{{ m.day }}</a></td>
<td class="l">{{ m.sender }}</td><td class="l">{{ m.to }}</td><td class="l">{{ m.name }}</td>
<td class="l wrap">{% if m.args.subject is defined %}<b>{{ m.args.subject }}</b> {{ m.args.body }}{% else %}{{ money(m.args.amount) }} {{ currency }}{% if m.args.memo %}: {{ m.args.memo }}{% endif %}{% endif %}</td>
<td class="l {{ 'ok' if m.ok else 'bad' }}">{{ 'delivered overnight' if m.ok else 'refused: ' ~ (m.result.error or '') }}</td></tr>{% endfor %}
</tbody></table>{% endif %}{% endblock %}"""

ERROR = """{% extends "base" %}{% block title %}not found{% endblock %}{% block main %}
<h1>{{ title }}</h1><p>{{ message }}</p><p><a href="{{ root }}index.html">All runs</a></p>{% endblock %}"""

TEMPLATES = {"base": BASE, "runs": RUNS, "run": RUN, "trial": TRIAL, "day": DAY, "call": CALL,
             "window": WINDOW, "message": MESSAGE, "search": SEARCH, "compare": COMPARE,
             "match": MATCH, "error": ERROR}


# The one script of every page (the keys, the live refresh), allowed by its hash: the
# pages run no other script, inline or not, whatever a reply puts in them.
SCRIPT = """
document.addEventListener('keydown', e => {
  if (e.target.matches('input, textarea')) return;
  const go = id => { const a = document.getElementById(id); if (a) location.href = a.href; };
  if (e.key === 'ArrowLeft' || e.key === 'k') go('prev');
  if (e.key === 'ArrowRight' || e.key === 'j') go('next');
  if (e.key === 'u') go('up');
  if (e.key === '/') { const s = document.querySelector('input[type=search]');
                       if (s) { e.preventDefault(); s.focus(); } }
});
const live = document.getElementById('live');
if (live) setInterval(async () => {
  try { const r = await fetch(live.dataset.state, {cache: 'no-store'});
        const s = await r.text(); if (s.trim() !== live.dataset.seen) location.reload(); }
  catch (e) {}
}, 3000);
"""
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
CSP = ("default-src 'none'; style-src 'unsafe-inline'; "
       f"script-src 'sha256-{_SCRIPT_HASH}'; img-src data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'")
# the static export's pages share one style sheet and one script (assets/): a page
# carries only its content (each page once carried 2.2 KB of both), and nothing inline
# may style or run at all
STATIC_CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; img-src data:; "
              "form-action 'none'; base-uri 'none'")
