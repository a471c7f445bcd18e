"""What ``bench_peers_judge.py`` prints: its table of rounds, and with ``--scale`` (a judge run
ten times longer than the side-by-side default) the conditions it is held to (see that module's
docstring)."""

from __future__ import annotations

import os

from tests.perf import peers

# --scale: a judge run ten times longer than the side-by-side default, and its conditions
SCALE_N = 30_000
SCALE_BASELINE_N = 3_000
SCALE_CONCURRENCY = (64, 512)
SCALE_OF_IDEAL = 0.93  # at the first concurrency, over the server's request window
SCALE_MEMORY_GROWTH = 1.1  # peak vs the --memory-baseline run, at the first concurrency
SCALE_VS_H2E = 1.5  # at the last concurrency, over the server's request window


def _in_window(row: dict) -> float:
    return row["judgments"] / row["window_s"]


def scale_checks(rows: list[dict], baseline: dict | None, args) -> list[tuple[str, bool]]:
    """``--scale``'s conditions (see the module's docstring): (line, holds) each."""
    first, last = args.concurrency[0], args.concurrency[-1]
    h2r = {
        c: [
            r
            for r in rows
            if r["tool"] == "how2review" and r["concurrency"] == c and r is not baseline
        ]
        for c in (first, last)
    }
    h2e = {
        c: [r for r in rows if r["tool"] == "h2e" and r["concurrency"] == c] for c in (first, last)
    }
    checks = []
    ideal = first / args.latency
    for r in h2r[first]:
        share = _in_window(r) / ideal
        checks.append(
            (
                f"at {first} in flight: {_in_window(r):.1f} judgments/s over the server's window "
                f"= {share:.1%} of ideal {ideal:.0f}/s (≥ {SCALE_OF_IDEAL:.0%})",
                share >= SCALE_OF_IDEAL,
            )
        )
        if baseline is not None:
            growth = r["peak_rss_mb"] / baseline["peak_rss_mb"]
            checks.append(
                (
                    f"at {first}: worker peak {r['peak_rss_mb']:.0f} MB over {r['judgments']:,} "
                    f"judgments = {growth:.2f}× the {baseline['judgments']:,}-judgment run's "
                    f"{baseline['peak_rss_mb']:.0f} MB (≤ {SCALE_MEMORY_GROWTH}×)",
                    growth <= SCALE_MEMORY_GROWTH,
                )
            )
    for r, e in zip(h2r[first], h2e[first], strict=False):
        checks.append(
            (
                f"at {first}: worker peak {r['peak_rss_mb']:.0f} MB vs h2e's {e['peak_rss_mb']:.0f} "
                "MB in the same round (≤ h2e's)",
                r["peak_rss_mb"] <= e["peak_rss_mb"],
            )
        )
    if h2r[last] and h2e[last]:
        mine = sum(map(_in_window, h2r[last])) / len(h2r[last])
        theirs = sum(map(_in_window, h2e[last])) / len(h2e[last])
        checks.append(
            (
                f"at {last} in flight: {mine:.1f} vs h2e's {theirs:.1f} judgments/s over the "
                f"server's window = {mine / theirs:.2f}× (≥ {SCALE_VS_H2E}×)",
                mine / theirs >= SCALE_VS_H2E,
            )
        )
    return checks


def report(rows: list[dict], args, versions: dict, startup: dict | None) -> str:
    out = []
    for i, row in enumerate(rows, 1):
        ideal = row["concurrency"] / args.latency
        per = 1000 * row["cpu_s"] / row["judgments"]
        net = ""
        paid = (startup or {}).get(row["tool"]) if row["tool"] == "h2e" else None
        if paid is not None:
            net = f"{1000 * (row['cpu_s'] - paid['cpu_s']) / row['judgments']:.2f}"
        rate = row["judgments"] / row["wall_s"]
        in_window = row["judgments"] / row["window_s"]
        db = row.get("db_cpu_s")
        out.append(
            [
                i,
                row["tool"],
                row["concurrency"],
                row["judgments"],
                f"{row['wall_s']:.2f}",
                f"{rate:.1f} ({100 * rate / ideal:.0f}%)",
                f"{in_window:.1f} ({100 * in_window / ideal:.1f}%)",
                f"{per:.2f}",
                net or "–",
                f"{1000 * db / row['judgments']:.2f}" if db is not None else "–",
                f"{1000 * row['server_cpu_s'] / row['judgments']:.2f}",
                f"{row['peak_rss_mb']:.0f}",
                f"{row['load'][0]:.2f} → {row['load'][1]:.2f}",
            ]
        )
    head = [
        "#",
        "tool",
        "in flight",
        "judgments",
        "wall s",
        "judgments/s (of ideal)",
        "judgments/s in the server's window (of ideal)",
        "CPU ms/judgment",
        "net of start-up",
        "database CPU ms/judgment",
        "test server CPU ms/request",
        "peak RSS MB",
        "load 1-min",
    ]
    text = peers.table(head, out)
    means = []
    for c in sorted({r["concurrency"] for r in rows}):
        for tool in ("h2e", "how2review"):
            mine = [r for r in rows if r["tool"] == tool and r["concurrency"] == c]
            mine = [r for r in mine if r["judgments"] == args.n]  # the baseline run apart
            if mine:
                rate = sum(r["judgments"] / r["wall_s"] for r in mine) / len(mine)
                cpu = sum(1000 * r["cpu_s"] / r["judgments"] for r in mine) / len(mine)
                means.append(f"{tool} at {c}: {rate:.1f} judgments/s, {cpu:.2f} ms CPU/judgment")
    lines = [
        f"{args.n} judgments a round, {', '.join(map(str, args.concurrency))} in flight, replies "
        f"after {1000 * args.latency:.0f} ms (ideal: in flight / latency); {os.cpu_count()} CPUs",
        "versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
    ]
    if startup and "h2e" in startup:
        lines.append(
            f"h2e start-up (imports, measured apart): {startup['h2e']['cpu_s']:.2f} s CPU, "
            f"{startup['h2e']['peak_rss_mb']:.0f} MB"
        )
    if startup and "how2review" in startup:
        lines.append(
            "how2review start-up (the openai client and its aiohttp transport, measured apart): "
            f"{startup['how2review']['cpu_s']:.2f} s CPU, paid when the worker starts (its main "
            "process, before the pool forks), not by a run"
        )
    lines += ["", text, "", "means: " + "; ".join(means)]
    return "\n".join(lines)
