// --jobs: messages handled by forked worker processes. GObject takes global locks on every
// object's dispose (GLib 2.74), so threads contend; processes do not. A worker that dies
// (hostile input) costs only its unfinished messages, which the parent then handles by the
// --on-error policy.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace mimeuri {

// Runs produce(i) for every i in [0, n) in `jobs` forked processes (worker w takes the i with
// i % jobs == w) and calls consume(i, bytes, ok) in order of i; ok is false when the worker
// died before producing i. finish(w) runs last in each worker; its bytes reach at_end(w, ...)
// in the parent. Must be called with no other thread running.
void run_forked(int jobs, std::size_t n, const std::function<std::string(std::size_t)> &produce,
                const std::function<void(std::size_t, std::string &&, bool)> &consume,
                const std::function<std::string()> &finish = {},
                const std::function<void(std::string &&)> &at_end = {});

// Length-prefixed fields for the records workers send.
class Record {
public:
    Record() = default;
    explicit Record(std::string bytes) : buf_(std::move(bytes)) {}
    void put(const std::string &s);
    void put(std::size_t v) { put(std::to_string(v)); }
    std::string get();
    std::size_t get_size() { return static_cast<std::size_t>(std::stoull(get())); }
    std::string take() { return std::move(buf_); }

private:
    std::string buf_;
    std::size_t pos_{0};
};

} // namespace mimeuri
