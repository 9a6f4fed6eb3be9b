# The API reference: Doxygen over the public headers (docs/Doxyfile.in), into
# <build>/docs/api/html/index.html.
#
#   cmake --build build --target docs
#
# Doxygen runs with WARN_AS_ERROR=FAIL_ON_WARNINGS and WARN_IF_UNDOCUMENTED: a public function,
# class, member, option or error code without a doc comment (or a broken doc command) fails the
# target, and the test tlc_api_reference, which runs the same command, fails the suite. Without
# doxygen (Debian: doxygen, which scripts/bootstrap.sh installs) the target says so and fails,
# and the test is not registered.
find_package(Doxygen QUIET)
set(TLC_DOCS_OUTPUT "${PROJECT_BINARY_DIR}/docs/api")
configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${PROJECT_BINARY_DIR}/docs/Doxyfile" @ONLY)
if(DOXYGEN_FOUND)
  # The generated tlc/version.hpp is one of the inputs; it exists once CMake has configured.
  set(TLC_DOCS_COMMAND "${DOXYGEN_EXECUTABLE}" "${PROJECT_BINARY_DIR}/docs/Doxyfile")
  add_custom_target(docs
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${TLC_DOCS_OUTPUT}"
    COMMAND ${TLC_DOCS_COMMAND}
    WORKING_DIRECTORY "${PROJECT_BINARY_DIR}/docs"
    COMMENT "API reference (Doxygen) in ${TLC_DOCS_OUTPUT}/html/index.html"
    VERBATIM)
else()
  add_custom_target(docs
    COMMAND "${CMAKE_COMMAND}" -E echo "tlc: doxygen not found: install it (Debian: doxygen) to build the API reference"
    COMMAND "${CMAKE_COMMAND}" -E false
    VERBATIM)
endif()
