# Warning and sanitizer flags for tlc's own targets (never forced on consumers).
add_library(tlc_build_flags INTERFACE)
target_compile_options(tlc_build_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       $<$<BOOL:${TLC_WARNINGS_AS_ERRORS}>:-Werror>)
if(TLC_SANITIZE)
  list(JOIN TLC_SANITIZE "," _tlc_sanitizers)
  add_compile_options(-fsanitize=${_tlc_sanitizers} -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${_tlc_sanitizers})
endif()
