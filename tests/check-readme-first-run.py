#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the README's first set-up command as a new user would.

The command is read from README.md (the first line of the first ``sh``
block under "Set up on a fresh Debian 12 machine"), never copied here. Its
package-installation step (`build-aux/install-deps.sh && `) is left
out; the rest (configure, build, start the window) runs verbatim in a fresh
copy of the source tree, under a private D-Bus session bus, with no
GSETTINGS_SCHEMA_DIR and no Tally schema installed. The test passes when:

* the window maps (seen on the X server with xwininfo),
* quitting through the application's `quit` action ends the process with
  status 0,
* nothing was logged at CRITICAL or ERROR level;

and then, for the installed case, when the same build installed into a
temporary DESTDIR (with its build-tree schema removed) finds its installed
schema through XDG_DATA_DIRS and maps its window too (given an API key in
its environment, which must then be gone from /proc/PID/environ), while an
installed copy that cannot see any schema exits 1 with a clear message
instead of aborting.

Usage: check-readme-first-run.py SOURCE_ROOT   (starts its own Xvfb and session bus)
Exit status: 0 pass, 1 fail, 77 skipped (precondition not met).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

APP_ID = "io.github.tallyapp.Tally"
INSTALL_STEP = "build-aux/install-deps.sh && "
# GLib's log format: "(tally:123): Gtk-CRITICAL **: …", "GLib-GIO-ERROR **: …",
# "** (tally:1): CRITICAL **: …".
BAD_LOG = re.compile(r"\b(CRITICAL|ERROR) \*\*")


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def readme_first_command(source_root):
    with open(os.path.join(source_root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("## Set up on a fresh Debian 12 machine", 1)
    if len(section) != 2:
        fail("README.md has no 'Set up on a fresh Debian 12 machine' section")
    blocks = re.findall(r"```sh\n(.*?)```", section[1], re.S)
    if len(blocks) < 2:
        fail("the set-up section must hold two ```sh blocks (run the app; run the tests)")
    lines = [l.strip() for l in blocks[0].splitlines() if l.strip()]
    if len(lines) != 1:
        fail(f"the first set-up command must be one line, got {lines!r}")
    command = lines[0]
    if not command.startswith(INSTALL_STEP):
        fail(f"the first set-up command should start with {INSTALL_STEP!r}: {command!r}")
    return command[len(INSTALL_STEP):]


def copy_source(source_root, dest):
    """Copies the tracked and untracked-but-not-ignored files (a fresh clone
    of the working tree, without its build folders)."""
    try:
        out = subprocess.run(
            ["git", "-C", source_root, "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            check=True, capture_output=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = None
    if names is None:
        shutil.copytree(source_root, dest, symlinks=True,
                        ignore=shutil.ignore_patterns("build*", "_build", ".git"))
        return
    for name in names:
        src = os.path.join(source_root, name)
        if not os.path.lexists(src):
            continue  # deleted in the working tree
        dst = os.path.join(dest, name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)


def clean_env(home):
    """The caller's environment (with the private session bus that
    dbus-run-session started) less what the test suite or a developer may
    have set for Tally, with a fresh home and XDG folders."""
    env = dict(os.environ)
    for var in list(env):
        if var.startswith(("MESON_", "GSETTINGS_", "G_TEST_", "TALLY_")) or var in (
                "G_DEBUG", "ANTHROPIC_API_KEY",
                "MALLOC_CHECK_", "MALLOC_PERTURB_", "GDK_BACKEND", "GTK_A11Y",
                "NO_AT_BRIDGE", "XDG_DATA_DIRS"):
            del env[var]
    env["HOME"] = home
    env["XDG_DATA_HOME"] = os.path.join(home, ".local", "share")
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    env["XDG_CACHE_HOME"] = os.path.join(home, ".cache")
    env["XDG_RUNTIME_DIR"] = os.path.join(home, "runtime")
    for d in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        os.makedirs(env[d], mode=0o700, exist_ok=True)
    return env


def mapped_windows(env):
    """Returns the ids of viewable top-level windows of class "tally" larger
    than GDK's 1×1 leader window."""
    tree = subprocess.run(["xwininfo", "-root", "-children"], env=env,
                          capture_output=True, text=True).stdout
    ids = []
    for m in re.finditer(r"^\s*(0x[0-9a-f]+) .*\(\"tally\" \"[^\"]*\"\)\s+(\d+)x(\d+)", tree, re.M):
        if int(m.group(2)) <= 1 or int(m.group(3)) <= 1:
            continue
        info = subprocess.run(["xwininfo", "-id", m.group(1)], env=env,
                              capture_output=True, text=True).stdout
        if "Map State: IsViewable" in info:
            ids.append(m.group(1))
    return ids


def run_and_quit(argv, cwd, env, log_path, what, map_timeout, after_map=None):
    """Starts argv, waits for its window to map, calls after_map(proc) if
    given, quits it through the application's quit action and checks the
    exit status and the log."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + map_timeout
    windows = []
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail(f"{what}: exited with status {proc.returncode} before its window mapped;"
                 f" log:\n{open(log_path).read()[-4000:]}")
        windows = mapped_windows(env)
        if windows:
            break
        time.sleep(0.5)
    if not windows:
        proc.kill()
        fail(f"{what}: no window mapped within {map_timeout} s; log:\n{open(log_path).read()[-4000:]}")
    print(f"{what}: window {windows[0]} mapped", flush=True)
    time.sleep(1.0)  # let start-up work (keyring, model list) finish logging
    if after_map is not None:
        after_map(proc)

    subprocess.run(["gapplication", "action", APP_ID, "quit"], env=env, check=False)
    try:
        status = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        fail(f"{what}: did not quit within 30 s of the quit action; log:\n"
             f"{open(log_path, errors='replace').read()[-4000:]}")
    log = open(log_path, errors="replace").read()
    if status != 0:
        fail(f"{what}: exited with status {status}; log:\n{log[-4000:]}")
    bad = [l for l in log.splitlines() if BAD_LOG.search(l)]
    if bad:
        fail(f"{what}: logged at CRITICAL/ERROR level:\n" + "\n".join(bad[:20]))
    print(f"{what}: quit cleanly, nothing logged at CRITICAL or ERROR", flush=True)


def inner(source_root, work):
    command = readme_first_command(source_root)
    print(f"README command (install step aside): {command}", flush=True)
    tree = os.path.join(work, "tally")
    copy_source(source_root, tree)
    env = clean_env(os.path.join(work, "home"))

    schemas = subprocess.run(["gsettings", "list-schemas"], env=env,
                             capture_output=True, text=True).stdout.split()
    if APP_ID in schemas:
        print(f"SKIP: a {APP_ID} schema is installed system-wide; this test needs a "
              "machine without one", flush=True)
        sys.exit(77)

    run_and_quit(["bash", "-c", command], tree, env, os.path.join(work, "readme.log"),
                 "README command", map_timeout=1500)

    # The installed app: meson install into a temporary DESTDIR. The build
    # tree's compiled schema goes, so only the installed one can be found.
    dest = os.path.join(work, "dest")
    subprocess.run(["meson", "install", "-C", "build", "--no-rebuild", "--quiet",
                    "--destdir", dest], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    binaries = glob.glob(os.path.join(dest, "**", "bin", "tally"), recursive=True)
    if len(binaries) != 1:
        fail(f"meson install put {len(binaries)} tally binaries under {dest}")
    prefix = os.path.dirname(os.path.dirname(binaries[0]))
    schema_dir = os.path.join(prefix, "share", "glib-2.0", "schemas")
    if not os.path.exists(os.path.join(schema_dir, APP_ID + ".gschema.xml")):
        fail(f"meson install did not install the schema into {schema_dir}")
    # DESTDIR installs skip the post-install step; compile as it would.
    subprocess.run(["glib-compile-schemas", schema_dir], check=True)
    os.unlink(os.path.join(tree, "build", "data", "gschemas.compiled"))

    blind = subprocess.run([binaries[0]], env=env, capture_output=True, text=True, timeout=60)
    if blind.returncode != 1 or "settings schema" not in blind.stderr:
        fail(f"installed tally without a visible schema: expected exit 1 and a message, "
             f"got {blind.returncode}: {blind.stderr[-2000:]}")
    print(f"installed tally without a schema says: {blind.stderr.strip()}", flush=True)

    # With a key in its environment: once started, the process's own
    # environment block (what /proc/PID/environ shows, and what a command
    # could read) holds no trace of it (docs/security.md).
    probe = "sk-ant-probe-" + os.urandom(8).hex()

    def key_gone(proc):
        with open(f"/proc/{proc.pid}/environ", "rb") as f:
            block = f.read()
        if b"XDG_DATA_DIRS=" not in block:
            fail(f"/proc/{proc.pid}/environ does not look like tally's environment")
        if probe.encode() in block or b"ANTHROPIC_API_KEY=" in block:
            fail("the API key is still readable in /proc/PID/environ of the running tally")
        print("installed tally: the API key is gone from /proc/PID/environ", flush=True)

    installed_env = dict(env)
    installed_env["XDG_DATA_DIRS"] = os.path.join(prefix, "share") + ":/usr/local/share:/usr/share"
    installed_env["ANTHROPIC_API_KEY"] = probe
    installed_env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
    run_and_quit([binaries[0]], work, installed_env, os.path.join(work, "installed.log"),
                 "installed tally", map_timeout=120, after_map=key_gone)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--inner":
        inner(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    source_root = os.path.abspath(sys.argv[1])
    for tool in ("dbus-run-session", "xwininfo", "gapplication", "meson"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} is not installed (build-aux/install-deps.sh installs it)")
            sys.exit(77)
    if shutil.which("Xvfb") is None:
        print("SKIP: Xvfb is not installed (build-aux/install-deps.sh installs it)")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="tally-readme-")
    # A display of its own: other UI tests may run tally windows at the
    # same time on the suite's display, and their windows must not count.
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24",
                             "-nolisten", "tcp"], pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        display = f.readline().strip()
    try:
        if not display:
            fail("Xvfb did not report a display number")
        env = dict(os.environ)
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        env.pop("XAUTHORITY", None)
        env["DISPLAY"] = ":" + display
        status = subprocess.run(["dbus-run-session", "--", sys.executable, __file__,
                                 "--inner", source_root, work], env=env).returncode
    finally:
        xvfb.terminate()
        xvfb.wait()
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
