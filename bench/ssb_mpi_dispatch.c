/* ssb_mpi_dispatch.c - see ssb_mpi_dispatch.h. COPROC_SSB_MPI is defined where
 * CMake found MPI (bench/CMakeLists.txt): the driver (bench/ssb/mpi/) is then
 * linked into coproc-ssb. */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "ssb_mpi_dispatch.h"
#ifdef COPROC_SSB_MPI
#include "ssb_mpi.h"
#endif

int ssb_mpi_dispatch(int argc, char **argv)
{
    int at = -1;
    for (int i = 1; i < argc && at < 0; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--mpi") == 0)
            at = i;
    }
    if (at < 0)
        return -1;
    /* The driver's own options follow; --mpi itself goes (argv[argc] stays NULL). */
    memmove(&argv[at], &argv[at + 1], (size_t)(argc - at) * sizeof *argv);
    argc--;
#ifdef COPROC_SSB_MPI
    return ssb_mpi_main(argc, argv);
#else
    fprintf(stderr, "coproc-ssb: --mpi: this coproc-ssb was built without MPI (CMake found "
                    "none; install an MPI such as libopenmpi-dev and build again)\n");
    return EX_UNAVAILABLE;
#endif
}
