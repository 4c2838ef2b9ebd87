#!/usr/bin/env bash
# The platform-layer rule (docs/architecture.md, "Platform layer"): every OS call of the libraries goes through
# Sources/BoxwoodPlatform (and its C declarations in Sources/CBoxwoodPlatform). No other library file imports
# Glibc, Darwin or Musl, reads /proc, or branches on the OS with #if os(...) / #if canImport(<OS module>).
# Executables (the boxwood tool, the test children, the benchmark) and tests are exempt.
# Exit 1 with the offending lines when a library file breaks the rule.
set -euo pipefail
cd "$(dirname "$0")/.."

libraries=(Sources/BoxwoodStore Sources/Boxwood Sources/BoxwoodSync Sources/BoxwoodSyncSimulator Sources/BoxwoodLZ4)
pattern='^\s*import\s+(Glibc|Darwin|Musl|SwiftGlibc)\b|canImport\((Glibc|Darwin|Musl)\)|#\s*(if|elseif)\s.*\bos\(|"/proc/|\b(Glibc|Darwin|Musl)\.'

if hits=$(grep -rnE --include='*.swift' "$pattern" "${libraries[@]}"); then
    echo "platform-layer check failed: OS-specific code outside Sources/BoxwoodPlatform:" >&2
    echo "$hits" >&2
    exit 1
fi
echo "platform-layer check: ok (${#libraries[@]} library targets, no OS-specific code outside Sources/BoxwoodPlatform)"
