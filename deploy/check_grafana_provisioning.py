#!/usr/bin/python3
"""Checks dashboards/provisioning/ against the dashboards it provisions.

The data source file must provide the default data source of the type the
dashboards' `datasource` variable asks for; the dashboard provider must
load the folder the README recipe copies the JSON into, read-only; and the
recipe must install exactly these files. Exits 1 naming what is wrong.
"""
import glob
import json
import os
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DASH = os.path.join(ROOT, "dashboards")


def load(rel):
    with open(os.path.join(DASH, "provisioning", rel)) as f:
        return yaml.safe_load(f)


def problems():
    out = []
    sources = load("datasources/goodput.yaml")
    providers = load("dashboards/goodput.yaml")
    readme = open(os.path.join(DASH, "README.md")).read()
    for doc, name in ((sources, "datasources"), (providers, "dashboards")):
        if doc.get("apiVersion") != 1:
            out.append("%s/goodput.yaml: apiVersion must be 1" % name)
    defaults = [s for s in sources["datasources"] if s.get("isDefault")]
    if len(defaults) != 1:
        out.append("datasources: want exactly one default data source")
    for path in sorted(glob.glob(os.path.join(DASH, "grafana", "*.json"))):
        with open(path) as f:
            board = json.load(f)
        for var in board["templating"]["list"]:
            if var["type"] == "datasource" and defaults and \
                    var["query"] != defaults[0]["type"]:
                out.append("%s: variable %s wants %s, the default is %s" % (
                    os.path.basename(path), var["name"], var["query"],
                    defaults[0]["type"]))
    provider = providers["providers"][0]
    folder = provider["options"]["path"]
    if provider.get("allowUiUpdates") or provider.get("type") != "file":
        out.append("dashboards: want a read-only file provider")
    if "grafana/*.json %s/" % folder not in readme:
        out.append("README.md: the recipe does not copy grafana/*.json to %s"
                   % folder)
    for rel in ("datasources/goodput.yaml", "dashboards/goodput.yaml"):
        if "provisioning/%s" % rel not in readme:
            out.append("README.md: the recipe does not install %s" % rel)
    return out


def main():
    found = problems()
    for p in found:
        print("FAIL: " + p)
    if not found:
        print("grafana provisioning: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
