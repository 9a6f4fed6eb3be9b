# The collectives of the Fortran module, written once: every collective's blocking subroutine
# tlc_<name>, nonblocking tlc_i<name> and persistent tlc_<name>_init, and the interface of the
# C entry tlc_f_<name>(me, ..., form, request) (tlc_fortran.c) that all three call, are
# generated from the table below into two files that tlc.f90 includes:
#   tlc_collective_interfaces.inc   inside its interface block
#   tlc_collectives.inc             after `contains`
#
# A collective is its name and its dummy arguments after `me`; each argument's declarations and
# what it passes to C follow from its name:
#   buffer, recv      a buffer the call writes (type(*), dimension(..))
#   send              a buffer the call reads
#   op, root          a default integer, passed as c_int
#   *counts, *displs  a default-integer array, one entry per rank, passed as c_int with its size
# The comment of a collective documents it (the blocking subroutine carries it).
# Each C entry gets an interface of its own rather than one `procedure(shape), bind(c, name=...)`
# per shape: gfortran 12 miscompiled the first call through such a declaration when its
# arguments are Fortran descriptors (type(*), dimension(..)).

set(TLC_FORTRAN_COLLECTIVES
  "barrier|"
  "bcast|buffer root"
  "reduce|send recv op root"
  "allreduce|send recv op"
  "scan|send recv op"
  "exscan|send recv op"
  "reduce_scatter_block|send recv op"
  "allgather|send recv"
  "gather|send recv root"
  "scatter|send recv root"
  "alltoall|send recv"
  "allgatherv|send recv counts displs"
  "gatherv|send recv counts displs root"
  "scatterv|send counts displs recv root"
  "alltoallv|send send_counts send_displs recv recv_counts recv_displs")

set(_doc_barrier "Returns once every rank of the team has called it.")
set(_doc_bcast "buffer of root is copied into buffer of every rank.")
set(_doc_reduce
    "recv of root = op over all ranks of send (send may be TLC_IN_PLACE: the contribution is in
recv). recv is not used at other ranks.")
set(_doc_allreduce "recv = op over all ranks of send, element by element (send may be TLC_IN_PLACE).")
set(_doc_scan "recv of rank r = op over ranks 0..r of send (send may be TLC_IN_PLACE).")
set(_doc_exscan "recv of rank r = op over ranks 0..r-1 of send; rank 0's recv is left untouched.")
set(_doc_reduce_scatter_block
    "recv of rank r = block r (size(recv) elements) of the reduction of all send buffers
(size * size(recv) elements each). In place: recv holds the inputs, the result lands first.")
set(_doc_allgather "recv (size * size(send) elements) = the send buffers of all ranks in rank order.")
set(_doc_gather
    "recv of root = the send buffers of all ranks in rank order; recv is not used elsewhere.")
set(_doc_scatter
    "recv of rank r = block r of the root's send (size * size(recv) elements); send is not used
elsewhere. At the root, recv may be TLC_IN_PLACE.")
set(_doc_alltoall
    "Block j of rank i's send goes to block i of rank j's recv; both hold size * n elements.")
set(_doc_allgatherv
    "The v-variants: counts and displs have one entry per rank; displacements count elements
from the start of the buffer, starting at 0 (as in MPI). Blocks may not overlap in a receive
buffer. recv(displs(q) + 1 : displs(q) + counts(q)) = the send buffer of rank q (counts(q)
elements). send may be TLC_IN_PLACE: the caller's block is already in recv.")
set(_doc_gatherv
    "The same at the root only; recv, counts and displs are read at the root only (send may be
TLC_IN_PLACE there).")
set(_doc_scatterv
    "recv of rank q = send(displs(q) + 1 : displs(q) + counts(q)) of the root; send, counts and
displs are read at the root only, where recv may be TLC_IN_PLACE.")
set(_doc_alltoallv
    "send_counts(q) elements of send from send_displs(q) go to rank q, which receives them at
recv_displs(p) (recv_counts(p) elements, equal to what rank p sends it).")

# _tlc_fortran_list(<out> <indent> <head> <tail> <items>...): "head(item, item, ...)tail",
# continued with & before an item that would take its line past 96 columns.
function(_tlc_fortran_list out indent head tail)
  set(text "${head}(")
  set(line "${indent}${head}(")
  set(first TRUE)
  list(LENGTH ARGN count)
  set(index 0)
  foreach(item IN LISTS ARGN)
    math(EXPR index "${index} + 1")
    set(after "")
    if(index EQUAL count)  # the last item takes the closing text with it
      set(after ")${tail}")
    endif()
    if(NOT first)
      string(LENGTH "${line}, ${item}${after}" width)
      if(width GREATER 96)
        string(APPEND text ", &\n${indent}    ")
        set(line "${indent}    ")
      else()
        string(APPEND text ", ")
        string(APPEND line ", ")
      endif()
    endif()
    string(APPEND text "${item}")
    string(APPEND line "${item}")
    set(first FALSE)
  endforeach()
  set(${out} "${text})${tail}" PARENT_SCOPE)
endfunction()

function(_tlc_fortran_is_array out argument)
  if(argument MATCHES "(counts|displs)$")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# The declaration of a buffer argument: what the call does with it.
function(_tlc_fortran_intent out argument)
  if(argument STREQUAL "send")
    set(${out} "intent(in)" PARENT_SCOPE)
  else()
    set(${out} "intent(inout)" PARENT_SCOPE)
  endif()
endfunction()

# tlc_fortran_generate_collectives(<directory>): writes the two include files there.
function(tlc_fortran_generate_collectives directory)
  set(header "! Generated by src/fortran/collectives.cmake from its table: edit that, not this.\n")
  set(interfaces "${header}")
  set(procedures "${header}")
  foreach(entry IN LISTS TLC_FORTRAN_COLLECTIVES)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 name)
    list(LENGTH parts n)
    set(arguments "")
    if(n GREATER 1)
      list(GET parts 1 argument_text)
      separate_arguments(arguments UNIX_COMMAND "${argument_text}")
    endif()

    # The C entry: me, the arguments (an array with its length), form, request.
    set(c_dummies me)
    set(c_declarations "      type(c_ptr), value :: me\n")
    # Fortran: what each form passes to C, and each form's declarations.
    set(c_actuals "me%handle")
    set(blocking_declarations "    type(tlc_participant), intent(in) :: me\n")
    set(posted_declarations "${blocking_declarations}")
    foreach(argument IN LISTS arguments)
      _tlc_fortran_is_array(array "${argument}")
      if(array)
        list(APPEND c_dummies ${argument} n_${argument})
        string(APPEND c_declarations "      integer(c_int), intent(in) :: ${argument}(*)\n"
               "      integer(c_int), value :: n_${argument}\n")
        list(APPEND c_actuals "int(${argument}, c_int)" "size(${argument}, kind=c_int)")
        set(declaration "    integer, intent(in) :: ${argument}(:)\n")
        string(APPEND blocking_declarations "${declaration}")
        string(APPEND posted_declarations "${declaration}")
      elseif(argument STREQUAL "op" OR argument STREQUAL "root")
        list(APPEND c_dummies ${argument})
        string(APPEND c_declarations "      integer(c_int), value :: ${argument}\n")
        list(APPEND c_actuals "int(${argument}, c_int)")
        set(declaration "    integer, intent(in) :: ${argument}\n")
        string(APPEND blocking_declarations "${declaration}")
        string(APPEND posted_declarations "${declaration}")
      else()
        _tlc_fortran_intent(intent "${argument}")
        list(APPEND c_dummies ${argument})
        string(APPEND c_declarations
               "      type(*), dimension(..), ${intent}, asynchronous :: ${argument}\n")
        list(APPEND c_actuals ${argument})
        # Blocking: any array, made contiguous by the compiler where it is not. Nonblocking and
        # persistent: the array itself (asynchronous), never a copy.
        string(APPEND blocking_declarations
               "    type(*), dimension(..), contiguous, ${intent} :: ${argument}\n")
        string(APPEND posted_declarations
               "    type(*), dimension(..), ${intent}, asynchronous :: ${argument}\n")
      endif()
    endforeach()

    _tlc_fortran_list(head "    " "function c_${name}" " &" ${c_dummies} form request)
    string(APPEND interfaces
           "    ${head}\n        bind(c, name=\"tlc_f_${name}\") result(status)\n"
           "      import :: c_ptr, c_int\n${c_declarations}"
           "      integer(c_int), value :: form\n"
           "      type(c_ptr), intent(out) :: request\n"
           "      integer(c_int) :: status\n"
           "    end function c_${name}\n")

    # The three forms.
    string(REPLACE "\n" "\n  ! " doc "${_doc_${name}}")
    string(APPEND procedures "\n  ! ${doc}\n")
    foreach(form BLOCKING NONBLOCKING PERSISTENT)
      if(form STREQUAL "BLOCKING")
        set(public tlc_${name})
        set(dummies me ${arguments} ierr)
        set(declarations "${blocking_declarations}")
        set(request unused%handle)
      else()
        if(form STREQUAL "NONBLOCKING")
          set(public tlc_i${name})
        else()
          set(public tlc_${name}_init)
        endif()
        set(dummies me ${arguments} request ierr)
        set(declarations "${posted_declarations}    type(tlc_request), intent(out) :: request\n")
        set(request request%handle)
      endif()
      _tlc_fortran_list(subroutine_line "  " "subroutine ${public}" "" ${dummies})
      _tlc_fortran_list(call_line "    " "call finish(c_${name}" ", '${public}', ierr)"
                        ${c_actuals} ${form} ${request})
      string(APPEND procedures "  ${subroutine_line}\n${declarations}"
             "    integer, intent(out), optional :: ierr\n")
      if(form STREQUAL "BLOCKING")
        string(APPEND procedures "    type(tlc_request) :: unused\n")
      endif()
      string(APPEND procedures "    ${call_line}\n  end subroutine ${public}\n")
    endforeach()
  endforeach()
  # Written only when changed, so that configuring again does not rebuild the module.
  file(MAKE_DIRECTORY "${directory}")
  file(CONFIGURE OUTPUT "${directory}/tlc_collective_interfaces.inc" CONTENT "${interfaces}"
       @ONLY)
  file(CONFIGURE OUTPUT "${directory}/tlc_collectives.inc" CONTENT "${procedures}" @ONLY)
endfunction()
