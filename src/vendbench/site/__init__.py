"""The leaderboard as a static site (``vendbench site OUT --db FILE ...``, design §33):
each cohort's ranking with both intervals, the cost–share frontier with intervals on
both axes, a page per model, run, comparison and arena, the trend across nights, money
over days, a map of the trials that exist; every page's data beside it as JSON, the
panel's trials and exchanges as Parquet; charts hovered in the browser (plotly.js, from
the plotly package, copied into the site) and saved as SVG and PNG. Nothing is fetched
from elsewhere and nothing inline runs (CSP ``'self'``).

    built = build_site("site", ["night-1.duckdb", "night-2.duckdb"])
    print(built.summary())
"""

from ._assets import CSP
from ._pages import Page, pages, slug
from ._panel import Cohort, Panel, collect, sources
from ._read import Source
from ._write import CACHE, Built, build_site

__all__ = ["CACHE", "CSP", "Built", "Cohort", "Page", "Panel", "Source", "build_site",
           "collect", "pages", "slug", "sources"]
