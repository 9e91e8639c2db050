// The service's front: the process that runs libmilter (one thread per MTA connection).
// It collects each message (milter_message.hh), has a worker plan it (milter_dispatch.hh)
// and turns the plan into libmilter requests. No GMime here.
//   front_description()  the callbacks, for smfi_register (before the socket is opened)
//   front_main()         the front process: smfi_main until the channel to the
//                        supervisor ends (new workers and config messages come on it)
#pragma once

#include "options.hh"
#include "syslog.hh"

#include <libmilter/mfapi.h>

namespace mimeuri::milter {

smfiDesc front_description();

// Runs libmilter on the socket opened before the fork; never returns. `syslog`: where the
// per-message lines go.
[[noreturn]] void front_main(int chan, const Options &opts, Syslog &syslog);

} // namespace mimeuri::milter
