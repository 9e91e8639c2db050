#include "faults.hh"

#include <glib.h>

namespace mimeuri {

Faults Faults::from_env()
{
    Faults f;
    const char *v = g_getenv("MIMEURI_FAULT");
    if (!v) return f;
    f.pass = g_strcmp0(v, "pass") == 0;
    f.worker_second = g_strcmp0(v, "worker") == 0;
    if (g_str_has_prefix(v, "worker:")) f.worker_on = g_ascii_strtoull(v + 7, nullptr, 10);
    if (g_str_has_prefix(v, "throw:")) f.throw_on = g_ascii_strtoull(v + 6, nullptr, 10);
    f.worker_final = g_strcmp0(v, "worker-final") == 0;
    f.milter = g_strcmp0(v, "milter") == 0;
    if (g_str_has_prefix(v, "index-input:")) f.index_input = std::string(v + 12);
    if (g_str_has_prefix(v, "index-throw:")) f.index_throw = std::string(v + 12);
    if (g_str_has_prefix(v, "stop-open:")) f.stop_open = std::string(v + 10);
    return f;
}

} // namespace mimeuri
