#!/usr/bin/python3
"""Writes dashboards/rules/recording_*.yml and dashboards/grafana/*.json.

Usage: generate.py [--check]
  --check  write nothing; exit 1 naming each file that differs from what
           would be generated (the ctest dashboards_generated_up_to_date).
"""
import json
import os
import sys

import dashboards_gen
import rules_gen

HERE = os.path.dirname(os.path.abspath(__file__))


def outputs():
    """{relative path: text} of every generated file."""
    files = {os.path.join("rules", name): rules_gen.render(name)
             for name in rules_gen.FILES}
    for name, build in dashboards_gen.DASHBOARDS.items():
        text = json.dumps(build(), indent=2, sort_keys=True) + "\n"
        files[os.path.join("grafana", name + ".json")] = text
    return files


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        sys.stderr.write(__doc__)
        return 2
    stale = []
    for rel, text in outputs().items():
        path = os.path.join(HERE, rel)
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(rel)
        else:
            with open(path, "w") as f:
                f.write(text)
            print("wrote dashboards/" + rel)
    for rel in stale:
        sys.stderr.write("dashboards/%s is stale: run /usr/bin/python3 "
                         "dashboards/generate.py\n" % rel)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
