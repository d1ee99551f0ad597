"""Draws bench/results/latest.png from latest.json (written by zoolock-bench):
rates per contestant for scenarios A, B(2/4/8/32) and C, one panel per
forceSync setting, on a log scale so that kazoo and the 64-lock figures fit;
and latest-bn.png: B(N) acquisitions per second against N = 1…32 processes,
one line per contestant, one panel per forceSync setting.

    .venv/bin/python bench/chart.py [latest.json] [latest.png]
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent
SCENARIOS = ["A", "B2", "B4", "B8", "B32", "C"]
LABELS = {"A": "A: 1 client", "B2": "B: 2 procs", "B4": "B: 4 procs", "B8": "B: 8 procs", "B32": "B: 32 procs",
          "C": "C: 64 locks"}
PROCESSES = [1, 2, 4, 8, 16, 32]


def main():
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results/latest.json"
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else source.with_suffix(".png")
    rows = json.loads(source.read_text())
    contestants = list(dict.fromkeys(r["contestant"] for r in rows))
    syncs = [s for s in (True, False) if any(r["force_sync"] == s for r in rows)]
    bars(rows, contestants, syncs, target)
    lines(rows, contestants, syncs, target.with_name(target.stem + "-bn.png"))


def rate(rows, sync, name, scenario):
    row = next((r for r in rows if r["force_sync"] == sync and r["contestant"] == name
                and r["scenario"] == scenario), None)
    return row["rate"] if row else None


def bars(rows, contestants, syncs, target):
    fig, axes = plt.subplots(len(syncs), 1, figsize=(12, 4.5 * len(syncs)), squeeze=False)
    width = 0.8 / len(contestants)
    for ax, sync in zip(axes[:, 0], syncs):
        for i, name in enumerate(contestants):
            rates = [rate(rows, sync, name, scenario) or 0 for scenario in SCENARIOS]
            xs = [x + (i - (len(contestants) - 1) / 2) * width for x in range(len(SCENARIOS))]
            ax.bar(xs, rates, width, label=name)
        ax.set_yscale("log")
        ax.set_xticks(range(len(SCENARIOS)), [LABELS[s] for s in SCENARIOS])
        ax.set_ylabel("acquisitions per second")
        ax.set_title(f"forceSync={'yes' if sync else 'no'}")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0, 0].legend(ncol=4, fontsize="small", loc="upper left")
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    print(target)


def lines(rows, contestants, syncs, target):
    fig, axes = plt.subplots(1, len(syncs), figsize=(7 * len(syncs), 5), squeeze=False)
    for ax, sync in zip(axes[0], syncs):
        for name in contestants:
            points = [(n, rate(rows, sync, name, f"B{n}")) for n in PROCESSES]
            points = [(n, r) for n, r in points if r]
            if points:
                ax.plot(*zip(*points), marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_xticks(PROCESSES, [str(n) for n in PROCESSES])
        ax.set_xlabel("contending processes N (one session each)")
        ax.set_ylabel("acquisitions per second")
        ax.set_ylim(bottom=0)
        ax.set_title(f"B(N), forceSync={'yes' if sync else 'no'}")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    print(target)


if __name__ == "__main__":
    main()
