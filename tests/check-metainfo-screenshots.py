#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks that the screenshots the metainfo names are in the repository.

Usage: check-metainfo-screenshots.py SOURCE_ROOT METAINFO_IN

Every <image> of the metainfo template must point at
https://raw.githubusercontent.com/tallyapp/tally/main/PATH, PATH must be a
PNG in the checkout whose size matches the image's width and height
attributes, and each file must stay under 300 KiB. Exits 1 on a problem.
"""

import os
import struct
import sys
import xml.etree.ElementTree as ET

PREFIX = "https://raw.githubusercontent.com/tallyapp/tally/main/"
MAX_BYTES = 300 * 1024


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def main(argv):
    if len(argv) != 3:
        print("usage: check-metainfo-screenshots.py SOURCE_ROOT METAINFO_IN", file=sys.stderr)
        return 2
    root, metainfo = argv[1:]
    problems = []
    images = ET.parse(metainfo).getroot().findall("./screenshots/screenshot/image")
    if not images:
        problems.append(f"{metainfo}: no screenshots")
    for image in images:
        url = (image.text or "").strip()
        if not url.startswith(PREFIX):
            problems.append(f"{url}: not a raw URL of this repository ({PREFIX}…)")
            continue
        rel = url[len(PREFIX):]
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            problems.append(f"{rel}: named by the metainfo but not in the repository")
            continue
        size = png_size(path)
        if size is None:
            problems.append(f"{rel}: not a PNG")
            continue
        declared = (int(image.get("width", "0")), int(image.get("height", "0")))
        if size != declared:
            problems.append(f"{rel}: is {size[0]}×{size[1]}, the metainfo says {declared[0]}×{declared[1]}")
        nbytes = os.path.getsize(path)
        if nbytes > MAX_BYTES:
            problems.append(f"{rel}: {nbytes // 1024} KiB, more than {MAX_BYTES // 1024} KiB")
        if not problems:
            print(f"ok: {rel} {size[0]}×{size[1]}, {nbytes // 1024} KiB")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
