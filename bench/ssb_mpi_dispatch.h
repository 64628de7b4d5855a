/* ssb_mpi_dispatch.h - coproc-ssb --mpi: the distributed driver where coproc-ssb
 * was built with MPI, a clear error where not. */
#ifndef SSB_MPI_DISPATCH_H
#define SSB_MPI_DISPATCH_H

/* -1 when argv has no --mpi (coproc-ssb runs as usual); else the exit status of the
 * distributed run over argv without --mpi, or EX_UNAVAILABLE (69) with a message when
 * coproc-ssb was built without MPI. */
int ssb_mpi_dispatch(int argc, char **argv);

#endif
