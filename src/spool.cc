#include "spool.hh"

#include "fdio.hh"

#include <glib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <unistd.h>

namespace mimeuri {

namespace {

Error spool_error(int err)
{
    return Error{Code::TempFail, std::string("cannot hold plans in a temporary file: ") + std::strerror(err)};
}

} // namespace

RecordSpool::~RecordSpool()
{
    if (fd_ >= 0) ::close(fd_);
}

Status RecordSpool::flush()
{
    if (!write_all(fd_, pending_.data(), pending_.size())) return spool_error(errno);
    pending_.clear();
    return ok();
}

Status RecordSpool::push(std::string_view record)
{
    ++count_;
    if (fd_ < 0 && memory_bytes_ + record.size() <= budget_) {
        memory_.emplace_back(record);
        memory_bytes_ += record.size();
        return ok();
    }
    if (fd_ < 0) {
        GError *gerr = nullptr;
        char *name = nullptr;
        fd_ = g_file_open_tmp("mimeuri-plans-XXXXXX", &name, &gerr);
        if (fd_ < 0) {
            Error e = Error::from_gerror(Code::TempFail, gerr, "cannot hold plans in a temporary file");
            --count_;
            return e;
        }
        ::unlink(name);
        g_free(name);
    }
    std::uint64_t len = record.size();
    pending_.append(reinterpret_cast<const char *>(&len), sizeof len);
    pending_.append(record);
    if (pending_.size() >= (1u << 16)) return flush();
    return ok();
}

Status RecordSpool::drain(const std::function<bool(std::string &&)> &f)
{
    bool go = true;
    while (!memory_.empty()) {
        std::string r = std::move(memory_.front());
        memory_.pop_front();
        --count_;
        if (go) go = f(std::move(r));
    }
    memory_bytes_ = 0;
    if (fd_ < 0) return ok();
    if (auto s = flush(); !s) return s;
    if (::lseek(fd_, 0, SEEK_SET) < 0) return spool_error(errno);
    std::string buf;
    std::size_t pos = 0;
    auto need = [&](std::size_t n) -> Status { // at least n bytes from pos in buf
        while (buf.size() - pos < n) {
            buf.erase(0, pos);
            pos = 0;
            char chunk[1 << 16];
            ssize_t got = ::read(fd_, chunk, sizeof chunk);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return spool_error(errno);
            if (got == 0) return Error{Code::TempFail, "the temporary file of held plans is short"};
            buf.append(chunk, static_cast<std::size_t>(got));
        }
        return ok();
    };
    Status result = ok();
    while (count_ > 0) {
        std::uint64_t len = 0;
        if (result = need(sizeof len); !result) break;
        std::memcpy(&len, buf.data() + pos, sizeof len);
        pos += sizeof len;
        if (result = need(len); !result) break;
        std::string r = buf.substr(pos, len);
        pos += len;
        --count_;
        if (go) go = f(std::move(r));
    }
    ::close(fd_);
    fd_ = -1;
    count_ = 0;
    return result;
}

} // namespace mimeuri
