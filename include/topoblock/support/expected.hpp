#pragma once

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

namespace topoblock {

// Holds either a value or the reason there is none. A small stand-in for
// C++23's std::expected so the library stays C++20; the spelling follows it so
// that a later switch is a rename.
template <class E>
class unexpected {
public:
    constexpr explicit unexpected(E error) : error_(std::move(error)) {}
    constexpr const E& error() const& noexcept { return error_; }
    constexpr E&& error() && noexcept { return std::move(error_); }

private:
    E error_;
};

template <class E>
unexpected(E) -> unexpected<E>;

template <class T, class E>
class [[nodiscard]] expected {
public:
    using value_type = T;
    using error_type = E;

    template <class U = T>
        requires std::is_constructible_v<T, U&&>
    constexpr expected(U&& value) : storage_(std::in_place_index<0>, std::forward<U>(value)) {}
    template <class G>
    constexpr expected(unexpected<G> error)
        : storage_(std::in_place_index<1>, std::move(error).error()) {}

    constexpr bool has_value() const noexcept { return storage_.index() == 0; }
    constexpr explicit operator bool() const noexcept { return has_value(); }

    constexpr T& value() & { assert(has_value()); return std::get<0>(storage_); }
    constexpr const T& value() const& { assert(has_value()); return std::get<0>(storage_); }
    constexpr T&& value() && { assert(has_value()); return std::get<0>(std::move(storage_)); }
    constexpr T& operator*() & { return value(); }
    constexpr const T& operator*() const& { return value(); }
    constexpr T* operator->() { return &value(); }
    constexpr const T* operator->() const { return &value(); }

    constexpr const E& error() const& { assert(!has_value()); return std::get<1>(storage_); }
    constexpr E&& error() && { assert(!has_value()); return std::get<1>(std::move(storage_)); }

private:
    std::variant<T, E> storage_;
};

// expected<void, E>: success carries nothing.
template <class E>
class [[nodiscard]] expected<void, E> {
public:
    using value_type = void;
    using error_type = E;

    constexpr expected() noexcept = default;
    template <class G>
    constexpr expected(unexpected<G> error) : error_(std::move(error).error()), ok_(false) {}

    constexpr bool has_value() const noexcept { return ok_; }
    constexpr explicit operator bool() const noexcept { return ok_; }
    constexpr const E& error() const& { assert(!ok_); return error_; }

private:
    E error_{};
    bool ok_ = true;
};

}  // namespace topoblock
