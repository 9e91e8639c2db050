// Ownership wrappers for GObjects and plain GLib/GMime values.
#pragma once

#include <glib-object.h>
#include <glib.h>

#include <memory>
#include <utility>

namespace mimeuri {

// A reference-owning pointer to a GObject. The transfer is explicit at construction:
// adopt() takes over a transfer-full reference, borrow() adds a reference of its own.
template <typename T> class GPtr {
public:
    GPtr() = default;
    static GPtr adopt(T *p) { return GPtr(p); }
    static GPtr borrow(T *p) { return GPtr(p ? static_cast<T *>(g_object_ref(p)) : nullptr); }

    GPtr(const GPtr &o) : p_(o.p_ ? static_cast<T *>(g_object_ref(o.p_)) : nullptr) {}
    GPtr(GPtr &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    GPtr &operator=(GPtr o) noexcept
    {
        std::swap(p_, o.p_);
        return *this;
    }
    ~GPtr()
    {
        if (p_) g_object_unref(p_);
    }

    T *get() const { return p_; }
    T *operator->() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }

private:
    explicit GPtr(T *p) : p_(p) {}
    T *p_{nullptr};
};

struct GFreeDeleter {
    void operator()(void *p) const { g_free(p); }
};
using GCharPtr = std::unique_ptr<char, GFreeDeleter>;

struct GErrorDeleter {
    void operator()(GError *e) const { g_error_free(e); }
};
using GErrorPtr = std::unique_ptr<GError, GErrorDeleter>;

} // namespace mimeuri
