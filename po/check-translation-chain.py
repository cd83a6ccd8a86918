#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Proves the translation chain from po/*.po to what the programs print.

Usage: check-translation-chain.py SOURCE_ROOT BUILD_ROOT APP_ID

For every language in po/LINGUAS:

  1. the build compiled BUILD_ROOT/po/LANG/LC_MESSAGES/tally.mo;
  2. meson installs it to LOCALEDIR/LANG/LC_MESSAGES/GETTEXT_PACKAGE.mo,
     where LOCALEDIR and GETTEXT_PACKAGE are the values compiled into the
     programs (BUILD_ROOT/config.h), and both main() functions bind that
     domain to that folder;
  3. every option description that `tally-cli --help` prints (run in the
     C locale) is found in the catalog with a translation, and the system's
     own gettext(1) (glibc) reads the compiled catalog from a copy of the
     installed layout (TEXTDOMAINDIR) and answers in that language,
     including both plural forms;
  4. the desktop entry and the metainfo built under APP_ID carry the
     language's translations (i18n.merge_file).

The programs themselves look their catalog up under the install prefix, so
rather than installing, the test checks that the build's catalog lands
exactly there. Exits 1 on any problem.
"""

import gettext
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def config_value(config_h, name):
    with open(config_h, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'#define\s+' + name + r'\s+"(.*)"\s*$', line)
            if m:
                return m.group(1)
    return None


def languages(po_dir):
    langs = []
    with open(os.path.join(po_dir, "LINGUAS"), encoding="utf-8") as f:
        for line in f:
            langs.extend(line.split("#", 1)[0].split())
    return langs


def help_descriptions(cli):
    """The option descriptions `tally-cli --help` prints, untranslated."""
    env = dict(os.environ, LC_ALL="C", LANGUAGE="", LANG="C")
    out = subprocess.run([cli, "--help"], capture_output=True, text=True,
                         env=env, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"tally-cli --help exited with {out.returncode}: {out.stderr}")
    descriptions = []
    for line in out.stdout.splitlines():
        # "  --db=PATH                  SQLite database to analyse (…)"
        m = re.match(r"^\s+(?:-\w, )?--[\w-]+(?:=\S+)?\s{2,}(.+)$", line)
        if m and not m.group(1).startswith("Show help"):
            descriptions.append(m.group(1))
    return descriptions


def main(argv):
    if len(argv) != 4:
        print("usage: check-translation-chain.py SOURCE_ROOT BUILD_ROOT APP_ID", file=sys.stderr)
        return 2
    root, build, app_id = argv[1:]
    problems = []

    config_h = os.path.join(build, "config.h")
    localedir = config_value(config_h, "LOCALEDIR")
    domain = config_value(config_h, "GETTEXT_PACKAGE")
    if not localedir or not domain:
        print(f"{config_h} lacks LOCALEDIR or GETTEXT_PACKAGE")
        return 1
    for main_c in ("src/cli/tally-cli.c", "src/ui/main.c"):
        path = os.path.join(root, main_c)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            if not re.search(r"bindtextdomain\s*\(\s*GETTEXT_PACKAGE\s*,\s*LOCALEDIR\s*\)", f.read()):
                problems.append(f"{main_c} does not bind GETTEXT_PACKAGE to LOCALEDIR")

    with open(os.path.join(build, "meson-info", "intro-installed.json"), encoding="utf-8") as f:
        installed = json.load(f)

    cli = os.path.join(build, "src", "cli", "tally-cli")
    descriptions = help_descriptions(cli)
    if len(descriptions) < 5:
        problems.append(f"tally-cli --help printed only {len(descriptions)} option descriptions")

    have_gettext = shutil.which("gettext") is not None
    for lang in languages(os.path.join(root, "po")):
        mo = os.path.join(build, "po", lang, "LC_MESSAGES", domain + ".mo")
        if not os.path.isfile(mo):
            problems.append(f"{mo} was not built")
            continue
        want = os.path.join(localedir, lang, "LC_MESSAGES", domain + ".mo")
        got = installed.get(mo)
        if got != want:
            problems.append(f"{mo} installs to {got}, but the programs look in {want}")

        with open(mo, "rb") as f:
            catalog = gettext.GNUTranslations(f)
        for text in descriptions:
            translated = catalog.gettext(text)
            if translated == text:
                problems.append(f"{lang}: --help text not translated: {text!r}")

        if have_gettext:
            with tempfile.TemporaryDirectory(prefix="tally-locale-") as tmp:
                dest = os.path.join(tmp, lang, "LC_MESSAGES")
                os.makedirs(dest)
                shutil.copy(mo, os.path.join(dest, domain + ".mo"))
                env = dict(os.environ, TEXTDOMAINDIR=tmp, LANGUAGE=lang, LC_ALL="C.UTF-8")
                env.pop("LC_MESSAGES", None)
                probes = [(["gettext", "-d", domain, t], catalog.gettext(t)) for t in descriptions[:3]]
                for n in (1, 2):
                    probes.append((["ngettext", "-d", domain, "%u API call", "%u API calls", str(n)],
                                   catalog.ngettext("%u API call", "%u API calls", n)))
                for cmd, expected in probes:
                    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=10)
                    if out.stdout != expected:
                        problems.append(f"{lang}: {' '.join(cmd[3:])!r} gave {out.stdout!r}, expected {expected!r}")
                    elif out.stdout == cmd[3]:
                        problems.append(f"{lang}: glibc's gettext did not translate {cmd[3]!r}")
                    else:
                        print(f"{lang}: {cmd[3]!r} -> {out.stdout!r}")

        desktop = os.path.join(build, "data", app_id + ".desktop")
        if os.path.isfile(desktop):
            with open(desktop, encoding="utf-8") as f:
                text = f.read()
            for key in ("GenericName", "Comment", "Keywords"):
                if f"\n{key}[{lang}]=" not in text:
                    problems.append(f"{desktop}: no {key}[{lang}]")
        else:
            problems.append(f"{desktop} was not built")
        metainfo = os.path.join(build, "data", app_id + ".metainfo.xml")
        if os.path.isfile(metainfo):
            with open(metainfo, encoding="utf-8") as f:
                text = f.read()
            if f'<summary xml:lang="{lang}">' not in text:
                problems.append(f"{metainfo}: no summary in {lang}")
        else:
            problems.append(f"{metainfo} was not built")

    for problem in problems:
        print(problem)
    if not problems:
        print("ok: catalogs built, installed where the programs look, and answering")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
