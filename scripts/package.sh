#!/usr/bin/env bash
# Builds the Debian packages tilestream-server and tilestream-display into
# build/packages/ (CPack; cmake/packaging.cmake), from the build in build/
# configured for /usr. Installs nothing.
#   scripts/package.sh            the packages, and lintian's findings when lintian is there
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build -j "$(nproc)"
rm -rf build/packages
(cd build && cpack -G DEB >/dev/null)
ls build/packages/*.deb
if command -v lintian >/dev/null; then
  # docs/operations.md, "What lintian says": each finding left is explained there.
  lintian --no-tag-display-limit build/packages/*.deb || true
fi
