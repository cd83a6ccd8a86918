#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks the structure of Tally's Flatpak manifests (flatpak/*.json).

Usage: check-flatpak-manifest.py MANIFEST...

A manifest whose file name contains ".Devel." is checked as the development
variant (application id io.github.tallyapp.Tally.Devel, -Ddevelopment=true);
any other as the stable one. Prints one line per problem and exits 1 when
there is any, 0 otherwise. Uses the standard library only, so it runs
without flatpak-builder or the GNOME runtime.
"""

import json
import re
import sys

APP_ID = "io.github.tallyapp.Tally"
FINISH_ARGS = {
    "--share=network",
    "--share=ipc",
    "--socket=wayland",
    "--socket=fallback-x11",
    "--device=dri",
}
SHA256 = re.compile(r"^[0-9a-f]{64}$")
# Source types that fetch something and so must be pinned by a checksum.
DOWNLOADED = {"archive", "file"}
# libpq (docs/postgresql.md, "Flatpak"): the GNOME runtime does not ship
# it, so a module builds the client library from PostgreSQL's own release
# archive, pinned to one version.
LIBPQ_URL = re.compile(
    r"^https://ftp\.postgresql\.org/pub/source/v(?P<v>[0-9]+\.[0-9]+)/postgresql-(?P=v)\.tar\.bz2$")


def check_sources(where, sources, problems):
    if not isinstance(sources, list) or not sources:
        problems.append(f"{where}: 'sources' must be a non-empty list")
        return
    for i, source in enumerate(sources):
        here = f"{where}.sources[{i}]"
        if not isinstance(source, dict):
            problems.append(f"{here}: expected an object")
            continue
        kind = source.get("type")
        if kind in DOWNLOADED:
            url = source.get("url")
            if not isinstance(url, str) or not url.startswith("https://"):
                problems.append(f"{here}: an {kind} source needs an https 'url'")
            sha = source.get("sha256")
            if not isinstance(sha, str) or not SHA256.match(sha):
                problems.append(f"{here}: 'sha256' must be 64 lower-case hex digits, got {sha!r}")
        elif kind == "git":
            if not isinstance(source.get("commit"), str):
                problems.append(f"{here}: a git source must be pinned to a 'commit'")
        elif kind not in ("dir", "patch", "shell"):
            problems.append(f"{here}: unexpected source type {kind!r}")


def check_module(where, module, problems):
    if not isinstance(module, dict):
        problems.append(f"{where}: expected an object (modules are written inline)")
        return None
    name = module.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}: 'name' missing")
    check_sources(f"{where} ({name})", module.get("sources"), problems)
    for i, sub in enumerate(module.get("modules", [])):
        check_module(f"{where}.modules[{i}]", sub, problems)
    return name


def check_libpq(path, modules, problems):
    """The libpq module: before tally, one pinned PostgreSQL archive, and
    only the client library installed (no server, no client programs)."""
    names = [m.get("name") if isinstance(m, dict) else None for m in modules]
    if "libpq" not in names:
        problems.append(f"{path}: no libpq module (the GNOME runtime does not ship libpq)")
        return
    if "tally" in names and names.index("libpq") > names.index("tally"):
        problems.append(f"{path}: libpq must be built before tally")
    module = modules[names.index("libpq")]
    sources = module.get("sources")
    archives = [s for s in sources if isinstance(s, dict) and s.get("type") == "archive"] \
        if isinstance(sources, list) else []
    if len(archives) != 1 or not LIBPQ_URL.match(str(archives[0].get("url"))):
        problems.append(f"{path}: libpq must come from one PostgreSQL release archive "
                        "(https://ftp.postgresql.org/pub/source/vX.Y/postgresql-X.Y.tar.bz2)")
    commands = module.get("build-commands", [])
    if module.get("buildsystem") != "simple" or not isinstance(commands, list):
        problems.append(f"{path}: libpq must be built with buildsystem simple and build-commands")
        return
    if "make -C src/interfaces/libpq install" not in commands:
        problems.append(f"{path}: libpq's module must install src/interfaces/libpq")
    if any(c.strip() in ("make install", "make") for c in commands):
        problems.append(f"{path}: libpq's module must not build or install the whole server")
    if not any(c.startswith("./configure") and "--with-ssl=openssl" in c for c in commands):
        problems.append(f"{path}: libpq needs --with-ssl=openssl (sslmode=require)")


def check_manifest(path, problems):
    devel = ".Devel." in path.rsplit("/", 1)[-1]
    want_id = APP_ID + ".Devel" if devel else APP_ID
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"{path}: cannot load: {e}")
        return
    if not isinstance(manifest, dict):
        problems.append(f"{path}: the top level must be an object")
        return

    def expect(key, value):
        got = manifest.get(key)
        if got != value:
            problems.append(f"{path}: '{key}' is {got!r}, expected {value!r}")

    app_id = manifest.get("app-id", manifest.get("id"))
    if app_id != want_id:
        problems.append(f"{path}: application id is {app_id!r}, expected {want_id!r}")
    expect("runtime", "org.gnome.Platform")
    expect("sdk", "org.gnome.Sdk")
    expect("command", "tally")
    version = manifest.get("runtime-version")
    if not isinstance(version, str) or not re.match(r"^[0-9]+$", version):
        problems.append(f"{path}: 'runtime-version' must be a GNOME release such as \"49\", got {version!r}")

    finish = manifest.get("finish-args")
    if not isinstance(finish, list):
        problems.append(f"{path}: 'finish-args' must be a list")
    else:
        if len(finish) != len(set(finish)):
            problems.append(f"{path}: 'finish-args' repeats an entry")
        extra = sorted(set(finish) - FINISH_ARGS)
        missing = sorted(FINISH_ARGS - set(finish))
        if extra:
            problems.append(f"{path}: 'finish-args' grants more than needed: {', '.join(extra)}")
        if missing:
            problems.append(f"{path}: 'finish-args' lacks {', '.join(missing)}")

    modules = manifest.get("modules")
    if not isinstance(modules, list) or not modules:
        problems.append(f"{path}: 'modules' must be a non-empty list")
        return
    for i, module in enumerate(modules):
        check_module(f"{path}: modules[{i}]", module, problems)
    check_libpq(path, modules, problems)

    last = modules[-1]
    if not isinstance(last, dict) or last.get("name") != "tally":
        problems.append(f"{path}: the last module must be tally")
        return
    if last.get("buildsystem") != "meson":
        problems.append(f"{path}: tally must be built with buildsystem meson")
    if last.get("sources") != [{"type": "dir", "path": ".."}]:
        problems.append(f"{path}: tally must be built from the checkout (a dir source at '..')")
    opts = last.get("config-opts", [])
    if "-Dui=enabled" not in opts:
        problems.append(f"{path}: tally needs -Dui=enabled")
    if devel and "-Ddevelopment=true" not in opts:
        problems.append(f"{path}: the development manifest needs -Ddevelopment=true")
    if not devel and any(o.startswith("-Ddevelopment=") and o != "-Ddevelopment=false" for o in opts):
        problems.append(f"{path}: the stable manifest must not turn on development")


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    problems = []
    for path in argv[1:]:
        check_manifest(path, problems)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"ok: {len(argv) - 1} manifest(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
