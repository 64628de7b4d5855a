/* cl_error.c - names of OpenCL error codes. */
#include "backend/opencl/cl_error.h"

#define CL_ERROR_MAP(XX)                                                                 \
    XX(0, CL_SUCCESS) XX(-1, CL_DEVICE_NOT_FOUND) XX(-2, CL_DEVICE_NOT_AVAILABLE)         \
    XX(-3, CL_COMPILER_NOT_AVAILABLE) XX(-4, CL_MEM_OBJECT_ALLOCATION_FAILURE)            \
    XX(-5, CL_OUT_OF_RESOURCES) XX(-6, CL_OUT_OF_HOST_MEMORY)                             \
    XX(-7, CL_PROFILING_INFO_NOT_AVAILABLE) XX(-8, CL_MEM_COPY_OVERLAP)                   \
    XX(-9, CL_IMAGE_FORMAT_MISMATCH) XX(-10, CL_IMAGE_FORMAT_NOT_SUPPORTED)               \
    XX(-11, CL_BUILD_PROGRAM_FAILURE) XX(-12, CL_MAP_FAILURE)                             \
    XX(-13, CL_MISALIGNED_SUB_BUFFER_OFFSET)                                              \
    XX(-14, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)                                 \
    XX(-15, CL_COMPILE_PROGRAM_FAILURE) XX(-16, CL_LINKER_NOT_AVAILABLE)                  \
    XX(-17, CL_LINK_PROGRAM_FAILURE) XX(-18, CL_DEVICE_PARTITION_FAILED)                  \
    XX(-19, CL_KERNEL_ARG_INFO_NOT_AVAILABLE) XX(-30, CL_INVALID_VALUE)                   \
    XX(-31, CL_INVALID_DEVICE_TYPE) XX(-32, CL_INVALID_PLATFORM)                          \
    XX(-33, CL_INVALID_DEVICE) XX(-34, CL_INVALID_CONTEXT)                                \
    XX(-35, CL_INVALID_QUEUE_PROPERTIES) XX(-36, CL_INVALID_COMMAND_QUEUE)                \
    XX(-37, CL_INVALID_HOST_PTR) XX(-38, CL_INVALID_MEM_OBJECT)                           \
    XX(-39, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) XX(-40, CL_INVALID_IMAGE_SIZE)            \
    XX(-41, CL_INVALID_SAMPLER) XX(-42, CL_INVALID_BINARY)                                \
    XX(-43, CL_INVALID_BUILD_OPTIONS) XX(-44, CL_INVALID_PROGRAM)                         \
    XX(-45, CL_INVALID_PROGRAM_EXECUTABLE) XX(-46, CL_INVALID_KERNEL_NAME)                \
    XX(-47, CL_INVALID_KERNEL_DEFINITION) XX(-48, CL_INVALID_KERNEL)                      \
    XX(-49, CL_INVALID_ARG_INDEX) XX(-50, CL_INVALID_ARG_VALUE)                           \
    XX(-51, CL_INVALID_ARG_SIZE) XX(-52, CL_INVALID_KERNEL_ARGS)                          \
    XX(-53, CL_INVALID_WORK_DIMENSION) XX(-54, CL_INVALID_WORK_GROUP_SIZE)                \
    XX(-55, CL_INVALID_WORK_ITEM_SIZE) XX(-56, CL_INVALID_GLOBAL_OFFSET)                  \
    XX(-57, CL_INVALID_EVENT_WAIT_LIST) XX(-58, CL_INVALID_EVENT)                         \
    XX(-59, CL_INVALID_OPERATION) XX(-60, CL_INVALID_GL_OBJECT)                           \
    XX(-61, CL_INVALID_BUFFER_SIZE) XX(-62, CL_INVALID_MIP_LEVEL)                         \
    XX(-63, CL_INVALID_GLOBAL_WORK_SIZE) XX(-64, CL_INVALID_PROPERTY)                     \
    XX(-65, CL_INVALID_IMAGE_DESCRIPTOR) XX(-66, CL_INVALID_COMPILER_OPTIONS)             \
    XX(-67, CL_INVALID_LINKER_OPTIONS) XX(-68, CL_INVALID_DEVICE_PARTITION_COUNT)         \
    XX(-69, CL_INVALID_PIPE_SIZE) XX(-70, CL_INVALID_DEVICE_QUEUE)                        \
    XX(-1001, CL_PLATFORM_NOT_FOUND_KHR) XX(-9100, NO_PROGRESS_WITHIN_BOUND)

const char *coproc__cl_error_name(int err)
{
    switch (err) {
#define CL_ERROR_CASE(code, name) case code: return #name;
        CL_ERROR_MAP(CL_ERROR_CASE)
#undef CL_ERROR_CASE
    default:
        return "CL_UNKNOWN_ERROR";
    }
}
