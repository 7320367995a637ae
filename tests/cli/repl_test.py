#!/usr/bin/env python3
"""The sluice REPL on a terminal, driven through a pseudo-terminal.

Checks what only a terminal shows: box is the default mode with DuckDB's look
(types, footer), .maxrows is 40 there (the first and last 20 rows), .maxwidth
follows the terminal's width, error lines count from the statement's first
line (not from the session's), the caret lands under the right character after
wide characters, and Tab completes keywords, table names and column names.

usage: repl_test.py path/to/sluice
"""
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import tempfile
import termios
import time

SLUICE = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


class Shell:
    """The REPL on a pty; out collects everything it printed."""

    def __init__(self, cols):
        self.home = tempfile.mkdtemp()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ["HOME"] = self.home
            os.execv(SLUICE, [SLUICE, "--threads", "2"])
        self.resize(cols)
        self.out = b""
        self.pos = 0  # where the next read_until looks from

    def resize(self, cols):
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))

    def read_until(self, needle, timeout=10):
        """Reads until `needle` (bytes) appears after what earlier calls matched; returns
        the text before it and moves past it, or None on timeout or exit."""
        end = time.time() + timeout
        while True:
            at = self.out.find(needle, self.pos)
            if at >= 0:
                before = self.out[self.pos:at]
                self.pos = at + len(needle)
                return before
            if time.time() >= end:
                return None
            r, _, _ = select.select([self.fd], [], [], 0.02)
            if r:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    return None
                self.out += data

    def run(self, line):
        """Types one line once the prompt is back; returns what it printed up to the
        next prompt, with \\r\\n as \\n."""
        time.sleep(0.1)
        self.send(line)
        text = self.read_until(b"sluice> ")
        return None if text is None else text.replace(b"\r\n", b"\n").decode(errors="replace")

    def send(self, text):
        os.write(self.fd, text.encode() if isinstance(text, str) else text)

    def finish(self):
        self.send(b".quit\n")
        end = time.time() + 5
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid != 0:
                return os.waitstatus_to_exitcode(status)
            self.read_until(b"\x00", 0.1)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        return None


def after_echo(text, line):
    """What the shell printed after the echo of the typed line."""
    at = text.find(line)
    return text[at + len(line) + 1:] if at >= 0 else text


# .edit's editor: keeps what it was given, then saves another statement; fails
# while the file `fail` exists.
EDIT_DIR = tempfile.mkdtemp()
with open(os.path.join(EDIT_DIR, "editor.sh"), "w") as f:
    f.write('#!/bin/sh\n[ -e "%s/fail" ] && exit 3\ncp "$1" "%s/seen.sql"\n'
            'printf "SELECT 6 * 7 AS edited;\\n" > "$1"\n' % (EDIT_DIR, EDIT_DIR))
os.chmod(os.path.join(EDIT_DIR, "editor.sh"), 0o755)
os.environ["EDITOR"] = os.path.join(EDIT_DIR, "editor.sh")

sh = Shell(120)
check(sh.read_until(b"sluice> ") is not None, "the REPL starts")

# box is the default on a terminal, with the types and the footer
out = after_echo(sh.run("SELECT 42 AS y, 'x' AS s;\n"), "SELECT 42 AS y, 'x' AS s;")
expected = """┌───────┬─────────┐
│   y   │    s    │
│ int32 │ varchar │
├───────┼─────────┤
│    42 │ x       │
├───────┴─────────┤
│      1 row      │
└─────────────────┘
"""
check(out == expected, "box with types and footer on a terminal:\n" + out)

# .maxrows is 40 on a terminal: rows 0-19, three rows of dots, rows 80-99
out = after_echo(sh.run("SELECT i FROM range(0, 100) t(i);\n"), "SELECT i FROM range(0, 100) t(i);")
lines = out.splitlines()
rows = [ln.strip("│ ") for ln in lines[4:47]]
check(rows == [str(i) for i in range(20)] + ["·"] * 3 + [str(i) for i in range(80, 100)],
      ".maxrows 40 shows the first and last 20 rows:\n" + out)
check("│ 100 rows (40 shown) │" in out, "the footer counts the rows shown:\n" + out)

# .maxwidth follows the terminal: at 30 columns, the middle columns are hidden
sh.resize(30)
out = sh.run("SELECT 1 AS first, 2 AS second, 3 AS third, 4 AS fourth, 5 AS fifth;\n")
check("5 columns (" in out and "│ … │" in out, "a narrow terminal hides columns:\n" + out)
sh.resize(120)

# error lines count within the statement, not from the start of the session
sh.run("SELECT 1;\n")
sh.run("SELECT 2;\n")
sh.send("SELECT\n")
time.sleep(0.2)
out = sh.run("  xx + 1;\n")
check("Error: line 2, column 3: unknown column 'xx'\n    xx + 1;\n    ^\n" in out,
      "a REPL error counts lines in its statement:\n" + out)
out = sh.run("SELECT 3; SELECT\n")
out = sh.run(" 4 +;\n")
check("Error: line 2, column 5: syntax error" in out,
      "the statement's first line is its own, not its buffer's:\n" + out)

# the caret counts characters, and a CJK character takes two terminal columns
out = sh.run("SELECT '東京', xx;\n")
check("Error: line 1, column 14: unknown column 'xx'\n  SELECT '東京', xx;\n                 ^\n" in out,
      "the caret lands under xx after 東京:\n" + out)

# Tab completes keywords (in the case typed), tables and columns
sh.run("CREATE TABLE people (person_name VARCHAR, age INTEGER);\n")
sh.run("INSERT INTO people VALUES ('Ada', 36);\n")
time.sleep(0.1)
sh.send("sel\t")
time.sleep(0.3)
sh.send("person_n\t")
time.sleep(0.3)
sh.send(", ag\t")
time.sleep(0.3)
sh.send("FROM peo\t")
time.sleep(0.3)
out = sh.run(";\n")
# (the line typed was "sel person_n, ag FROM peo;": it runs only once completed)
check("│ Ada         │    36 │" in out and "Error" not in out,
      "Tab completes a keyword, a column and a table:\n" + out)

# .edit: $EDITOR gets the last statement in a file, and what it saved runs
sh.run("SELECT 40 + 2 AS answer;\n")
out = sh.run(".edit\n")
seen = open(os.path.join(EDIT_DIR, "seen.sql")).read()
check(seen == "SELECT 40 + 2 AS answer;\n", ".edit opens the last statement: " + repr(seen))
check("│ edited │" in out and "│     42 │" in out, ".edit runs what the editor saved:\n" + out)
sh.run(".edit\n")
seen = open(os.path.join(EDIT_DIR, "seen.sql")).read()
check(seen == "SELECT 6 * 7 AS edited;\n", "the edited statement is the last one: " + repr(seen))
open(os.path.join(EDIT_DIR, "fail"), "w").close()
out = sh.run(".edit\n")
check("Error: .edit: the editor" in out and "│" not in out,
      "a failing editor runs nothing:\n" + out)

code = sh.finish()
check(code == 1, f"the REPL exits with status 1 after errors (got {code})")

if failures:
    print(sh.out.decode(errors="replace"))
    sys.exit(1)
print("repl_test: all passed")
