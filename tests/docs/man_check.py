#!/usr/bin/env python3
"""The man pages render without a single warning, and they name what the code accepts.

1. Each page, run through `groff -ww -z -man` (every warning on) and `man -l` (as a reader sees
   it, 80 and 60 columns, every warning on), exits 0 with nothing on stderr.
2. Every option key libsmb3's parser knows (lib/client/options.c), every FUSE and mount(8) option
   smb3fs sorts (fs/opts.c), every smb3 command (cli/main.c's table), every long option of
   smb3 and every option of one of its commands (command_options) appears in the page that
   documents it: an option added to the code without a line in the manual fails here.
usage: man_check.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys

src = sys.argv[1]
man = os.path.join(src, "docs", "man")
pages = {"smb3.1": None, "smb3fs.8": None, "libsmb3.3": None}
failed = 0


def result(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    return p.returncode, p.stderr.decode(errors="replace").strip()


for name in pages:
    path = os.path.join(man, name)
    if not os.path.exists(path):
        result(False, f"{name}: missing")
        continue
    pages[name] = open(path, encoding="utf-8").read()
    rc, err = run(["groff", "-ww", "-z", "-man", path])
    result(rc == 0 and not err, f"groff -ww -z -man {name}" + (f": exit {rc}: {err}" if rc or err else ""))
    for width in ("80", "60"):  # a terminal and a narrow one: no line that cannot be broken or adjusted
        env = dict(os.environ, MANWIDTH=width, LC_ALL="C.UTF-8")
        rc, err = run(["man", "--warnings=all", "-l", path], env)
        what = f"MANWIDTH={width} man --warnings=all -l {name}"
        result(rc == 0 and not err, what + (f": exit {rc}: {err}" if rc or err else ""))


def mentions(page, word):
    """word appears in the page source as a whole word (groff writes '-' as '\\-')."""
    text = pages[page] or ""
    w = re.escape(word).replace(r"\-", r"\\-")
    return re.search(r"(?<![A-Za-z0-9_])" + w + r"(?![A-Za-z0-9_])", text) is not None


def check_all(what, page, words):
    missing = [w for w in words if not mentions(page, w)]
    result(words and not missing, f"{page} names every {what} ({len(words)})" +
           (f": missing {', '.join(missing)}" if missing else "" if words else ": none found in the code"))


opts = open(os.path.join(src, "lib", "client", "options.c"), encoding="utf-8").read()
keys = sorted(set(re.findall(r'strcmp\(k, "([a-z_]+)"\)', opts)))
check_all("option of lib/client/options.c", "smb3fs.8", keys)
check_all("option of lib/client/options.c", "smb3.1", keys)

fsopts = open(os.path.join(src, "fs", "opts.c"), encoding="utf-8").read()
lists = []
for arr in ("fuse_flags", "fuse_keys", "ignored_flags"):
    m = re.search(arr + r"\[\]\s*=\s*\{(.*?)\};", fsopts, re.S)
    lists += re.findall(r'"([^"]+)"', m.group(1)) if m else []
check_all("FUSE/mount(8) option of fs/opts.c", "smb3fs.8", lists)
flags = sorted(set(re.findall(r'strcmp\(s, "(-[a-zA-Z-]+)"\)', fsopts)))
check_all("command-line flag of fs/opts.c", "smb3fs.8", flags)

cli = open(os.path.join(src, "cli", "main.c"), encoding="utf-8").read()
cmds = re.findall(r'\{"([a-z]+)", cmd_[a-z]+,', cli)
missing = [c for c in cmds if not re.search(r'^\.B[IR]? "' + c + ' ', pages["smb3.1"] or "", re.M)]
result(cmds and not missing, f"smb3.1 has an entry for every command ({len(cmds)})" +
       (f": missing {', '.join(missing)}" if missing else ""))
longopts = re.findall(r'\{"([a-z-]+)", (?:no|required)_argument', cli)
check_all("long option of cli/main.c", "smb3.1", ["--" + o for o in longopts])
cmdopts = re.findall(r'\{"[a-z]+", "(--?[a-z-]+)", offsetof', cli)
check_all("command option of cli/main.c (command_options)", "smb3.1", cmdopts)

print(f"{failed} failed")
sys.exit(1 if failed else 0)
