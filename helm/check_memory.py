#!/usr/bin/env python3
"""Checks that every role's memory limit in a rendered chart holds what the role needs at the
platform's limits with the chart's budgets (`prover limits --local`, issue 31 item 6).

Usage: check_memory.py RENDERED.yaml PROVER_BINARY
Reads PROVER_CACHE_BYTES, PROVER_CIRCUIT_BYTES and PROVER_REQUEST_BUDGET_BYTES from the rendered ConfigMap, asks the binary
what each role needs with those budgets, and compares each Deployment's memory limit (the
operator's excepted: it serves no role). Run by scripts/test.d/55-limits.sh.
"""
import json
import re
import subprocess
import sys

import yaml

UNITS = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(q):
    m = re.fullmatch(r"(\d+)([kMGT]i?|)", str(q))
    if not m:
        raise SystemExit(f"cannot read the memory quantity {q!r}")
    return int(m.group(1)) * UNITS[m.group(2)]


def main():
    path, prover = sys.argv[1], sys.argv[2]
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    config = next(d for d in docs if d["kind"] == "ConfigMap" and "PROVER_CACHE_BYTES" in d.get("data", {}))["data"]
    out = subprocess.run(
        [prover, "limits", "--local", "--json", "--cache-bytes", config["PROVER_CACHE_BYTES"],
         "--circuit-bytes", config["PROVER_CIRCUIT_BYTES"],
         "--request-budget-bytes", config["PROVER_REQUEST_BUDGET_BYTES"]],
        check=True, capture_output=True, text=True).stdout
    need = {r["role"]: r for r in json.loads(out)["memory"]}
    problems, checked = [], 0
    for d in docs:
        if d["kind"] != "Deployment" or d["metadata"]["name"].endswith("-operator"):
            continue
        c = d["spec"]["template"]["spec"]["containers"][0]
        role = c["args"][1]
        limit = c.get("resources", {}).get("limits", {}).get("memory")
        if limit is None:
            problems.append(f"{d['metadata']['name']}: no memory limit")
            continue
        want = need[role]["bytes"]
        checked += 1
        if quantity(limit) < want:
            parts = "; ".join(f"{p['description']}: {p['bytes'] >> 20} MiB" for p in need[role]["parts"])
            problems.append(f"{d['metadata']['name']} ({role}): memory limit {limit} under the {want >> 20} MiB it needs ({parts})")
    if checked == 0:
        problems.append("no role Deployment found")
    for p in problems:
        print(f"FAILED: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"{checked} Deployments' memory limits hold their role's need")


if __name__ == "__main__":
    main()
