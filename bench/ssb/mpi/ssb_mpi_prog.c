/* ssb_mpi_prog.c - coproc-ssb-mpi: `coproc-ssb --mpi` as a program of its own. */
#include "ssb_mpi.h"

int main(int argc, char **argv)
{
    return ssb_mpi_main(argc, argv);
}
