#!/usr/bin/env bash
# Packs this machine's build for a lent GPU machine: libndx, libndx_dist_mpi and the shared
# libraries they need that the GPU machine's image lacks (Highway, oneDNN, OpenBLAS, Open MPI's
# runtime), stripped and xz-compressed into .gpubuild/libs.tar.xz (about 22 MB, under the
# 64 MiB a device call carries). tools/gpu/quick_core.sh unpacks it there.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
strip -o "$STAGE/libndx.so.0" "$BUILD/libndx.so.0"
strip -o "$STAGE/libndx_dist_mpi.so" "$BUILD/libndx_dist_mpi.so"
# Everything either library links that is not glibc's or the compiler's own runtime.
for lib in $( (ldd "$BUILD/libndx.so.0"; ldd "$BUILD/libndx_dist_mpi.so") | awk '/=> \//{print $3}' |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libgomp|libz|libpthread|libdl|librt)\.so|libndx' | sort -u); do
  cp -L "$lib" "$STAGE/"
done
mkdir -p .gpubuild
tar -C "$STAGE" -cf - . | xz -8 -T2 > .gpubuild/libs.tar.xz
ls -la .gpubuild/libs.tar.xz
