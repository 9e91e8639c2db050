// One line per message to the local syslog socket (/dev/log, which journald serves too),
// facility mail. RFC 3164 framing without a timestamp: the daemon adds its own.
#pragma once

#include <string>

namespace mimeuri {

class Syslog {
public:
    // Connects to MIMEURI_SYSLOG_SOCKET if set (tests), else /dev/log. Failing to connect
    // is not an error for the run: one warning, then nothing is sent.
    Syslog();
    ~Syslog();
    Syslog(const Syslog &) = delete;
    Syslog &operator=(const Syslog &) = delete;
    void info(const std::string &line) { send(6, line); }
    void warning(const std::string &line) { send(4, line); }

private:
    void send(int severity, const std::string &line);
    int fd_{-1};
};

} // namespace mimeuri
