#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""prom_check.py - check Prometheus text exposition (format 0.0.4) on stdin.

A small strict checker so the test needs nothing but python3: every sample
belongs to a family announced by # HELP and # TYPE before it, names and
labels are well-formed, values are numbers, no family appears twice.
When the prometheus_client package is importable its parser must accept
the text too. Prints "ok N samples" or the first problem; exit 0 / 1.
Optional arguments: metric names that must be present.
"""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(\{(?:%s)(?:,(?:%s))*,?\})? "
                    r"([-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
                    r"|NaN|[-+]?Inf))( -?[0-9]+)?$" % (NAME, LABEL, LABEL))
HELP = re.compile(r"^# HELP (%s) .+$" % NAME)
TYPE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$"
                  % NAME)


def check(text):
    helps, types, seen_done, names = set(), {}, set(), set()
    current, samples = None, 0
    if text and not text.endswith("\n"):
        return "no final newline"
    for no, line in enumerate(text.splitlines(), 1):
        m = HELP.match(line)
        if m:
            if m.group(1) in helps:
                return "line %d: second HELP for %s" % (no, m.group(1))
            helps.add(m.group(1))
            continue
        m = TYPE.match(line)
        if m:
            name = m.group(1)
            if name in types:
                return "line %d: second TYPE for %s" % (no, name)
            if current:
                seen_done.add(current)
            types[name], current = m.group(2), name
            continue
        if line.startswith("#"):
            return "line %d: bad comment line: %s" % (no, line)
        m = SAMPLE.match(line)
        if not m:
            return "line %d: bad sample: %s" % (no, line)
        name = m.group(1)
        if name != current or name in seen_done:
            return "line %d: %s outside its family block" % (no, name)
        if name not in helps:
            return "line %d: %s has no HELP" % (no, name)
        if types[name] == "counter" and float(m.group(3)) < 0:
            return "line %d: negative counter" % no
        names.add(name)
        samples += 1
    for want in sys.argv[1:]:
        if want not in names:
            return "metric %s missing" % want
    return None


def check_with_client(text):
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        return None
    try:
        n = sum(len(f.samples) for f in text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and friends
        return "prometheus_client: %r" % (e,)
    return None if n else "prometheus_client: no samples"


def main():
    text = sys.stdin.read()
    err = check(text) or check_with_client(text)
    if err:
        print("prometheus text invalid: " + err)
        return 1
    print("ok %d lines" % len(text.splitlines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
