#!/usr/bin/env python3
"""Plots one drift audit written by `lmoracle drift --out DIR` (DIR/<audit>.json).

    drift_plot.py AUDIT.json PREFIX      writes PREFIX.png and PREFIX.svg

One row of panels per audit panel (an op, a base, an offset ...), two columns: the significant
bits of each policy's worst element (-log2 of its largest relative error; higher is better, a
line falling with x is accuracy lost to the swept parameter) and the normwise relative error
sqrt(sum (y - x)^2 / sum x^2) (log scale; lower is better; exact results are drawn at the axis
floor, non-finite ones at the top edge). One line per precision policy, the same colour and
marker in every panel. Max and mean ulps are in the CSV and JSON. Headless: the Agg backend, no
display needed; the SVG carries no date and a fixed hash salt, so reruns give identical files.
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

CEILING = 1e3  # where +inf (a non-finite output) is drawn


def floor_of(audit, panel):
    """Where a normwise relative error of 0 is drawn: a quarter of the panel's smallest positive
    value (1e-17 when there is none)."""
    positive = [
        r["norm_rel"] for r in audit["rows"]
        if r["panel"] == panel and r["norm_rel"] != "inf" and r["norm_rel"] > 0
    ]
    return min(positive) / 4 if positive else 1e-17


def load(path):
    with open(path, encoding="utf-8") as f:
        audit = json.load(f)
    for key in ("audit", "panels", "policies", "rows", "x_label", "x_log"):
        if key not in audit:
            raise ValueError(f"{path}: field '{key}' missing: not an lmoracle drift JSON file")
    return audit


def series(audit, panel, policy, metric):
    points = sorted(
        (r["x"], r[metric]) for r in audit["rows"] if r["panel"] == panel and r["policy"] == policy
    )
    return [p[0] for p in points], [p[1] for p in points]


def plot(audit, prefix):
    panels = audit["panels"]
    policies = [p["name"] for p in audit["policies"]]
    cmap = plt.get_cmap("tab10" if len(policies) <= 10 else "tab20")
    markers = "os^vD<>pPX*h"
    fig, axes = plt.subplots(
        len(panels), 2, figsize=(12, 3.4 * len(panels) + 0.8), squeeze=False, sharex=True
    )
    handles = {}
    for row, panel in enumerate(panels):
        ax_bits, ax_rel = axes[row]
        floor = floor_of(audit, panel)
        for i, policy in enumerate(policies):
            xs, bits = series(audit, panel, policy, "sig_bits")
            if not xs:
                continue
            style = dict(color=cmap(i % cmap.N), marker=markers[i % len(markers)], ms=4, lw=1.4)
            (line,) = ax_bits.plot(xs, bits, label=policy, **style)
            _, rel = series(audit, panel, policy, "norm_rel")
            rel = [CEILING if v == "inf" else min(max(v, floor), CEILING) for v in rel]
            ax_rel.plot(xs, rel, **style)
            handles.setdefault(policy, line)
        ax_bits.set_ylabel("significant bits\n(worst element)")
        ax_rel.set_ylabel("normwise relative error")
        ax_rel.set_yscale("log")
        ax_bits.set_ylim(bottom=0)
        for ax in (ax_bits, ax_rel):
            ax.set_title(panel, fontsize=10)
            ax.grid(True, which="major", alpha=0.35)
            if audit["x_log"]:
                ax.set_xscale("log", base=2)
    for ax in axes[-1]:
        ax.set_xlabel(audit["x_label"])
    quick = " (quick sweep)" if audit.get("quick") else ""
    fig.suptitle(f"lmoracle drift --audit {audit['audit']}{quick}: {audit.get('op', '')}",
                 fontsize=11)
    fig.legend(
        list(handles.values()), list(handles.keys()), loc="lower center",
        ncol=min(5, len(handles)), fontsize=8, frameon=False,
    )
    legend_rows = (len(handles) + 4) // 5
    fig.tight_layout(rect=(0, 0.035 * legend_rows + 0.01, 1, 0.97))
    fig.savefig(prefix + ".png", dpi=100, metadata={"Software": None})
    plt.rcParams["svg.hashsalt"] = "lmoracle-drift"
    fig.savefig(prefix + ".svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


def main(argv):
    if len(argv) != 3:
        print("usage: drift_plot.py AUDIT.json PREFIX", file=sys.stderr)
        return 2
    try:
        audit = load(argv[1])
    except (OSError, ValueError) as e:
        print(f"drift_plot.py: {e}", file=sys.stderr)
        return 2
    plot(audit, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
