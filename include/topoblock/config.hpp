#pragma once

// Configuration macros; each can be defined before including topoblock.
// docs/config.md lists them.

#include <cassert>

// Checks of preconditions the caller must keep (not of user input, which is
// always validated and answered with an error value).
#ifndef TOPOBLOCK_ASSERT
#define TOPOBLOCK_ASSERT(condition) assert(condition)
#endif

// The most nodes one NVLink domain may hold in the default capacity. It fixes
// the width of each domain's node masks (one 64-bit word for 64).
#ifndef TOPOBLOCK_DEFAULT_MAX_NODES_PER_DOMAIN
#define TOPOBLOCK_DEFAULT_MAX_NODES_PER_DOMAIN 64
#endif
