"""Shared by the peer scripts: command line, cases, statistics, JSON output."""
import argparse
import json
import statistics
import time

CASES = {"p1-tet": ("tet", 1), "p2-tet": ("tet", 2), "q1-hex": ("hex", 1), "q2-hex": ("hex", 2)}


def parse_args(default_threads):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--case", action="append", required=True, help="NAME:N, e.g. p1-tet:100 (n cubes per axis)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=default_threads)
    args = p.parse_args()
    cases = []
    for c in args.case:
        name, n = c.split(":")
        if name not in CASES:
            raise SystemExit(f"unknown case {name} (expected one of {sorted(CASES)})")
        cases.append((name, int(n)))
    return args, cases


def timed(f):
    t = time.perf_counter()
    r = f()
    return time.perf_counter() - t, r


def report(peer, name, n, cells, dofs, threads, total, matrix, load):
    """One JSON line: the median and spread of each part over the repeats."""
    s = lambda v: {"median": statistics.median(v), "min": min(v), "max": max(v)}
    out = {"peer": peer, "case": name, "n": n, "cells": cells, "dofs": dofs, "threads": threads,
           "runs": len(total), "assembly_s": s(total), "matrix_s": s(matrix), "load_s": s(load),
           "samples_s": total, "elements_per_s": cells / statistics.median(total)}
    print(json.dumps(out), flush=True)
