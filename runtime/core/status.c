/* status.c - status names and messages from COPROC_STATUS_MAP, and the version. */
#include "coproc.h"

unsigned coproc_version(void) { return COPROC_VERSION_HEX; }

#define COPROC__STR2(x) #x
#define COPROC__STR(x) COPROC__STR2(x)
const char *coproc_version_string(void)
{
    return COPROC__STR(COPROC_VERSION_MAJOR) "." COPROC__STR(COPROC_VERSION_MINOR) "." COPROC__STR(
        COPROC_VERSION_PATCH);
}

const char *coproc_status_name(coproc_status s)
{
    switch (s) {
#define COPROC__STATUS_NAME(name, msg) case COPROC_##name: return "COPROC_" #name;
        COPROC_STATUS_MAP(COPROC__STATUS_NAME)
#undef COPROC__STATUS_NAME
    default:
        return "COPROC_UNKNOWN";
    }
}

const char *coproc_status_message(coproc_status s)
{
    switch (s) {
#define COPROC__STATUS_MSG(name, msg) case COPROC_##name: return msg;
        COPROC_STATUS_MAP(COPROC__STATUS_MSG)
#undef COPROC__STATUS_MSG
    default:
        return "unknown status";
    }
}

size_t coproc_type_size(coproc_type t)
{
    switch (t) {
    case COPROC_INT32: case COPROC_UINT32: case COPROC_FLOAT32: return 4;
    case COPROC_INT64: case COPROC_UINT64: case COPROC_FLOAT64: return 8;
    default: return 0;
    }
}

const char *coproc_type_name(coproc_type t)
{
    static const char *const names[] = {"int32", "int64", "uint32", "uint64", "float32", "float64"};
    return (unsigned)t < COPROC__TYPE_COUNT ? names[t] : "invalid";
}

const char *coproc_device_type_name(coproc_device_type t)
{
    switch (t) {
    case COPROC_DEVICE_CPU: return "cpu";
    case COPROC_DEVICE_GPU: return "gpu";
    case COPROC_DEVICE_ACCELERATOR: return "accelerator";
    default: return "other";
    }
}
