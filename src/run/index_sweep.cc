// Several inputs and a pass that resolves references across messages (mid:): the whole run
// is indexed before any message is planned, so that forward references resolve too. With
// --jobs, each worker indexes whole inputs and sends its share. Inputs that cannot be read
// are reported when they are processed.
#include "run_state.hh"
#include "workers.hh"

#include <algorithm>
#include <csignal>

namespace mimeuri {

namespace {

void index_input(RunState &rs, std::size_t input_no)
{
    auto src = rs.inputs.open(input_no);
    if (!src || src->size() == 0) return;
    auto format = rs.inputs.format_of(*src);
    if (!format) return;
    auto segments = split(*src, *format);
    if (!segments) return;
    for (std::size_t i = 0; i < segments->size(); ++i)
        rs.engine.index({*src, (*segments)[i], i + 1, *format == Format::Mbox, input_no});
}

} // namespace

void index_inputs(RunState &rs)
{
    if (rs.jobs() == 1) {
        for (std::size_t k = 0; k < rs.inputs.size(); ++k) index_input(rs, k);
        return;
    }
    // Standard input is read here, once, before the workers exist.
    const auto &names = rs.inputs.names();
    if (auto it = std::find(names.begin(), names.end(), "-"); it != names.end())
        (void)rs.inputs.open(static_cast<std::size_t>(it - names.begin()));
    Hooks hooks;
    hooks.produce = [&](std::size_t k) {
        index_input(rs, k);
        return std::string();
    };
    hooks.consume = [](std::size_t, std::string &&, bool) { return true; };
    hooks.finish = [&]() {
        if (rs.faults.worker_final) ::raise(SIGKILL);
        return rs.engine.save_index();
    };
    hooks.at_end = [&](std::string &&bytes) {
        try {
            rs.engine.merge_index(std::move(bytes));
        } catch (const std::exception &ex) {
            g_warning("a worker's index was unreadable: %s", ex.what());
        }
    };
    hooks.share_lost = [&](std::size_t k) { index_input(rs, k); }; // that worker's inputs, again here
    run_forked(rs.jobs(), Feed::fixed(rs.inputs.size()), hooks);
}

} // namespace mimeuri
