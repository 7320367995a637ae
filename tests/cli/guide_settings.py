#!/usr/bin/env python3
"""docs/guide.md's settings table against the engine's settings table.

The table between the markers <!-- settings --> and <!-- /settings --> in docs/guide.md is
generated from `SELECT name, input_type, description FROM sluice_settings()`, so the guide
cannot drift from the settings the engine has:

    python3 tests/cli/guide_settings.py build/sluice docs/guide.md          # check (ctest)
    python3 tests/cli/guide_settings.py build/sluice docs/guide.md --write  # regenerate

The check fails when the table differs from what the engine gives, or when a setting has no
description.
"""
import subprocess
import sys

BEGIN, END = "<!-- settings -->", "<!-- /settings -->"


def engine_table(sluice):
    out = subprocess.run([sluice, "--mode", "tsv", "-c",
                          "SELECT name, input_type, description FROM sluice_settings()"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in out.splitlines() if line]
    missing = [r[0] for r in rows if len(r) < 3 or not r[2].strip()]
    lines = ["| setting | takes | what it does |", "|---|---|---|"]
    for name, kind, doc in rows:
        kind = kind.replace("|", "\\|")
        lines.append(f"| `{name}` | {kind} | {doc.replace('|', chr(92) + '|')} |")
    return "\n".join(lines), missing


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    sluice, path = sys.argv[1], sys.argv[2]
    write = "--write" in sys.argv[3:]
    text = open(path, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        print(f"{path}: no {BEGIN} ... {END} section", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    table, missing = engine_table(sluice)
    if missing:
        print("settings without a description: " + ", ".join(missing), file=sys.stderr)
        return 1
    if write:
        with open(path, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + "\n" + table + "\n" + END + tail)
        return 0
    if current.strip() != table.strip():
        print(f"{path}: the settings table differs from sluice_settings(); regenerate it with\n"
              f"  python3 tests/cli/guide_settings.py {sluice} {path} --write", file=sys.stderr)
        return 1
    print("settings table: in step with sluice_settings()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
