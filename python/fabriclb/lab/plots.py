"""Plots in the manner of the papers' figures (matplotlib, Agg backend, PNG).

One function per figure style:

- :func:`lines_vs_x` - a metric against load, one line per scheme, error bars from the
  minimum to the maximum over seeds (CONGA Figs. 9-11, 15; Expeditus; EMAN Fig. 7), one
  panel per metric;
- :func:`cdfs` - empirical CDFs (queue length, throughput imbalance, utilisation);
- :func:`bars` - grouped bars (Fig. 2-type throughput, per-port queues of Fig. 16);
- :func:`timeseries` - rates against time (EMAN Fig. 5);
- :func:`bars_and_series` - bars beside lines against time (EMAN Figs. 2 and 4: throughput per
  scheme and each flow's left:right ratio over time).

Every function takes tidy DataFrames and a path, and closes its figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

__all__ = ["lines_vs_x", "cdfs", "bars", "timeseries", "bars_and_series", "ecdf", "SCHEME_STYLE"]

#: Colours and markers per scheme, the same in every plot.
SCHEME_STYLE: Dict[str, Tuple[str, str]] = {
    "ecmp": ("#d62728", "o"),
    "conga": ("#1f77b4", "s"),
    "conga-flow": ("#2ca02c", "^"),
    "mptcp": ("#9467bd", "D"),
    "local": ("#ff7f0e", "v"),
    "conga-local": ("#ff7f0e", "v"),
    "spray": ("#8c564b", "x"),
    "expeditus": ("#17becf", "P"),
    "eman": ("#1f77b4", "s"),
    "clove": ("#bcbd22", "^"),
    "hermes": ("#e377c2", "D"),
    "bw-oracle": ("#2ca02c", "^"),
}


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _style(name: str, i: int) -> Dict[str, Any]:
    base = str(name).split("/")[0]
    if base in SCHEME_STYLE:
        c, m = SCHEME_STYLE[base]
        return {"color": c, "marker": m}
    cycle = ["#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5"]
    marks = ["o", "s", "^", "D", "v", "x"]
    return {"color": cycle[i % len(cycle)], "marker": marks[i % len(marks)]}


def _save(fig: Any, path: Union[str, Path]) -> None:
    plt = _plt()
    fig.tight_layout()
    fig.savefig(str(path), dpi=110)
    plt.close(fig)


def lines_vs_x(
    df: pd.DataFrame,
    path: Union[str, Path],
    *,
    x: str,
    panels: Sequence[Tuple[str, str]],
    group: str = "scheme",
    facet: Optional[str] = None,
    xlabel: str = "load",
    title: str = "",
    hline: Optional[float] = None,
    xpercent: bool = True,
) -> None:
    """One panel per ``(column, ylabel)`` in ``panels`` (and per value of ``facet``); one line
    per value of ``group``. Error bars span ``<column>_min`` to ``<column>_max`` when present."""
    plt = _plt()
    facets: List[Any] = [None] if facet is None or facet not in df else list(dict.fromkeys(df[facet]))
    n = len(panels) * len(facets)
    fig, axes = plt.subplots(1, max(n, 1), figsize=(4.2 * max(n, 1), 3.4), squeeze=False)
    k = 0
    for fv in facets:
        sub_f = df if fv is None else df[df[facet] == fv]
        for col, ylabel in panels:
            ax = axes[0][k]
            k += 1
            for i, (g, sub) in enumerate(sub_f.groupby(group, sort=False)):
                sub = sub.sort_values(x)
                if col not in sub or sub[col].isna().all():
                    continue
                xs = sub[x].to_numpy(dtype=float) * (100.0 if xpercent else 1.0)
                ys = sub[col].to_numpy(dtype=float)
                st = _style(str(g), i)
                if f"{col}_min" in sub and f"{col}_max" in sub:
                    lo = ys - sub[f"{col}_min"].to_numpy(dtype=float)
                    hi = sub[f"{col}_max"].to_numpy(dtype=float) - ys
                    ax.errorbar(xs, ys, yerr=[np.maximum(lo, 0), np.maximum(hi, 0)], label=str(g), capsize=3, **st)
                else:
                    ax.plot(xs, ys, label=str(g), **st)
            if hline is not None:
                ax.axhline(hline, color="#999999", lw=0.8, ls="--")
            ax.set_xlabel(xlabel + (" (%)" if xpercent else ""))
            ax.set_ylabel(ylabel)
            if fv is not None:
                ax.set_title(f"{fv}", fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    _save(fig, path)


def ecdf(values: Sequence[float], weights: Optional[Sequence[float]] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Sorted values and their cumulative fractions (weighted when ``weights`` is given)."""
    v = np.asarray(values, dtype=float)
    keep = ~np.isnan(v)
    v = v[keep]
    if v.size == 0:
        return v, v
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=float)[keep]
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    c = np.cumsum(w)
    return v, c / c[-1]


def cdfs(
    curves: Mapping[str, Tuple[Sequence[float], Sequence[float]]],
    path: Union[str, Path],
    *,
    xlabel: str,
    title: str = "",
    panels: Optional[Mapping[str, Mapping[str, Tuple[Sequence[float], Sequence[float]]]]] = None,
) -> None:
    """Step CDFs: ``curves`` maps a label to (x values, cumulative fraction); or ``panels`` maps
    a panel title to such a mapping."""
    plt = _plt()
    groups = dict(panels) if panels else {"": curves}
    fig, axes = plt.subplots(1, len(groups), figsize=(4.4 * len(groups), 3.4), squeeze=False)
    for ax, (ptitle, cs) in zip(axes[0], groups.items()):
        for i, (label, (xs, ys)) in enumerate(cs.items()):
            st = _style(label, i)
            ax.step(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), where="post", label=label, color=st["color"])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        if ptitle:
            ax.set_title(ptitle, fontsize=10)
    if title:
        fig.suptitle(title, fontsize=11)
    _save(fig, path)


def bars(
    df: pd.DataFrame,
    path: Union[str, Path],
    *,
    x: str,
    y: str,
    group: Optional[str] = None,
    ylabel: str = "",
    title: str = "",
    hline: Optional[float] = None,
    rotate: bool = False,
) -> None:
    """Grouped bars: ``x`` categories, one bar per ``group`` value; error bars from
    ``<y>_min`` / ``<y>_max`` when present."""
    plt = _plt()
    cats = list(dict.fromkeys(df[x]))
    groups: List[Any] = [None] if group is None else list(dict.fromkeys(df[group]))
    width = 0.8 / len(groups)
    fig, ax = plt.subplots(figsize=(max(4.5, 0.5 * len(cats) * max(1, len(groups)) + 2), 3.6))
    for gi, g in enumerate(groups):
        sub = df if g is None else df[df[group] == g]
        vals, lo, hi = [], [], []
        for c in cats:
            row = sub[sub[x] == c]
            v = float(row[y].iloc[0]) if len(row) else np.nan
            vals.append(v)
            lo.append(v - float(row[f"{y}_min"].iloc[0]) if len(row) and f"{y}_min" in row else 0.0)
            hi.append(float(row[f"{y}_max"].iloc[0]) - v if len(row) and f"{y}_max" in row else 0.0)
        pos = np.arange(len(cats)) + (gi - (len(groups) - 1) / 2) * width
        st = _style(str(g if g is not None else cats[0]), gi)
        colors = [st["color"]] * len(cats) if g is not None else [_style(str(c), i)["color"] for i, c in enumerate(cats)]
        ax.bar(pos, vals, width=width, color=colors, label=None if g is None else str(g),
               yerr=[np.nan_to_num(np.maximum(lo, 0)), np.nan_to_num(np.maximum(hi, 0))], capsize=3)
    ax.set_xticks(np.arange(len(cats)))
    ax.set_xticklabels([str(c) for c in cats], rotation=60 if rotate else 0, ha="right" if rotate else "center", fontsize=8 if rotate else 9)
    if hline is not None:
        ax.axhline(hline, color="#999999", lw=0.8, ls="--")
    ax.set_ylabel(ylabel or y)
    ax.grid(axis="y", alpha=0.3)
    if group is not None:
        ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=11)
    _save(fig, path)


def timeseries(
    df: pd.DataFrame,
    path: Union[str, Path],
    *,
    t: str,
    y: str,
    group: str,
    facet: Optional[str] = None,
    xlabel: str = "time (ms)",
    ylabel: str = "",
    title: str = "",
) -> None:
    """Lines of ``y`` against ``t``, one per ``group`` value (one panel per ``facet`` value)."""
    plt = _plt()
    facets: List[Any] = [None] if facet is None else list(dict.fromkeys(df[facet]))
    fig, axes = plt.subplots(1, len(facets), figsize=(4.6 * len(facets), 3.4), squeeze=False)
    for ax, fv in zip(axes[0], facets):
        sub_f = df if fv is None else df[df[facet] == fv]
        for i, (g, sub) in enumerate(sub_f.groupby(group, sort=False)):
            ax.plot(sub[t], sub[y], label=str(g), color=_style(str(g), i)["color"], lw=1.2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel or y)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        if fv is not None:
            ax.set_title(str(fv), fontsize=10)
    if title:
        fig.suptitle(title, fontsize=11)
    _save(fig, path)


def bars_and_series(
    bars_df: pd.DataFrame,
    series: pd.DataFrame,
    path: Union[str, Path],
    *,
    x: str,
    y: str,
    t: str,
    y2: str,
    group: str,
    ylabel: str = "",
    ylabel2: str = "",
    hline: Optional[float] = None,
    hline2: Optional[float] = None,
    log2: bool = False,
    title: str = "",
) -> None:
    """Two panels: bars of ``y`` per ``x`` category (error bars from ``<y>_min`` /
    ``<y>_max``), and lines of ``y2`` against ``t`` in ``series``, one per ``group`` value."""
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [1, 1.6]})
    cats = list(dict.fromkeys(bars_df[x]))
    vals = [float(bars_df[bars_df[x] == c][y].iloc[0]) for c in cats]
    err = [[v - float(bars_df[bars_df[x] == c][f"{y}_min"].iloc[0]) if f"{y}_min" in bars_df else 0.0 for c, v in zip(cats, vals)],
           [float(bars_df[bars_df[x] == c][f"{y}_max"].iloc[0]) - v if f"{y}_max" in bars_df else 0.0 for c, v in zip(cats, vals)]]
    ax.bar(np.arange(len(cats)), vals, color=[_style(str(c), i)["color"] for i, c in enumerate(cats)],
           yerr=np.nan_to_num(np.maximum(err, 0)), capsize=3)
    ax.set_xticks(np.arange(len(cats)))
    ax.set_xticklabels([str(c) for c in cats], fontsize=9)
    ax.set_ylabel(ylabel or y)
    ax.grid(axis="y", alpha=0.3)
    if hline is not None:
        ax.axhline(hline, color="#999999", lw=0.8, ls="--")
    for i, (g, sub) in enumerate(series.groupby(group, sort=False)):
        ax2.plot(sub[t], sub[y2], label=str(g), color=_style(str(g), i)["color"], lw=1.0,
                 ls="-" if i % 2 == 0 or "/" not in str(g) else "--")
    if hline2 is not None:
        ax2.axhline(hline2, color="#999999", lw=0.8, ls="--")
    if log2:
        ax2.set_yscale("log", base=2)
    ax2.set_xlabel("time (ms)")
    ax2.set_ylabel(ylabel2 or y2)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=11)
    _save(fig, path)
