// --jobs: messages handled by forked worker processes. GObject takes global locks on every
// object's dispose (GLib 2.74), so threads contend; processes do not. A worker that dies
// (hostile input) costs only its unfinished messages, which the parent then handles by the
// --on-error policy.
#pragma once

#include "record.hh"

#include <cstddef>
#include <functional>
#include <string>

namespace mimeuri {

// Items to hand out that may still be being found (an mbox being split while the first
// messages are already at work). In the parent, more() finds some more and returns false once
// there are none left to find; known() is how many are found. describe(begin, end) is what a
// worker needs to know of items [begin, end) (their places in the input); in the worker,
// learn(begin, end, bytes) receives it before produce() is called for them.
struct Feed {
    std::function<bool()> more;
    std::function<std::size_t()> known;
    std::function<std::string(std::size_t, std::size_t)> describe;
    std::function<void(std::size_t, std::size_t, std::string &&)> learn;
    static Feed fixed(std::size_t n); // n items, known from the start
};

// Runs produce(i) for every item in `jobs` forked processes and calls consume(i, bytes, ok)
// in order of i; ok is false when the worker given i died on it. When consume returns false
// (the output is gone), the workers are stopped and no further item is consumed. Items go out in chunks of
// consecutive numbers to whichever worker has room, so a slow message does not hold the
// others back; the parent holds at most a bounded window of results to restore the order.
// A worker that dies costs the message it was on; its other unfinished ones go to the workers
// still alive. finish() runs last in each worker; its bytes reach at_end() in the parent.
// Must be called with no other thread running.
void run_forked(int jobs, const Feed &feed, const std::function<std::string(std::size_t)> &produce,
                const std::function<bool(std::size_t, std::string &&, bool)> &consume,
                const std::function<std::string()> &finish = {},
                const std::function<void(std::string &&)> &at_end = {});

// The same, with every hook named; share_lost(i) is called in the parent for each item i
// whose results arrived from a worker that ended without sending finish()'s bytes (it died
// in its final step, or later on another item): what finish() would have carried of item i
// (its share of the mid: index) is lost, and the parent does it again.
struct Hooks {
    std::function<std::string(std::size_t)> produce;
    std::function<bool(std::size_t, std::string &&, bool)> consume;
    std::function<std::string()> finish;
    std::function<void(std::string &&)> at_end;
    std::function<void(std::size_t)> share_lost;
};
void run_forked(int jobs, const Feed &feed, const Hooks &hooks);

} // namespace mimeuri
