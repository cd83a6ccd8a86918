#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks that po/POTFILES.in lists every source file with translatable strings.

Usage: check-potfiles.py SOURCE_ROOT

Looks through src/, data/ and resources/ under SOURCE_ROOT for files that
mark strings for translation:

  * C: _("…"), N_("…"), C_("…", "…"), NC_(…), ngettext (…), g_dngettext (…)
  * GtkBuilder: translatable="yes"
  * the desktop entry and metainfo templates (*.desktop.in,
    *.metainfo.xml.in) and GSettings schemas that name a gettext-domain,
    whose texts are translatable by nature.

Fails (exit 1) when such a file is missing from POTFILES.in, when
POTFILES.in names a file that does not exist (xgettext would stop there),
or when the list is not sorted or repeats a line. A listed file that no
longer has translatable strings is only reported.
"""

import os
import re
import sys

SCANNED_DIRS = ("src", "data", "resources")
SCANNED_SUFFIXES = (".c", ".h", ".ui", ".in", ".xml")

C_MARKS = re.compile(
    r'(?<![A-Za-z0-9_])(?:_|N_|C_|NC_|Q_)\s*\(\s*"'
    r'|(?<![A-Za-z0-9_])(?:g_d?n?gettext|g_dpgettext2?|ngettext|dngettext)\s*\('
)
UI_MARK = re.compile(r'translatable\s*=\s*"(?:yes|true|1)"')
SCHEMA_DOMAIN = re.compile(r'<schemalist[^>]*\bgettext-domain\s*=')


def has_translatable_strings(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return False
    name = os.path.basename(path)
    if name.endswith((".desktop.in", ".metainfo.xml.in", ".appdata.xml.in")):
        return True
    if name.endswith(".gschema.xml"):
        return bool(SCHEMA_DOMAIN.search(text))
    if name.endswith((".c", ".h")):
        return bool(C_MARKS.search(text))
    if name.endswith((".ui", ".xml", ".in")):
        return bool(UI_MARK.search(text))
    return False


def read_potfiles(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            entries.append(line)
    return entries


def main(argv):
    if len(argv) != 2:
        print("usage: check-potfiles.py SOURCE_ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    potfiles = os.path.join(root, "po", "POTFILES.in")
    try:
        listed = read_potfiles(potfiles)
    except OSError as e:
        print(f"cannot read {potfiles}: {e}")
        return 1

    problems = []
    if listed != sorted(listed):
        problems.append("po/POTFILES.in is not sorted (LC_ALL=C sort)")
    if len(set(listed)) != len(listed):
        dups = sorted({e for e in listed if listed.count(e) > 1})
        problems.append("po/POTFILES.in repeats: " + ", ".join(dups))
    for entry in listed:
        if not os.path.isfile(os.path.join(root, entry)):
            problems.append(f"po/POTFILES.in names {entry}, which does not exist")

    found = []
    for top in SCANNED_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SCANNED_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                if has_translatable_strings(path):
                    found.append(os.path.relpath(path, root).replace(os.sep, "/"))

    listed_set = set(listed)
    for rel in found:
        if rel not in listed_set:
            problems.append(f"{rel} has translatable strings but is missing from po/POTFILES.in")
    for entry in listed:
        if entry not in found and os.path.isfile(os.path.join(root, entry)):
            print(f"note: {entry} is listed but has no translatable strings any more")

    for problem in problems:
        print(problem)
    if not problems:
        print(f"ok: {len(found)} files with translatable strings, all listed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
