#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks that every translation in po/LINGUAS is complete and well-formed.

Usage: check-translations.py SOURCE_ROOT

For each language:

  1. `msgfmt --check --statistics` must accept LANG.po and report neither
     fuzzy nor untranslated messages (format specifiers, plural forms and
     the header are checked by msgfmt);
  2. a template extracted afresh from the files in POTFILES.in (with the
     keywords of meson's "glib" preset) must be covered: `msgcmp` fails
     when a string of the current sources has no translation in LANG.po,
     so a new or changed string cannot slip by untranslated.

Exits 1 on any problem, naming it.
"""

import os
import re
import subprocess
import sys
import tempfile

# The keywords of meson's i18n "glib" preset (po/meson.build uses it).
XGETTEXT_ARGS = [
    "--from-code=UTF-8",
    "--keyword=_",
    "--keyword=N_",
    "--keyword=C_:1c,2",
    "--keyword=NC_:1c,2",
    "--keyword=g_dcgettext:2",
    "--keyword=g_dngettext:2,3",
    "--keyword=g_dpgettext2:2c,3",
]

STATS = re.compile(
    r"(?P<translated>\d+) translated messages?"
    r"(?:, (?P<fuzzy>\d+) fuzzy translations?)?"
    r"(?:, (?P<untranslated>\d+) untranslated messages?)?"
)


def languages(po_dir):
    langs = []
    with open(os.path.join(po_dir, "LINGUAS"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0]
            langs.extend(line.split())
    return langs


def main(argv):
    if len(argv) != 2:
        print("usage: check-translations.py SOURCE_ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    po_dir = os.path.join(root, "po")
    problems = []
    langs = languages(po_dir)
    if not langs:
        print("po/LINGUAS names no language")
        return 1

    with tempfile.TemporaryDirectory(prefix="tally-po-") as tmp:
        template = os.path.join(tmp, "tally.pot")
        extract = subprocess.run(
            ["xgettext", "--files-from=" + os.path.join(po_dir, "POTFILES.in"),
             "--directory=" + root, "--output=" + template] + XGETTEXT_ARGS,
            capture_output=True, text=True)
        if extract.returncode != 0:
            print("xgettext failed:\n" + extract.stderr)
            return 1

        for lang in langs:
            po = os.path.join(po_dir, lang + ".po")
            if not os.path.isfile(po):
                problems.append(f"po/LINGUAS names {lang}, but po/{lang}.po does not exist")
                continue
            check = subprocess.run(
                ["msgfmt", "--check", "--statistics", "--output-file=" + os.devnull, po],
                capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
            report = check.stderr.strip()
            print(f"{lang}: {report}")
            if check.returncode != 0:
                problems.append(f"po/{lang}.po: msgfmt --check failed")
            m = STATS.search(report)
            if m is None:
                problems.append(f"po/{lang}.po: cannot read msgfmt's statistics")
            else:
                if int(m.group("fuzzy") or 0):
                    problems.append(f"po/{lang}.po: {m.group('fuzzy')} fuzzy messages")
                if int(m.group("untranslated") or 0):
                    problems.append(f"po/{lang}.po: {m.group('untranslated')} untranslated messages")

            cover = subprocess.run(["msgcmp", po, template],
                                   capture_output=True, text=True,
                                   env=dict(os.environ, LC_ALL="C"))
            if cover.returncode != 0:
                problems.append(f"po/{lang}.po does not cover the current sources "
                                f"(run `meson compile -C BUILD tally-update-po`, then translate):\n"
                                + cover.stderr.strip())

    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
