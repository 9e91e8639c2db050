// NAME: wire.hh -- records between processes, both directions from one field list.
// SYNOPSIS: a type that travels names its fields once, in a static member
//     template <class Io, class Self> static void fields(Io &io, Self &s) { io(s.a, s.b, s.c); }
//   and wire::encode(value) / wire::decode<T>(bytes) write and read them in that order, as
//   Postfix's SEND_ATTR_* / RECV_ATTR_* name every field on both sides of a connection.
// Strings, integers, bools, enums, std::optional, std::vector, std::map, std::pair and
// std::shared_ptr<const T> nest. Reading checks what it reads: a bool is 0 or 1, an integer
// fits its type, and an enum value is one of its type's values (the enum declares
// `constexpr bool wire_valid(E)` beside itself, found by argument-dependent lookup);
// anything else throws std::runtime_error, never a cast of what a worker sent.
// The fields are length-prefixed (record.hh), so a reader stops at the end of the bytes.
#pragma once

#include "record.hh"

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mimeuri::wire {

namespace detail {
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_map : std::false_type {};
template <class K, class V> struct is_map<std::map<K, V>> : std::true_type {};
template <class T> struct is_pair : std::false_type {};
template <class A, class B> struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T> struct is_shared : std::false_type {};
template <class T> struct is_shared<std::shared_ptr<const T>> : std::true_type {};
// A type that writes itself as one field (serialize() / T::deserialize(bytes)).
template <class T>
concept self_serialized = requires(const T &t, std::string s) {
    { t.serialize() } -> std::same_as<std::string>;
    { T::deserialize(std::move(s)) } -> std::same_as<T>;
};
[[noreturn]] inline void refuse(const char *what) { throw std::runtime_error(std::string("wire: ") + what); }
} // namespace detail

class Put {
public:
    explicit Put(Record &r) : r_(r) {}
    template <class... T> void operator()(const T &...v) { (one(v), ...); }

private:
    template <class T> void one(const T &v)
    {
        using namespace detail;
        if constexpr (std::is_same_v<T, std::string>) {
            r_.put(v);
        } else if constexpr (std::is_same_v<T, bool>) {
            r_.put(static_cast<std::size_t>(v));
        } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
            r_.put(static_cast<std::size_t>(v)); // a negative value wraps, and back
        } else if constexpr (is_optional<T>::value) {
            r_.put(static_cast<std::size_t>(v.has_value()));
            if (v) one(*v);
        } else if constexpr (is_vector<T>::value || is_map<T>::value) {
            r_.put(v.size());
            for (const auto &e : v) one(e);
        } else if constexpr (is_pair<T>::value) {
            one(v.first), one(v.second);
        } else if constexpr (is_shared<T>::value) {
            r_.put(static_cast<std::size_t>(v != nullptr));
            if (v) one(*v);
        } else if constexpr (self_serialized<T>) {
            r_.put(v.serialize());
        } else {
            T::fields(*this, v);
        }
    }
    Record &r_;
};

class Get {
public:
    explicit Get(Record &r) : r_(r) {}
    template <class... T> void operator()(T &...v) { (one(v), ...); }

private:
    template <class T> void one(T &v)
    {
        using namespace detail;
        if constexpr (std::is_same_v<T, std::string>) {
            v = r_.get();
        } else if constexpr (std::is_same_v<T, bool>) {
            const std::size_t n = r_.get_size();
            if (n > 1) refuse("not a bool");
            v = n != 0;
        } else if constexpr (std::is_enum_v<T>) {
            const std::size_t n = r_.get_size();
            if (n > static_cast<std::size_t>(std::numeric_limits<std::underlying_type_t<T>>::max())) refuse("bad enum value");
            v = static_cast<T>(n);
            if (!wire_valid(v)) refuse("bad enum value");
        } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
            const std::size_t n = r_.get_size();
            if constexpr (sizeof(T) < sizeof(std::size_t))
                if (n > std::numeric_limits<T>::max()) refuse("integer out of range");
            v = static_cast<T>(n);
        } else if constexpr (std::is_integral_v<T>) {
            const auto n = static_cast<std::int64_t>(r_.get_size());
            if constexpr (sizeof(T) < sizeof(std::int64_t))
                if (n < std::numeric_limits<T>::min() || n > std::numeric_limits<T>::max()) refuse("integer out of range");
            v = static_cast<T>(n);
        } else if constexpr (is_optional<T>::value) {
            v.reset();
            if (present()) one(v.emplace());
        } else if constexpr (is_vector<T>::value) {
            v.clear();
            for (std::size_t n = r_.get_size(); n > 0; --n) one(v.emplace_back()); // throws at the bytes' end
        } else if constexpr (is_map<T>::value) {
            v.clear();
            for (std::size_t n = r_.get_size(); n > 0; --n) {
                std::pair<typename T::key_type, typename T::mapped_type> e;
                one(e);
                v.insert_or_assign(std::move(e.first), std::move(e.second));
            }
        } else if constexpr (is_pair<T>::value) {
            one(v.first), one(v.second);
        } else if constexpr (is_shared<T>::value) {
            v.reset();
            if (present()) {
                std::remove_const_t<typename T::element_type> e;
                one(e);
                v = std::make_shared<typename T::element_type>(std::move(e));
            }
        } else if constexpr (self_serialized<T>) {
            v = T::deserialize(r_.get());
        } else {
            T::fields(*this, v);
        }
    }
    bool present()
    {
        const std::size_t n = r_.get_size();
        if (n > 1) detail::refuse("not a presence flag");
        return n != 0;
    }
    Record &r_;
};

template <class T> std::string encode(const T &v)
{
    Record r;
    Put{r}(v);
    return r.take();
}

// Throws std::runtime_error on bytes that are not a T's.
template <class T> T decode(std::string bytes)
{
    Record r(std::move(bytes));
    T v{};
    Get{r}(v);
    return v;
}

} // namespace mimeuri::wire
