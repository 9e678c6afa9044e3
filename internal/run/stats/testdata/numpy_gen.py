#!/usr/bin/env python3
"""Writes numpy.json: fixed inputs and what numpy computes for them, the
reference TestAgainstNumpy holds stats' Percentile, Median, Mean and Std to
bit for bit. Regenerate (python3 numpy_gen.py > numpy.json) only to add
cases; the inputs are seeded and must stay as they are.

vllm bench serve calls np.mean, np.std (ddof=0), np.median and
np.percentile(x, p) with the default method "linear"."""
import json
import numpy as np

rng = np.random.default_rng(20261202)
cases = []
sizes = [1, 2, 3, 4, 5, 7, 8, 9, 10, 16, 99, 100, 101, 127, 128, 129, 257, 1000, 1001, 2500]
for n in sizes:
    # latency-like values in ms: lognormal around 50 ms, rounded to ns
    x = np.round(rng.lognormal(mean=np.log(50), sigma=0.6, size=n), 6)
    cases.append(x)
cases.append(np.array([5.0] * 13))                         # all equal
cases.append(np.array([0.1, 0.2, 0.3, 1e9, -1e9, 0.7]))     # wide range, negatives
pcts = [0, 1, 25, 50, 75, 90, 95, 99, 99.9, 100]
out = []
for x in cases:
    out.append({
        "values": [float(v).hex() for v in x],
        "mean": float(np.mean(x)).hex(),
        "std": float(np.std(x)).hex(),
        "median": float(np.median(x)).hex(),
        "percentiles": {str(p): float(np.percentile(x, p)).hex() for p in pcts},
    })
print(json.dumps({"numpy": np.__version__, "cases": out}, indent=1))
