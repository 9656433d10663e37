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

// The reverse, for a few-instruction step (a bit set or cleared) that many
// callers share: once it has enough callers, GCC stops inlining it where
// the inliner's budget runs short, and a call then costs more than the step
// (a rack a multi-domain job takes clears its idle bit through one).
#ifndef TOPOBLOCK_ALWAYS_INLINE
#if defined(__GNUC__) || defined(__clang__)
#define TOPOBLOCK_ALWAYS_INLINE __attribute__((always_inline)) inline
#elif defined(_MSC_VER)
#define TOPOBLOCK_ALWAYS_INLINE __forceinline
#else
#define TOPOBLOCK_ALWAYS_INLINE inline
#endif
#endif
