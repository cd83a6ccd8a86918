#!/usr/bin/env bash
# Installs the Debian 12 packages Tally needs to build and test. Run as root.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
  ca-certificates \
  gcc \
  gettext \
  libglib2.0-bin \
  libglib2.0-dev \
  libjson-glib-dev \
  libsoup-3.0-dev \
  libsqlite3-dev \
  meson \
  ninja-build \
  pkg-config \
  python3
