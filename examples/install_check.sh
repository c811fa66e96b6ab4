#!/usr/bin/env bash
# Installs the build into a temporary prefix, checks that only public headers were installed,
# then builds the README example against the installed copy twice: through find_package(gpuhash)
# (shared and static targets) and through pkg-config, and runs what it built. With a CUDA compiler
# (4th argument), the device-side example is also compiled against the installed headers alone.
set -euo pipefail
build_dir=$1 source_dir=$2 libdir=$3 cuda_compiler=${4:-} cuda_arch=${5:-90}
prefix=$(mktemp -d) work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
test -f "$prefix/include/gpuhash.h" && test -f "$prefix/include/gpuhash_dist.h" && test -f "$prefix/include/gpuhash_device.cuh"
test -f "$prefix/include/gpuhash/warpdrive.cuh" && test -f "$prefix/include/gpuhash/detail/warpdrive.h"
# The installed headers are exactly those of include/: nothing of src/ is public.
if ! diff <(cd "$source_dir/include" && find . -type f | sort) <(cd "$prefix/include" && find . -type f | sort); then
  echo "install check: the installed headers differ from include/ (above: < source, > installed)" >&2
  exit 1
fi
if [ -n "$cuda_compiler" ]; then
  "$cuda_compiler" -std=c++17 -arch="sm_$cuda_arch" -I"$prefix/include" -c \
    "$source_dir/examples/device_kmers.cu" -o "$work/device_kmers.o"
fi
cmake -S "$source_dir/examples/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DEXAMPLE_SOURCE="$source_dir/examples/basic.c" >/dev/null
cmake --build "$work/cmake" >/dev/null
LD_LIBRARY_PATH="$prefix/$libdir:${LD_LIBRARY_PATH:-}" "$work/cmake/consumer_shared" >/dev/null
"$work/cmake/consumer_static" >/dev/null
if command -v pkg-config >/dev/null 2>&1; then
  export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
  # shellcheck disable=SC2046
  cc -std=c11 "$source_dir/examples/basic.c" -o "$work/pkgconfig_static" $(pkg-config --cflags gpuhash) \
     "$prefix/$libdir/libgpuhash.a" $(pkg-config --libs-only-other --static gpuhash) \
     $(pkg-config --static --libs gpuhash | sed 's/-lgpuhash//')
  "$work/pkgconfig_static" >/dev/null
  echo "install check: find_package (shared, static) and pkg-config builds ran"
else
  echo "install check: find_package (shared, static) builds ran; pkg-config not installed, its build not tried"
fi
