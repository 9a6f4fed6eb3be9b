// TLC_API marks what libtlc exports. A shared build compiles everything else hidden
// (-fvisibility=hidden), so only the public interface is part of the ABI; a static build is
// unaffected. Plain preprocessor, so C code (tlc/tlc.h) can use it as well.
#pragma once
#if defined(__GNUC__) || defined(__clang__)
#define TLC_API __attribute__((visibility("default")))
#else
#define TLC_API
#endif
