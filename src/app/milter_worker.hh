// The service's workers: processes the supervisor forks, each planning one message at a
// time (GMime and the passes run here, never in the front).
#pragma once

#include "settings.hh"

namespace mimeuri::milter {

// Takes messages from `chan` (the channel to the front) one at a time, plans each with
// `cfg` and answers on the same channel. Ends at the end of the channel (the front is
// gone), after `max_use` messages (its memory then goes back whole), or on SIGUSR1 (a
// reload) once the message in hand is done.
[[noreturn]] void worker_main(int chan, int max_use, const Settings &cfg);

} // namespace mimeuri::milter
