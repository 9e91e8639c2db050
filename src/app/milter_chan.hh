// The service's channels: unix sockets between its processes, each message one tag byte
// and one descriptor (SCM_RIGHTS).
//   supervisor -> front: 'N' + a new worker's channel; kConfigTag|bits + the --report file;
//                        kReportTag + the --report file opened again (rotated);
//                        kEventTag|event + a placeholder: what the supervisor saw, counted
//   front -> worker:     'M' + the message (a memfd or an unlinked file), then the length
//                        (uint32) and bytes of its envelope (Envelope::serialize)
//   worker -> front:     a WorkerHello, then the length and bytes of the plan (plain writes)
#pragma once

#include <cstdint>
#include <sys/types.h>

namespace mimeuri::milter {

// What a worker tells the front first (before planning): who it is, and the policy and
// time limit of the configuration it runs with (a reload changes them for later messages),
// and the [policy:NAME] that chose them for this message ("" for none; names are at most 63
// bytes).
struct WorkerHello {
    pid_t pid;
    std::uint8_t tempfail;
    double max_seconds;
    char policy[64];
};

// The tag of a config message (supervisor to front): these bits; its descriptor is the
// report file when kReportFd is set (else a placeholder).
// kPolicies: the settings have policies ([policy:NAME]): connections negotiated from then on
// ask the MTA for the envelope.
constexpr char kConfigTag = 0x10, kTempFail = 0x01, kReportFd = 0x02, kPolicies = 0x04;
// The report file alone, opened again after it was renamed (log rotation): no other setting
// changes, the workers stay.
constexpr char kReportTag = 0x20;
// What the supervisor saw, for the front's counters (issue 54 item 4): a worker that died (a
// signal, or a status other than 0), one that ended after its messages, a reload done or
// refused, and (sent to a new front once for each) a restart of the front.
constexpr char kEventTag = 0x30;
enum class Event : char { WorkerDied = 1, WorkerDone = 2, ReloadDone = 3, ReloadRefused = 4, FrontRestart = 5 };
constexpr int kEvents = 6; // Event values, and 0

// Sends a tag byte and one descriptor over a unix socket.
bool send_fd(int sock, char tag, int fd);

// Receives a tag byte and one descriptor: 1, or 0 at the end of the socket, or -1 on an
// error (EINTR included: the caller decides whether to try again).
int recv_fd(int sock, char &tag, int &fd);

} // namespace mimeuri::milter
