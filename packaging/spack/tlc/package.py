# Spack recipe for tlc (docs/packaging.md: how to use it from a package repository of your own).
# Every variant maps to one CMake option of CMakeLists.txt; keep the two in step.
try:  # Spack >= 1.0: the build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # Spack 0.x: spack.package provides them
    pass

from spack.package import *


class Tlc(CMakePackage):
    """tlc: thread-level collectives for hybrid MPI+threads programs. Every thread of a process
    calls collectives (allreduce, bcast, ...) with its own buffers, as if it were an MPI rank;
    threads of a process share buffers directly, lane threads drive concurrent communicators."""

    # No public repository yet: build a checkout with `spack develop --path <checkout> tlc@main`
    # (docs/packaging.md). Set `git` here once the repository is published.
    version("main", branch="main")

    # SPDX identifier of LICENSE (also the `license` variable of tlc.pc).
    license("BSD-3-Clause")

    variant("shared", default=True, description="Build libtlc as a shared library")
    variant("fortran", default=False, description="Build the C API's Fortran 2008 module")
    variant("bench", default=False, description="Build and install tlc-bench (needs OpenMP)")

    depends_on("cxx", type="build")
    depends_on("c", type="build")  # the C API is tested from C
    depends_on("fortran", type="build", when="+fortran")

    depends_on("cmake@3.25:", type="build")
    # hwloc is found through pkg-config, by tlc's build and by the installed tlcConfig.cmake of a
    # static libtlc.
    depends_on("pkgconfig", type="build")
    depends_on("hwloc@2:")
    # The MPI provider is chosen the usual way (tlc ^mpich, tlc ^openmpi). tlc's threads call MPI
    # concurrently: the library must provide MPI_THREAD_MULTIPLE (checked by tlc at run time).
    depends_on("mpi")
    # oneTBB is not a dependency: the library does not use it, and the TBB example is not built
    # here (TLC_WITH_TBB=OFF).

    depends_on("googletest", type="test")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("TLC_FORTRAN", "fortran"),
            self.define_from_variant("TLC_BUILD_BENCH", "bench"),
            self.define("TLC_BUILD_TESTS", self.run_tests),
            self.define("TLC_BUILD_EXAMPLES", False),
            self.define("TLC_WITH_TBB", "OFF"),
            # The MPI of the spec, not whichever mpicxx comes first on PATH.
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            self.define("MPIEXEC_EXECUTABLE", join_path(spec["mpi"].prefix.bin, "mpiexec")),
        ]
        if spec.satisfies("+fortran"):
            args.append(self.define("MPI_Fortran_COMPILER", spec["mpi"].mpifc))
        return args
