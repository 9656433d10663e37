#pragma once

#include <cstddef>
#include <vector>

namespace topoblock {

// Bytes a vector holds on the heap (its capacity, not its size): what the
// memory reports of the state and the policies add up.
template <class T, class A>
std::size_t heap_bytes(const std::vector<T, A>& v) noexcept {
    return v.capacity() * sizeof(T);
}

// The same summed over the vector's elements' own memory_bytes(), for
// vectors of indexes.
template <class T, class A>
std::size_t nested_heap_bytes(const std::vector<T, A>& v) noexcept {
    std::size_t total = heap_bytes(v);
    for (const T& item : v) total += item.memory_bytes();
    return total;
}

}  // namespace topoblock
