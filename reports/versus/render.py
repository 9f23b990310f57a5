"""Jinja2 environments of the report: HTML (autoescaped) and LaTeX (its own
delimiters, `\\VAR{...}` and `\\BLOCK{...}`, and an escaping finaliser applied to
every value not marked safe).  Numbers reach templates as numbers; the
filters here format them, the same way for both outputs.
"""
from __future__ import annotations

import math
from pathlib import Path

from .lazy import jinja2, markupsafe

from .compare import fmt_bytes

TEMPLATES = Path(__file__).parent / "templates"

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "\"": "{''}",
          "±": r"\textpm{}", "µ": r"\textmu{}", "μ": r"\textmu{}", "×": r"\texttimes{}",
          "≥": r"$\geq$", "≤": r"$\leq$", "½": r"\textonehalf{}", "σ": r"$\sigma$", "·": r"$\cdot$",
          "/": r"/\allowbreak{}", "–": "--", "—": "---", "…": r"\dots{}", "∞": r"$\infty$", "÷": r"$\div$", "→": r"$\to$", "\n": " ", "\t": " "}


def latex_escape(value) -> str:
    """Text that pdflatex prints as given; characters it cannot typeset become '?'."""
    out = []
    for ch in str(value):
        if ch in _LATEX:
            out.append(_LATEX[ch])
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        elif ch in "àáâäçèéêëìíîïñòóôöùúûüÀÁÂÄÇÈÉÊËÍÎÑÓÔÖÚÜß°":
            out.append(ch)     # covered by LaTeX's default UTF-8 input encoding
        else:
            out.append("?")
    return "".join(out)


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def sig(v, digits: int = 3) -> str:
    """A number with `digits` significant figures, never in exponent form for
    the magnitudes of this report."""
    if not _finite(v):
        return "–"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    dec = max(digits - 1 - mag, 0)
    return f"{v:,.{dec}f}".replace(",", " ") if abs(v) >= 1e4 else f"{v:.{dec}f}"


NO_LOWER_LIMIT = "none"
CONTROL_LIMITS_NOTE = ("Control limits: the 0.135th and 99.865th percentiles of the samples (order statistics; the "
                       "share a normal sample leaves outside mean ± 3σ), not mean ± 3σ, which falls below 0 µs on "
                       "times with a long upper tail; below 741 samples they are the smallest and largest sample "
                       "and none lies outside.")


NON_NEGATIVE = ("us", "bytes", "mbps")   # kinds no physical quantity takes below 0


def ci_cell(val, ci, note=None) -> list:
    """A (value, lo, hi, why not) table cell for the `<kind>_ci` formats: `note`
    says why an interval is not determined (ci None)."""
    return [val, *(ci or [None, None]), note]


def fmt_value(v, kind: str = "text") -> str:
    """Format one table cell.  kinds: text, int, us, mbps, bytes, pct, ratio, p,
    and `<kind>_ci` for a (value, lo, hi) triple."""
    if isinstance(v, dict) and "f" in v:
        return fmt_value(v.get("v"), v["f"])
    if kind.endswith("_ci"):
        base = kind[:-3]
        if not isinstance(v, (list, tuple)) or v[0] is None:
            return "–"
        val, lo, hi, note = (*v, None) if len(v) == 3 else v
        if base in NON_NEGATIVE and _finite(val) and val < 0:
            # a latency, size or bandwidth below 0 is a line extrapolated past what it
            # describes (a regime far from 0 B), not a figure to quote
            return "not determined: the fitted value is below 0"
        if not (_finite(lo) and _finite(hi)):
            # an interval that is unbounded or reaches what cannot be is not shown as numbers
            why = (note or "not determined").replace("not determined: ", "")
            return f"{fmt_value(val, base)} [CI not determined: {why}]"
        return f"{fmt_value(val, base)} [{fmt_value(lo, base)}, {fmt_value(hi, base)}]"
    if kind == "limits":           # (lower, upper) control limits of a time
        if not isinstance(v, (list, tuple)) or not _finite(v[0]) and not _finite(v[1]):
            return "–"
        lcl, ucl = v
        lo_s = fmt_value(lcl, "us") if _finite(lcl) and lcl >= 0 else NO_LOWER_LIMIT   # a time is never below 0
        return f"[{lo_s}, {fmt_value(ucl, 'us')}]"
    if v is None:
        return "–"
    if kind == "text":
        return str(v)
    if kind == "int":
        return f"{int(v)}"
    if kind == "bytes":
        return fmt_bytes(int(round(v))) if _finite(v) else "–"
    if kind in ("us", "mbps", "num"):
        return sig(v)
    if kind == "pct":
        return f"{v:.0f} %" if _finite(v) else "–"
    if kind == "times":
        return f"{sig(v)}×" if _finite(v) else "–"
    if kind == "ratio":
        return f"{v:.3f}" if _finite(v) else "–"
    if kind == "p":
        return f"{v:.2g}" if _finite(v) else "–"
    raise ValueError(f"unknown cell format {kind!r}")


def _safe_id(v) -> str:
    """An element id (HTML) or label (LaTeX) from names a results file carries (plots.safe_name)."""
    from .plots import safe_name
    return safe_name(str(v))


def _common_filters(env: jinja2.Environment) -> None:
    env.filters["fmt"] = fmt_value
    env.filters["sig"] = sig
    env.filters["bytes"] = lambda v: fmt_value(v, "bytes")
    env.filters["us"] = lambda v: fmt_value(v, "us")
    env.filters["mbps"] = lambda v: fmt_value(v, "mbps")
    env.filters["id"] = _safe_id


def html_env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    _common_filters(env)
    env.filters["mark_class"] = lambda m: {"+": "faster", "-": "slower"}.get(m, "same")
    from .charts import chart_json, plotly_js
    env.filters["chart_json"] = lambda spec: markupsafe.Markup(chart_json(spec))
    env.globals["plotly_js"] = lambda: markupsafe.Markup(plotly_js())
    return env


def _latex_finalize(v):
    if isinstance(v, markupsafe.Markup):
        return v
    return latex_escape("" if v is None else v)


LONG_TABLE_ROWS = 40     # a table longer than this goes to appendix.tex; the report names it
SETTINGS_IN_BODY = 4     # each configuration's settings (about 16 rows each) in the body up to this many
AUTO_WIDTH_COLUMNS = 6   # a table of more columns than this, or with an interval column, wraps its cells
# a column's share of the line, relative, by what it holds (a value with its interval takes most)
_WEIGHT = {"text": 1.4, "limits": 1.6, "bytes": 0.8, "int": 0.6, "p": 0.7}


def _latex_column(c: dict, width: float | None) -> markupsafe.Markup:
    """l / r, or a wrapping column of the given share of the line width; the share includes the
    column's separation (2 \\tabcolsep), so shares summing to 1 fill the line and no more."""
    text = c.get("fmt", "text") == "text"
    if not width:
        return markupsafe.Markup("l" if text else "r")
    align = r"\raggedright" if text else r"\raggedleft"
    return markupsafe.Markup(f">{{{align}\\arraybackslash}}p{{\\dimexpr{float(width):.4f}\\linewidth-2\\tabcolsep\\relax}}")


def colspec(cols: list[dict]) -> markupsafe.Markup:
    """A longtable's column specification that never runs past the margin: the shares the
    columns give (`width`), scaled to sum to the line; a table without them of more than
    AUTO_WIDTH_COLUMNS columns or with an interval column (`*_ci`, whose cells can be a sentence)
    gets shares by what its columns hold (_WEIGHT), and its titles and cells wrap."""
    widths = [float(c["width"]) if c.get("width") else None for c in cols]
    fmts = [c.get("fmt", "text") for c in cols]
    if not any(widths) and (len(cols) > AUTO_WIDTH_COLUMNS or any(f.endswith("_ci") for f in fmts)):
        widths = [2.2 if f.endswith("_ci") else _WEIGHT.get(f, 1.0) for f in fmts]
    if any(widths):
        known = [w for w in widths if w]
        widths = [w or sum(known) / len(known) for w in widths]
        total = sum(widths)
        widths = [w / total for w in widths]
    return markupsafe.Markup("").join(_latex_column(c, w) for c, w in zip(cols, widths))


def latex_env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False,
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        line_statement_prefix="%%", line_comment_prefix="%#",
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
        finalize=_latex_finalize)
    _common_filters(env)
    env.filters["e"] = lambda v: markupsafe.Markup(latex_escape(v))
    env.filters["raw"] = markupsafe.Markup
    env.filters["colspec"] = colspec
    env.tests["longer_than"] = lambda v, n: len(v) > n
    env.globals["LONG_TABLE_ROWS"] = LONG_TABLE_ROWS
    env.globals["SETTINGS_IN_BODY"] = SETTINGS_IN_BODY
    from .report import DETAIL_FIGURES_UP_TO
    env.globals["DETAIL_FIGURES_UP_TO"] = DETAIL_FIGURES_UP_TO
    return env


def html_safe_svg(svg: str) -> markupsafe.Markup:
    """SVG produced by our own plotting code (its text is escaped by matplotlib)."""
    return markupsafe.Markup(svg)


def escape(value):
    """HTML-escaped text (MarkupSafe's escape)."""
    return markupsafe.escape(value)


__all__ = ["html_env", "latex_env", "latex_escape", "fmt_value", "sig", "html_safe_svg", "escape"]
