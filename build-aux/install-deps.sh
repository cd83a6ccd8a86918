#!/usr/bin/env bash
# Installs the Debian 12 packages Tally needs to build and test. As root it
# runs apt-get directly (CI, containers); otherwise it asks sudo to run it.
# clang and libclang-rt-14-dev (libFuzzer and the sanitizer runtimes, only
# recommended by clang) build the fuzz targets (docs/testing.md). libpq-dev
# builds the PostgreSQL data source; postgresql gives the tests their
# throwaway cluster (initdb, pg_ctl; docs/postgresql.md).
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  exec sudo "$0" "$@"
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
  adwaita-icon-theme \
  appstream \
  ca-certificates \
  clang \
  dbus \
  desktop-file-utils \
  fonts-cantarell \
  fonts-dejavu-core \
  gcc \
  gettext \
  gsettings-desktop-schemas \
  imagemagick \
  libadwaita-1-dev \
  libcairo2-dev \
  libclang-rt-14-dev \
  libglib2.0-bin \
  libgtk-4-dev \
  libgtksourceview-5-dev \
  libglib2.0-dev \
  libjson-glib-dev \
  libmd4c-dev \
  libmd4c-html0-dev \
  libpango1.0-dev \
  libpq-dev \
  librsvg2-dev \
  libsecret-1-dev \
  libsoup-3.0-dev \
  libsqlite3-dev \
  libwebkitgtk-6.0-dev \
  libx11-dev \
  meson \
  ninja-build \
  pkg-config \
  poppler-utils \
  postgresql \
  python3 \
  sqlite3 \
  xauth \
  x11-utils \
  xvfb
