#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dashboard_check.py - check a Grafana dashboard against real metrics.

Usage: dashboard_check.py DASHBOARD.json RULES_OUT.json < exposition

The dashboard must be valid JSON with panels whose every query names only
metric families present in the Prometheus text on stdin (real output of
"nfqd-ctl stats --prometheus"), and must show the families an operator
needs (packets, nfqd's and the kernel's drops, queue depth, rule hits).
Writes every query, its variables replaced, as a Prometheus recording rule
to RULES_OUT.json, so that "promtool check rules" parses the PromQL.
Prints "ok N queries" or the problems; exit 0 / 1.
"""
import json
import re
import sys

NEEDED = {"nfqd_packets_total", "nfqd_dropped_total",
          "nfqd_kernel_queue_dropped_total", "nfqd_kernel_user_dropped_total",
          "nfqd_kernel_queue_length", "nfqd_rule_packets_total"}
VARIABLES = {"$__rate_interval": "1m", "$instance": ".*", "$queue": ".*"}


def panels(items):
    for p in items:
        yield p
        yield from panels(p.get("panels", []))


def queries(dash):
    for p in panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            yield p.get("title", "?"), t.get("expr", "")
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            yield "variable " + v["name"], q.get("query", "")


def main():
    dash = json.load(open(sys.argv[1]))
    families = set(re.findall(r"^# TYPE (\S+) ", sys.stdin.read(), re.M))
    problems, rules, used = [], [], set()
    for title, expr in queries(dash):
        if not expr:
            problems.append("%s: empty query" % title)
            continue
        for name in re.findall(r"\bnfqd_[a-zA-Z0-9_]+\b", expr):
            used.add(name)
            if name not in families:
                problems.append("%s: %s is not a metric nfqd-ctl writes"
                                % (title, name))
        if expr.startswith("label_values("):
            continue
        for var, value in VARIABLES.items():
            expr = expr.replace(var, value)
        if "$" in expr:
            problems.append("%s: unknown variable in %s" % (title, expr))
        rules.append({"record": "nfqd:dashboard_query_%d" % len(rules),
                      "expr": expr})
    for name in sorted(NEEDED - used):
        problems.append("no panel shows %s" % name)
    json.dump({"groups": [{"name": "dashboard", "rules": rules}]},
              open(sys.argv[2], "w"), indent=1)
    if problems:
        print("\n".join(problems))
        return 1
    print("ok %d queries" % len(rules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
