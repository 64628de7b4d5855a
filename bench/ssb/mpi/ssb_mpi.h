/* ssb_mpi.h - the distributed SSB driver (ssb_mpi.c), behind both
 * `coproc-ssb --mpi` and coproc-ssb-mpi. */
#ifndef SSB_MPI_H
#define SSB_MPI_H

/* Run the distributed SSB under mpirun: argv as coproc-ssb-mpi takes it (no --mpi).
 * Calls MPI_Init and MPI_Finalize. Returns the exit status (0 right, 1 wrong or an
 * error on any rank, 77 no OpenCL device, 64 bad usage). */
int ssb_mpi_main(int argc, char **argv);

#endif
