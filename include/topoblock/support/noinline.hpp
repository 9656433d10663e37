#pragma once

// Keeps a rarely taken path (growing storage, updating optional levels, a
// change of several domains) out of line, so that the common path around it
// stays small enough to inline into its caller. GCC and Clang honour it;
// elsewhere it is a no-op.
#ifndef TOPOBLOCK_NOINLINE
#if defined(__GNUC__) || defined(__clang__)
#define TOPOBLOCK_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define TOPOBLOCK_NOINLINE __declspec(noinline)
#else
#define TOPOBLOCK_NOINLINE
#endif
#endif
