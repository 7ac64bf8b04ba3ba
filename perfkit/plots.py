"""The matplotlib figures the notebooks share."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from perfkit import stats
from perfkit.storages import colour_of, reads_remote


def query_times(frame: pd.DataFrame, storages=("hdfs", "s3")):
    """Median wall time per query and storage, one panel per engine; whiskers span min..max and
    dots show every measured run, so the spread is visible next to the medians."""
    measured = frame[(frame["phase"] == "measured") & frame["ok"].astype(bool)]
    engines = sorted(measured["subject"].unique())
    fig, axes = plt.subplots(1, max(len(engines), 1), figsize=(6 * max(len(engines), 1), 4), squeeze=False)
    width = 0.8 / len(storages)
    for ax, engine in zip(axes[0], engines):
        runs = measured[measured["subject"] == engine]
        cases = sorted(runs["case"].unique())
        x = np.arange(len(cases))
        for i, where in enumerate(storages):
            groups = [runs.loc[(runs["case"] == c) & (runs["storage"] == where), "wall_s"].to_numpy() for c in cases]
            med = np.array([np.median(g) if len(g) else np.nan for g in groups])
            low = np.array([med[j] - g.min() if len(g) else 0 for j, g in enumerate(groups)])
            high = np.array([g.max() - med[j] if len(g) else 0 for j, g in enumerate(groups)])
            pos = x + (i - (len(storages) - 1) / 2) * width
            ax.bar(pos, med, width, yerr=[low, high], capsize=3, label=where.upper(),
                   color=colour_of(where), alpha=0.85)
            for p, g in zip(pos, groups):
                ax.scatter(np.full(len(g), p), g, s=8, color="black", zorder=3)
        ax.set_xticks(x, cases)
        ax.set_title(f"{engine}: median wall time (whiskers: min–max)")
        ax.set_ylabel("seconds")
        ax.legend()
    fig.tight_layout()
    return fig


def speedups(comparison: pd.DataFrame, baseline: str = "hdfs"):
    """The ratio each verdict judged (other storage ÷ baseline: the typical round's, or the medians') with its
    confidence interval; 1 means no difference."""
    c = comparison.reset_index(drop=True)
    several = "storage" in c and c["storage"].nunique() > 1  # more than two storages: say which one each row is
    labels = [f"{s} {q}" + (f" {w}" if several else "") for s, q, w in
              zip(c["subject"], c["case"], c["storage"] if "storage" in c else [""] * len(c))]
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(c) + 1.5))
    y = np.arange(len(c))
    err = np.array([c["speedup"] - c["ci_low"], c["ci_high"] - c["speedup"]]).clip(min=0)
    ax.errorbar(c["speedup"], y, xerr=np.nan_to_num(err), fmt="o", capsize=3)
    ax.axvline(1, color="grey", linestyle="--")
    ax.set_yticks(y, labels)
    others = sorted(set(c["storage"])) if "storage" in c else ["s3"]
    base = baseline.upper()
    other = others[0].upper() if len(others) == 1 else "storage"
    ax.set_xlabel(f"{other} time ÷ {base} time ({stats.judged_words(c)}, with its CI); > 1: {base} faster")
    fig.tight_layout()
    return fig


def s3_distance(samples: pd.DataFrame):
    """Per engine: mean seconds per query against the round trip to S3 (left) and against each S3 connection's
    bandwidth (right, log scale); S3 solid, HDFS (local: the flat reference) dashed; dots are every measured run."""
    engines = sorted(samples["subject"].unique())
    fig, axes = plt.subplots(max(len(engines), 1), 2, figsize=(12, 4 * max(len(engines), 1)), squeeze=False)
    for row, engine in zip(axes, engines):
        runs = samples[samples["subject"] == engine]
        for ax, axis, limited in ((row[0], "rtt_ms", False), (row[1], "per_connection_mb_s", True)):
            part = runs[runs["per_connection_mb_s"].notna() == limited]
            for (query, where), group in part.groupby(["case", "storage"], sort=True):
                means = group.groupby(axis)["wall_s"].mean()
                colour = plt.cm.tab10(sorted(part["case"].unique()).index(query) % 10)
                ax.plot(means.index, means.values, "-" if reads_remote(where) else "--", marker="o", color=colour,
                        label=f"{query} {where.upper()}")
                ax.scatter(group[axis], group["wall_s"], s=6, color=colour, alpha=0.5)
            if limited:
                ax.set_xscale("log")
                ax.invert_xaxis()  # further right: less bandwidth, as further right is more round trip on the left
            ax.set_xlabel("round trip to S3, ms" if not limited else "MB/s per S3 connection (round trip 0 ms)")
            ax.set_ylabel("seconds")
            ax.set_title(f"{engine}: query time against the " + ("round trip" if not limited else "bandwidth"))
        row[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def transfer_rates(summary: pd.DataFrame):
    """MB/s of each method at its best concurrency, fastest on top."""
    best = (summary.dropna(subset=["MB/s"]).sort_values("MB/s").groupby("method", sort=False).tail(1))
    labels = [f"{m} ({c} at once)" if c > 1 else m for m, c in zip(best["method"], best["concurrency"])]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(best) + 1.2))
    ax.barh(labels, best["MB/s"], color="#2ca02c")
    for y, v in enumerate(best["MB/s"]):
        ax.text(v, y, f" {v:.0f}", va="center")
    ax.set_xlabel("MB/s (bytes copied ÷ median duration)")
    ax.set_title("S3 → HDFS copy rate, best concurrency per method")
    fig.tight_layout()
    return fig


def rate_vs_concurrency(summary: pd.DataFrame):
    """MB/s against concurrency for the methods that have more than one level."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, group in summary.dropna(subset=["MB/s"]).groupby("method"):
        if group["concurrency"].nunique() > 1:
            g = group.sort_values("concurrency")
            ax.plot(g["concurrency"], g["MB/s"], marker="o", label=method)
    ax.set_xlabel("concurrency (processes, requests or maps at once)")
    ax.set_ylabel("MB/s")
    ax.set_title("Copy rate against concurrency")
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    fig.tight_layout()
    return fig


NO_MEASUREMENTS = "no measurements in this run"


def _metric_rows(metrics: pd.DataFrame, names) -> pd.DataFrame:
    """The rows of these metrics; none when the frame is empty or column-less (a run that measured nothing)."""
    if "metric" not in metrics.columns:
        return pd.DataFrame(columns=["volume", "metric", "timestamp", "value"])
    return metrics[metrics["metric"].isin(names)]


def measured_throughput(metrics: pd.DataFrame, title: str):
    """Measured read and write MiB/s over time, one line per volume and direction; an empty axis saying so
    when the run measured nothing (e.g. run_testdfsio=false on the lab)."""
    fig, ax = plt.subplots(figsize=(8, 3.5))
    rows = _metric_rows(metrics, ["ReadThroughput", "WriteThroughput"])
    for (volume, metric), g in rows.groupby(["volume", "metric"]):
        ax.plot(g["timestamp"], g["value"], label=f"{volume} {metric.replace('Throughput', '').lower()}")
    ax.set_ylabel("MiB/s")
    ax.set_title(f"MEASURED: {title}")
    if len(rows):
        ax.legend(fontsize=8)
        fig.autofmt_xdate()
    else:
        ax.text(0.5, 0.5, NO_MEASUREMENTS, transform=ax.transAxes, ha="center", va="center", color="grey")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    return fig


def measured_burst_balance(metrics: pd.DataFrame):
    """BurstBalance per volume over time, or None when the frame has none (a local disk, or nothing measured)."""
    rows = _metric_rows(metrics, ["BurstBalance"])
    if rows.empty:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for volume, g in rows.groupby("volume"):
        ax.plot(g["timestamp"], g["value"], label=volume)
    ax.set_ylabel("BurstBalance (%)")
    ax.set_ylim(0, 105)
    ax.set_title("MEASURED: BurstBalance per volume (CloudWatch)")
    ax.legend(fontsize=8)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def modelled_st1(series: pd.DataFrame):
    """MODELLED: one volume's delivered MiB/s and BurstBalance per configuration over the workload."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for label, g in series.groupby("configuration", sort=False):
        minutes = g["seconds"] / 60
        top.plot(minutes, g["delivered_mib_s"], label=label)
        bottom.plot(minutes, g["burst_balance_pct"], label=label)
    top.set_ylabel("MiB/s per volume")
    top.set_title("MODELLED (st1 model): throughput per volume while writing, then reading the workload")
    bottom.set_ylabel("BurstBalance (%)")
    bottom.set_ylim(0, 105)
    bottom.set_xlabel("minutes")
    top.legend()
    fig.tight_layout()
    return fig


def read_throughput(table: pd.DataFrame):
    """Aggregate MB/s per access method, one panel per test (protocol)."""
    tests = list(dict.fromkeys(table["test"]))
    fig, axes = plt.subplots(1, len(tests), figsize=(6 * len(tests), 0.45 * table["access"].nunique() + 1.6),
                             squeeze=False)
    for ax, test in zip(axes[0], tests):
        rows = table[(table["test"] == test)].dropna(subset=["MB/s"]).sort_values("MB/s")
        colours = ["#1f77b4" if "(hdfs)" in a else "#d62728" for a in rows["access"]]
        ax.barh(rows["access"], rows["MB/s"], color=colours)
        for y, v in enumerate(rows["MB/s"]):
            ax.text(v, y, f" {v:.0f}", va="center")
        ax.set_title(f"{test}: aggregate MB/s (red NFS, blue HDFS)")
        ax.set_xlabel("MB/s = bytes / (last end - first start)")
    fig.tight_layout()
    return fig


def job_completion(jobs: pd.DataFrame):
    """Fraction of jobs done against seconds from the first start, per method; one panel per test."""
    tests = list(dict.fromkeys(jobs["case"]))
    fig, axes = plt.subplots(1, len(tests), figsize=(6 * len(tests), 4), squeeze=False)
    for ax, test in zip(axes[0], tests):
        for method, g in jobs[(jobs["case"] == test) & jobs["ok"].astype(bool)].groupby("subject"):
            start, end = (g[f"{key} (s)"] if f"{key} (s)" in g else g[key] for key in ("start", "end"))
            done = np.sort(end - start.min())
            ax.step(done, np.arange(1, len(done) + 1) / len(done), where="post", label=method)
        ax.set_title(f"{test}: when the jobs finished")
        ax.set_xlabel("seconds from the first start")
        ax.set_ylabel("fraction of jobs done")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def matrix_heatmap(wide: pd.DataFrame, title: str = "median seconds per query and cell"):
    """Queries down, (engine, storage) cells across; colour on a log scale (times span orders of magnitude),
    each cell labelled with its median; a blank cell failed or is unsupported."""
    from matplotlib.colors import LogNorm

    values = wide.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(1.3 * len(wide.columns) + 2.5, 0.35 * len(wide) + 1.8))
    finite = values[np.isfinite(values) & (values > 0)]
    norm = LogNorm(vmin=finite.min(), vmax=finite.max()) if len(finite) and finite.min() < finite.max() else None
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis_r", norm=norm, aspect="auto")
    for (i, j), value in np.ndenumerate(values):
        text = f"{value:.2f}" if np.isfinite(value) else "failed"
        colour = "white" if np.isfinite(value) and norm and norm(value) > 0.6 else "black"
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color=colour)
    ax.set_xticks(range(len(wide.columns)), wide.columns, rotation=30, ha="right")
    ax.set_yticks(range(len(wide)), wide.index)
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="seconds (log scale)")
    fig.tight_layout()
    return fig


def ranking(table: pd.DataFrame):
    """Cells best to worst by their geometric mean over the queries every cell completed."""
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(table) + 1.5))
    y = np.arange(len(table))[::-1]
    colours = [colour_of(s) or "grey" for s in table["storage"]]
    ax.barh(y, table["geomean (s)"], color=colours)
    ax.set_yticks(y, table["cell"])
    best = table["× best"] if "× best" in table else table["x best"]  # the matrix's column, by either name
    for yi, value, times in zip(y, table["geomean (s)"], best):
        if value == value:
            ax.text(value, yi, f" {value:.3g} s ({times:.2f}× best)", va="center", fontsize=8)
    ax.set_xlabel("geometric mean of median seconds over the queries every cell completed")
    fig.tight_layout()
    return fig


VERDICT_COLOURS = {"faster": "#2ca02c", "slower": "#d62728"}  # anything else ("no change ...") is grey


def compare_ratios(table: pd.DataFrame, factor: float = 1.10):
    """B ÷ A median time per case on a log axis (0.5 and 2 equally far from 1), the noise band [1/factor, factor]
    shaded, each dot coloured by its verdict; cases without a ratio (not compared) are left out."""
    from matplotlib.ticker import NullFormatter

    rows = table.dropna(subset=["ratio"]).reset_index(drop=True)
    several = rows["experiment"].nunique() > 1 if len(rows) else False
    labels = [" ".join(([e] if several else []) + [s, w, c])
              for e, s, w, c in zip(rows["experiment"], rows["subject"], rows["storage"], rows["case"])]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(rows) + 1.6))
    y = np.arange(len(rows))[::-1]
    ax.axvspan(1 / factor, factor, color="grey", alpha=0.15, label=f"noise band (factor {factor:g})")
    ax.axvline(1, color="grey", linestyle="--", linewidth=1)
    for verdict in dict.fromkeys(rows["verdict"]):
        mask = (rows["verdict"] == verdict).to_numpy()
        colour = VERDICT_COLOURS.get(verdict, "grey")
        # x: not comparable, its ratio means nothing; hollow: outside the band but not shown beyond noise
        style = ({"marker": "x", "color": colour} if verdict.startswith("not") else
                 {"facecolors": "none", "edgecolors": colour} if "(" in verdict else {"color": colour})
        ax.scatter(rows["ratio"][mask], y[mask], label=verdict, zorder=3, **style)
    ax.set_xscale("log")
    if len(rows):  # the band always in view, and at least 0.5x..2x so small changes do not look huge
        low, high = min(rows["ratio"].min(), 0.5), max(rows["ratio"].max(), 2)
        ax.set_xlim(low / 1.2, high * 1.2)
        ticks = [2.0 ** k for k in range(-8, 9) if low / 1.2 <= 2.0 ** k <= high * 1.2]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])  # 0.5, 1, 2 rather than powers of ten
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(y, labels)
    ax.set_xlabel("median B ÷ median A (log scale); above 1: B slower")
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)  # above: no dot hidden
    fig.tight_layout()
    return fig


def cache_tries(table: pd.DataFrame):
    """Median seconds per query: S3 read directly, then each tier's cold, warm and hot tries (the tries table)."""
    rows = table.reset_index(drop=True)
    labels = [f"{e} {q}\n{t}" for e, q, t in zip(rows["engine"], rows["query"], rows["tier"])]
    bars = [("S3 (s)", "S3 directly", "#7f7f7f"), ("cold (s)", "cold", "#1f77b4"),
            ("warm (s)", "warm", "#ff7f0e"), ("hot (s)", "hot", "#2ca02c")]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows) + 2), 4))
    x, width = np.arange(len(rows)), 0.2
    for i, (column, name, color) in enumerate(bars):
        ax.bar(x + (i - 1.5) * width, rows[column].astype(float), width, label=name, color=color)
    ax.set_xticks(x, labels)
    ax.set_ylabel("median seconds")
    ax.set_title("S3 directly against each cache tier, cold (after emptying), warm, hot")
    ax.legend()
    fig.tight_layout()
    return fig


def tier_payoff(samples: pd.DataFrame):
    """Hot seconds against S3's round trip, one panel per engine and query (its MB read in the title): S3 read
    directly and each tier, the median at each distance joined by a line, every run a dot."""
    panels = list(samples.groupby(["engine", "query"], sort=True)) if len(samples) else []
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(4.2 * max(1, len(panels)), 3.6), squeeze=False)
    for ax, ((engine, query), group) in zip(axes[0], panels):
        for where, runs in group.groupby("storage", sort=False):
            medians = runs.groupby("rtt_ms")["wall_s"].median()
            line, = ax.plot(medians.index, medians.values, marker="o", label=where)
            ax.scatter(runs["rtt_ms"], runs["wall_s"], s=10, alpha=0.4, color=line.get_color())
        mb = group["mb_read"].median()
        ax.set_title(f"{engine} {query}" + (f" ({mb:.2g} MB read)" if mb == mb else ""))  # no "(nan MB read)"
        ax.set_xlabel("S3 round trip (ms)")
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("hot seconds")
    axes[0][0].legend()
    fig.suptitle("Where a hot tier beats S3: time against S3's distance")
    fig.tight_layout()
    return fig


def copy_tries(table: pd.DataFrame):
    """The microbenchmark: median seconds of each reader's cold, warm and hot copies, MB/s on each bar."""
    fig, ax = plt.subplots(figsize=(7, 4))
    readers = list(dict.fromkeys(table["reader"]))
    tries = list(dict.fromkeys(table["try"]))
    width = 0.8 / max(1, len(readers))
    x = np.arange(len(tries))
    for i, reader in enumerate(readers):
        rows = table[table["reader"] == reader].set_index("try").reindex(tries)
        bars = ax.bar(x + (i - (len(readers) - 1) / 2) * width, rows["seconds"].astype(float), width, label=reader)
        ax.bar_label(bars, labels=[f"{v:.0f} MB/s" if v == v else "" for v in rows["MB/s"].astype(float)],
                     fontsize=8)
    ax.set_xticks(x, tries)
    ax.set_ylabel("median seconds (tool start-up included)")
    ax.set_title("Copying a prefix to local disk: S3 directly against Alluxio")
    ax.legend()
    fig.tight_layout()
    return fig


def time_vs_requests(runs: pd.DataFrame):
    """Each measured run's wall time against the S3 requests it made (the server's count, else the engine's), one
    panel per engine, a colour per storage: a query that asks S3 for much more than another shows at the right."""
    from perfkit.accounting.counters import S3_REQUESTS
    from perfkit.accounting.table import counted

    engines = sorted(runs["engine"].unique()) if len(runs) else []
    fig, axes = plt.subplots(1, max(len(engines), 1), figsize=(6 * max(len(engines), 1), 4), squeeze=False)
    for ax, engine in zip(axes[0], engines):
        mine = runs[runs["engine"] == engine]
        for where, group in mine.groupby("storage"):
            requests = counted(group, S3_REQUESTS)
            ax.scatter(requests, group["wall_s"], s=18, label=where, color=colour_of(where), alpha=0.8)
        ax.set_title(f"{engine}: time against S3 requests per run")
        ax.set_xlabel("S3 requests (GET, HEAD, LIST, PUT, ...)")
        ax.set_ylabel("seconds")
        ax.legend()
    fig.tight_layout()
    return fig

