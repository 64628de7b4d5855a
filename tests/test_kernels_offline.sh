#!/usr/bin/env bash
# test_kernels_offline.sh BUILD_DIR SOURCE_DIR - compile every cl/*.cl (with
# cl/prelude.cl in front, as the runtime does) with clang as OpenCL C 1.2 for
# NVIDIA (nvptx64-nvidia-nvcl), AMD (amdgcn gfx90a and gfx1030) and Intel
# (spir, spir64), on both kernel paths and with and without fp64, so code that
# only one driver accepts is caught without that hardware.
set -u
src=$2
clang=$(command -v clang-14 || command -v clang || true)
if [ -z "$clang" ]; then echo "skipped: no clang (apt-get install clang-14)"; exit 77; fi

targets=(
    "nvptx64-nvidia-nvcl|-S"
    "amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib|-c"
    "amdgcn-amd-amdhsa -mcpu=gfx1030 -nogpulib|-c"
    "spir|-emit-llvm -c"
    "spir64|-emit-llvm -c"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 checked=0
# The fused engine's generated kernels (the SSB queries' pipelines and every
# expression kind) go through the same compilations.
mkdir -p "$tmp/gen"
if "$1/tests/dump_query_kernels" "$tmp/gen"; then
    # Many pipelines generate the same source (the SSB joins' build sides):
    # each distinct source is compiled once.
    total=$(ls "$tmp/gen" | wc -l)
    (cd "$tmp/gen" && md5sum -- *.cl | sort | awk 'seen[$1]++ {print $2}' | xargs -r rm -f --)
    echo "$total generated kernels, $(ls "$tmp/gen" | wc -l) distinct"
else
    rc=$?
    if [ "$rc" -ne 77 ]; then echo "FAIL: dump_query_kernels exited $rc"; failures=$((failures + 1)); fi
fi
for cl in "$src"/cl/*.cl "$tmp"/gen/*.cl; do
    [ -e "$cl" ] || continue
    name=$(basename "$cl" .cl)
    [ "$name" = prelude ] && continue
    cat "$src/cl/prelude.cl" "$cl" >"$tmp/$name.cl"
    for entry in "${targets[@]}"; do
        target=${entry%%|*}
        mode=${entry#*|}
        for defs in "-DCOPROC_CPU=0 -DCOPROC_FP64=1" "-DCOPROC_CPU=1 -DCOPROC_FP64=1" "-DCOPROC_CPU=0"; do
            checked=$((checked + 1))
            # shellcheck disable=SC2086
            if ! "$clang" -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target $target \
                $defs $mode -o "$tmp/out" "$tmp/$name.cl" 2>"$tmp/err"; then
                echo "FAIL: $name.cl for $target ($defs):"
                head -20 "$tmp/err"
                failures=$((failures + 1))
            fi
        done
    done
done
echo "$checked compilations, $failures failed"
[ "$failures" -eq 0 ]
