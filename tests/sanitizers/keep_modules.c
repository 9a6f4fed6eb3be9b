/* Preloaded into the MPI programs of an AddressSanitizer build (cmake/TlcCompilerFlags.cmake).
 *
 * UCX, under Debian's MPICH, loads its transports as modules and unloads them in MPI_Finalize.
 * Memory those modules still point to from their own globals then looks unreachable, and
 * LeakSanitizer, which scans for leaks at exit, reports it as leaked from "<unknown module>"
 * (no name to suppress it by, and nothing tlc allocated). Keeping every module mapped until the
 * process ends leaves those pointers where LeakSanitizer looks, so it reports only real leaks. */
#include <dlfcn.h>

int dlclose(void* handle) {
  (void)handle;
  return 0;
}
