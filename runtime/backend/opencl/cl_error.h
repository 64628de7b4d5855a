/* cl_error.h - names of OpenCL error codes, for messages. */
#ifndef COPROC_CL_ERROR_H
#define COPROC_CL_ERROR_H

/* "CL_OUT_OF_RESOURCES", ...; "CL_UNKNOWN_ERROR" for codes it does not know. Static. */
const char *coproc__cl_error_name(int err);

#endif
