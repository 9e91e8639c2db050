// Result<T>: the error type used at every GMime/GLib boundary.
#pragma once

#include <glib.h>

#include <string>
#include <utility>
#include <variant>

namespace mimeuri {

// sysexits.h values, mapped in one place (exit_status below).
enum class Code {
    Ok = 0,
    Usage = 64,        // EX_USAGE
    DataErr = 65,      // EX_DATAERR
    NoInput = 66,      // EX_NOINPUT
    Software = 70,     // EX_SOFTWARE: a bug or an internal failure
    CantCreate = 73,   // EX_CANTCREAT
    IoErr = 74,        // EX_IOERR
    TempFail = 75,     // EX_TEMPFAIL
    Config = 78,       // EX_CONFIG: a configuration file that cannot be read or says something wrong
};
// A Code read back from a worker's record (wire.hh) is one of these values, never a cast.
constexpr bool wire_valid(Code c)
{
    switch (c) {
    case Code::Ok:
    case Code::Usage:
    case Code::DataErr:
    case Code::NoInput:
    case Code::Software:
    case Code::CantCreate:
    case Code::IoErr:
    case Code::TempFail:
    case Code::Config: return true;
    }
    return false;
}

// What kind of failure an error is, apart from the exit status it maps to: a limit (the
// message passes as it came, reported; a retry would hit the same limit), input that is
// invalid, a failure of the system (I/O) or one that may pass (temporary), a bug, or a
// usage error. By default it follows from the code; limits say so (Error::limit).
enum class Kind { Usage, Invalid, Limit, Io, Temporary, Bug };

constexpr Kind kind_of(Code c)
{
    switch (c) {
    case Code::Usage:
    case Code::Config: return Kind::Usage;
    case Code::DataErr:
    case Code::NoInput: return Kind::Invalid;
    case Code::CantCreate:
    case Code::IoErr: return Kind::Io;
    case Code::TempFail: return Kind::Temporary;
    case Code::Ok: // not an error: an Error made with it is a bug
    case Code::Software: return Kind::Bug;
    }
    return Kind::Bug;
}

struct Error {
    Code code{Code::Software};
    std::string message;
    Kind kind{kind_of(code)};

    // A limit (time, size, references): exit status 65 where it decides one.
    static Error limit(std::string message) { return Error{Code::DataErr, std::move(message), Kind::Limit}; }

    // Consumes a GError (frees it) and keeps its message.
    static Error from_gerror(Code code, GError *err, const std::string &context = {})
    {
        std::string msg = context;
        if (err) {
            if (!msg.empty()) msg += ": ";
            msg += err->message ? err->message : "unknown error";
            g_error_free(err);
        }
        return Error{code, std::move(msg)};
    }
};

inline int exit_status(Code c) { return static_cast<int>(c); }

template <typename T> class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error err) : v_(std::move(err)) {}

    explicit operator bool() const { return v_.index() == 0; }
    bool ok() const { return v_.index() == 0; }
    T &value() & { return std::get<0>(v_); }
    T &&value() && { return std::get<0>(std::move(v_)); }
    const T &value() const & { return std::get<0>(v_); }
    T *operator->() { return &std::get<0>(v_); }
    T &operator*() { return std::get<0>(v_); }
    const Error &error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok() { return Unit{}; }

} // namespace mimeuri
