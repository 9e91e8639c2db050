#include "spool.hh"

#include "fdio.hh"

#include <glib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <unistd.h>

namespace mimeuri {

namespace {

Error spool_error(int err)
{
    return Error{Code::TempFail, std::string("cannot hold plans in a temporary file: ") + std::strerror(err)};
}

// MIMEURI_FAULT=spool[:K] (tests): nothing is held in memory, each record is written to the
// temporary file at once, and from the (K+1)th write on (the first by default) every write
// stops half way with ENOSPC, as on a full TMPDIR.
bool full_tmpdir_fault()
{
    static const bool on = g_str_has_prefix(g_getenv("MIMEURI_FAULT") ? g_getenv("MIMEURI_FAULT") : "", "spool");
    return on;
}

bool fault_now()
{
    const char *fault = g_getenv("MIMEURI_FAULT"); // "spool" or "spool:K"
    static std::uint64_t writes_left = fault[5] == ':' ? g_ascii_strtoull(fault + 6, nullptr, 10) : 0;
    if (writes_left == 0) return true;
    --writes_left;
    return false;
}

} // namespace

RecordSpool::~RecordSpool()
{
    if (fd_ >= 0) ::close(fd_);
}

RecordSpool::RecordSpool(std::size_t memory_budget) : budget_(full_tmpdir_fault() ? 0 : memory_budget) {}

Status RecordSpool::flush()
{
    // On a failure the file may hold part of pending_: only the first file_records_ records
    // of the file are ever read back, and pending_ stays in memory.
    if (full_tmpdir_fault() && fault_now()) {
        (void)write_all(fd_, pending_.data(), pending_.size() / 2);
        return spool_error(ENOSPC);
    }
    if (!write_all(fd_, pending_.data(), pending_.size())) return spool_error(errno);
    pending_.clear();
    file_records_ += std::exchange(pending_records_, 0);
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
        if (fd_ < 0) { // held in memory all the same: nothing pushed is lost
            memory_.emplace_back(record);
            memory_bytes_ += record.size();
            return Error::from_gerror(Code::TempFail, gerr, "cannot hold plans in a temporary file");
        }
        ::unlink(name);
        g_free(name);
    }
    std::uint64_t len = record.size();
    pending_.append(reinterpret_cast<const char *>(&len), sizeof len);
    pending_.append(record);
    ++pending_records_;
    if (pending_.size() >= (1u << 16) || full_tmpdir_fault()) return flush();
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
    (void)flush(); // when it fails, the records not in the file are read from pending_
    std::string buf;
    std::size_t pos = 0;
    Status result = ok();
    if (file_records_ > 0 && ::lseek(fd_, 0, SEEK_SET) < 0) result = spool_error(errno);
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
    // The file's records, then those that could not be written to it.
    for (std::size_t k = 0; k < file_records_ + pending_records_ && result; ++k) {
        if (k == file_records_) {
            buf = std::move(pending_);
            pos = 0;
        }
        std::uint64_t len = 0;
        if (result = need(sizeof len); !result) break;
        std::memcpy(&len, buf.data() + pos, sizeof len);
        pos += sizeof len;
        if (result = need(len); !result) break;
        std::string r = buf.substr(pos, len);
        pos += len;
        if (go) go = f(std::move(r));
    }
    ::close(fd_);
    fd_ = -1;
    count_ = file_records_ = pending_records_ = 0;
    pending_.clear();
    return result;
}

} // namespace mimeuri
