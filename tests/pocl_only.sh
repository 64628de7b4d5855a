# tests/pocl_only.sh - sourced by tests/sanitize.sh and tests/fuzz.sh: load
# only PoCL (a private OCL_ICD_VENDORS holding its .icd file), so that other
# drivers' own leaks and threads at exit are not taken for coproc's. The
# directory goes when the sourcing script exits.
pocl_only_vendors=$(mktemp -d)
trap 'rm -rf "$pocl_only_vendors"' EXIT
pocl_only_icd=$(ls /etc/OpenCL/vendors/*pocl*.icd 2>/dev/null | head -1)
if [ -n "$pocl_only_icd" ]; then
    cp "$pocl_only_icd" "$pocl_only_vendors/"
    export OCL_ICD_VENDORS=$pocl_only_vendors
fi
unset COPROC_DEVICES RUSTICL_ENABLE
