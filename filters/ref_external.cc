// The reference pass, beyond the run: the indexes mid: consults after the run's own
// messages (see ref_external.hh).
#include "ref_external.hh"

#include <stdexcept>
#include <unistd.h>

namespace mimeuri::refs {

namespace {

class MidIndexFile final : public ExternalIndex {
public:
    explicit MidIndexFile(std::string path) : path_(std::move(path)) {}

    std::optional<RunIndex::Entry> find(const std::string &id) override
    {
        auto found = store().find(id);
        if (!found) throw std::runtime_error(found.error().message);
        if (!*found) return std::nullopt;
        return RunIndex::entry_of((*found)->first, (*found)->count);
    }

    std::optional<std::string> find_ci(const std::string &id) override
    {
        auto found = store().find_ci(id);
        if (!found) throw std::runtime_error(found.error().message);
        return *found;
    }

private:
    MidStore &store()
    {
        if (!store_ || pid_ != ::getpid()) {
            // A connection opened before a fork is left alone (closing it could drop the
            // parent's locks); this process opens its own.
            if (store_ && pid_ != ::getpid()) (void)store_.release();
            auto s = MidStore::open_read(path_);
            if (!s) throw std::runtime_error(s.error().message);
            store_ = std::make_unique<MidStore>(std::move(*s));
            pid_ = ::getpid();
        }
        return *store_;
    }

    std::string path_;
    std::unique_ptr<MidStore> store_;
    pid_t pid_{0};
};

} // namespace

std::unique_ptr<ExternalIndex> open_mid_index(const std::string &path) { return std::make_unique<MidIndexFile>(path); }

Status check_mid_index(const std::string &path)
{
    auto s = MidStore::open_read(path);
    if (!s) return s.error();
    // A first query reads the schema: a truncated or foreign file fails here, not mid-run.
    if (auto f = s->find(""); !f) return f.error();
    return ok();
}

} // namespace mimeuri::refs
