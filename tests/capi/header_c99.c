/* tlc/tlc.h compiles as strict C99 (built with -std=c99 -pedantic-errors, never run). */
#include <tlc/tlc.h>

int tlc_header_compiles_as_c99(void) {
  tlc_team_options options;
  tlc_team_options_init(&options);
  return options.reproducible + (int)TLC_SUCCESS + (int)TLC_DOUBLE + TLC_SUM;
}
