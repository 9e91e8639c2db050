// What src/html/html_refs.cc and src/html/html_rewrite.cc share: gumbo run under its guard (Guarded),
// and two byte classes. Internal to those two files.
#pragma once

#include "html_guard.h"

#include <gumbo.h>

#include <array>
#include <cstddef>
#include <functional>
#include <string_view>

namespace mimeuri::html::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

inline int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The stack gumbo may use below our call: its only deep recursion is node destruction
// (a <frameset> replacing a body), a few dozen bytes a level; parsing itself needs a few KiB.
constexpr std::size_t kMaxStack = 1u << 20;

inline int ask_time(void *data)
{
    try {
        return (*static_cast<const std::function<bool()> *>(data))() ? 1 : 0;
    } catch (...) {
        return 1; // never unwind through C
    }
}

// gumbo's document, parsed under a guard; the guard owns every block of it.
struct Guarded {
    HtmlGuard *guard{nullptr};
    GumboOutput *out{nullptr};
    HtmlGuardStatus status{HTML_GUARD_NO_MEMORY};
    Guarded(std::string_view html, std::size_t max_bytes, const std::function<bool()> *out_of_time)
    {
        bool timed = out_of_time && *out_of_time;
        guard = html_guard_new(max_bytes, kMaxStack, timed ? ask_time : nullptr,
                               timed ? const_cast<std::function<bool()> *>(out_of_time) : nullptr);
        if (guard) status = html_guard_parse(guard, html.data(), html.size(), &out);
    }
    ~Guarded() { html_guard_free(guard); }
    Guarded(const Guarded &) = delete;
    Guarded &operator=(const Guarded &) = delete;
};

// The octets css_urls stops at; any other is stepped over (issue 53: saved pages' stylesheets).
constexpr std::array<bool, 256> kCssStops = [] {
    std::array<bool, 256> s{};
    for (unsigned char c : std::string_view("/\"'\\@uU")) s[c] = true;
    return s;
}();

} // namespace mimeuri::html::detail
