// Fault injection for the tests (docs/testing.md): MIMEURI_FAULT, read once per run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace mimeuri {

struct Faults {
    bool pass{false};                     // "pass": every pass fails
    bool worker_second{false};            // "worker": every worker dies before its 2nd message
    std::optional<std::size_t> worker_on; // "worker:N": the worker given message N dies on it
    std::optional<std::size_t> throw_on;  // "throw:N": planning message N throws in its worker
    bool worker_final{false};             // "worker-final": every worker dies in its final step
    // The milter service (--milter): a message whose Subject holds "mimeuri-fault:crash"
    // kills its worker (SIGSEGV), one with "mimeuri-fault:hang" makes it hang; both only
    // when MIMEURI_FAULT=milter.
    bool milter{false};
    // "index-input:NAME": `mimeuri index` fails reading the input file named NAME (its last
    // path component) with an I/O error, as a bad disk block would (a root test cannot make
    // a file unreadable otherwise).
    std::optional<std::string> index_input;
    // "index-throw:NAME": reading that input throws a C++ exception, as an internal error
    // would (main's handler must turn it into exit 70, never an abort).
    std::optional<std::string> index_throw;
    // "stop-open:NAME": the run stops itself (SIGSTOP) once, just before it opens the input
    // whose last path component is NAME, so that a test can rename or remove that file as
    // an IMAP server would between the Maildir's listing and the open, then continue it.
    std::optional<std::string> stop_open;
    static Faults from_env();
};

} // namespace mimeuri
