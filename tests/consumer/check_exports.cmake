# check_exports(<libtlc.so>): fails unless the shared library exports tlc's public interface and
# nothing internal. Included by run_consumer_test.cmake (uses its fail()); needs NM (nm from
# binutils, which demangles with -C).
#
# What may be exported (everything else fails the test):
#   - tlc:: functions and classes marked TLC_API in include/tlc/, and of tlc::detail:: only what
#     the public headers' templates and inline functions call (run_collective, to_string);
#   - the type information and vtables of the exported exception types;
#   - the C API (tlc_*) and the Fortran module's procedures (__tlc*_MOD_*);
#   - instantiations of libstdc++ templates (std::, __gnu_cxx::): libstdc++ declares its
#     namespaces with default visibility, so their vague-linkage instantiations stay visible
#     whatever -fvisibility says; they are not tlc's interface, and every user of the same
#     instantiation has its own copy.
function(check_exports library)
  if("${NM}" STREQUAL "" OR "${NM}" MATCHES "-NOTFOUND$")
    fail("shared: no nm to list the exports of ${library}")
  endif()
  execute_process(COMMAND "${NM}" -D --defined-only -C "${library}" OUTPUT_VARIABLE _out
                  RESULT_VARIABLE _rc)
  if(NOT _rc STREQUAL "0")
    fail("shared: nm -D ${library} exited with '${_rc}'")
  endif()
  string(REPLACE ";" "\\;" _out "${_out}")
  string(REPLACE "\n" ";" _lines "${_out}")
  # The top-level names of include/tlc/ that the library defines out of line. A new public class
  # or function belongs here too: the list is the reviewed ABI.
  set(_public "Environment|Error|TeamAborted|Team|Thread|Region|Topology|Placement|algorithms|"
              "select_algorithm|mpi_lane_parallelism|current_thread|pin_current_thread|to_string|"
              "Request|Persistent|wait_all|wait_any|start_all")
  string(JOIN "" _public ${_public})
  set(_internal_detail "")
  set(_unexpected "")
  foreach(line IN LISTS _lines)
    # "<address> <type> <name>"
    if(NOT line MATCHES "^[0-9a-fA-F]* *[A-Za-z] (.+)$")
      continue()
    endif()
    set(_name "${CMAKE_MATCH_1}")
    # The entity itself, without its parameter list (which may name internal types: the
    # constructor Thread(tlc::detail::TeamImpl*, ...) is public).
    string(REGEX REPLACE "\\(.*$" "" _entity "${_name}")
    if(_entity MATCHES "tlc::detail::")
      if(NOT _entity MATCHES "^tlc::detail::(run_collective|to_string)$")
        list(APPEND _internal_detail "${_name}")
      endif()
    elseif(_entity MATCHES "^(typeinfo for |typeinfo name for |vtable for )tlc::")
      if(NOT _entity MATCHES "for tlc::(Error|TeamAborted)$")
        list(APPEND _unexpected "${_name}")
      endif()
    elseif(_entity MATCHES "^tlc::")
      if(NOT _entity MATCHES "^tlc::(${_public})(::|$)")
        list(APPEND _unexpected "${_name}")
      endif()
    elseif(_entity MATCHES "^tlc_[A-Za-z0-9_]+$" OR _entity MATCHES "^__tlc[A-Za-z0-9_]*_MOD_")
      # the C API and the Fortran module
    elseif(_entity MATCHES "(std|__gnu_cxx)::")
      # libstdc++ instantiations (over tlc's public types at most: tlc::detail was ruled out)
    else()
      list(APPEND _unexpected "${_name}")
    endif()
  endforeach()
  if(_internal_detail OR _unexpected)
    list(JOIN _internal_detail "\n  " _d)
    list(JOIN _unexpected "\n  " _u)
    fail("shared: ${library} exports more than tlc's public interface:\n  ${_d}\n  ${_u}")
  endif()
  # And what a consumer's code references must be there: a class, a free function, what the
  # inline collective templates call, and the exception types' typeinfo (catch across the .so).
  foreach(required "tlc::Team::run(" "tlc::Environment::Environment(int&, char**&)"
                   "tlc::detail::run_collective(" "tlc::current_thread()"
                   "tlc::Thread::throw_unusable() const" "typeinfo for tlc::Error"
                   "typeinfo for tlc::TeamAborted")
    string(FIND "${_out}" "${required}" _at)
    if(_at EQUAL -1)
      fail("shared: ${library} does not export ${required}")
    endif()
  endforeach()
  message(STATUS "[shared exports] ${library}: the public interface only")
endfunction()
