// mimeuri: the command-line entry point.
#include "cturi_cli.hh"
#include "index_cmd.hh"
#include "milter.hh"
#include "output.hh"
#include "run.hh"
#include "settings.hh"

#include <gmime/gmime.h>

#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <unistd.h>

#ifndef MIMEURI_SYSCONFDIR
#define MIMEURI_SYSCONFDIR "/etc"
#endif

namespace {

// One plain line per log message on stderr: "mimeuri: <text>".
void log_handler(const gchar *, GLogLevelFlags level, const gchar *message, gpointer)
{
    if ((level & (G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG)) && !g_getenv("MIMEURI_DEBUG")) return;
    std::fprintf(stderr, "mimeuri: %s\n", message);
}

} // namespace

int main(int argc, char **argv)
{
    std::setlocale(LC_ALL, "");
    // A closed output pipe must surface as EPIPE (exit 74), not kill us silently.
    std::signal(SIGPIPE, SIG_IGN);
    g_log_set_default_handler(log_handler, nullptr);
    mimeuri::install_signal_cleanup();
    g_mime_init();

    if (argc > 1 && (std::strcmp(argv[1], "ct2uri") == 0 || std::strcmp(argv[1], "uri2ct") == 0))
        return mimeuri::run_cturi_command(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "index") == 0) return mimeuri::run_index_command(argc - 1, argv + 1);

    int status = 0;
    try {
        // One loader for every entry point: the service reads the same files again with it
        // on SIGHUP.
        const mimeuri::SettingsLoader loader(argc, argv, MIMEURI_SYSCONFDIR "/mimeuri.conf");
        auto loaded = loader.load();
        if (!loaded) {
            g_warning("%s", loaded.error().message.c_str());
            return mimeuri::exit_status(loaded.error().code);
        }
        if (loaded->print_and_exit) {
            std::fputs(loaded->print_and_exit->c_str(), stdout);
            return std::fflush(stdout) == 0 ? 0 : mimeuri::exit_status(mimeuri::Code::IoErr);
        }
        mimeuri::Settings &settings = *loaded->settings;
        mimeuri::Options &opts = settings.opts;
        if (!opts.milter.empty()) {
            status = mimeuri::run_milter(loader, std::move(loaded->settings));
        } else {
            auto passes = mimeuri::build_passes(opts, settings.pass_opts);
            // On a terminal, a progress line; with --check too, unless the report itself goes
            // to that terminal (the line would be drawn over it).
            opts.progress = isatty(2) && !(opts.check && opts.report_path.empty() && isatty(1));
            status = mimeuri::run(opts, passes);
        }
    } catch (const std::exception &e) {
        // Nothing may escape, from the option parsing and the passes' construction as from
        // the run: an unexpected failure is a temporary failure, so the MTA keeps the
        // message and retries rather than losing or bouncing it.
        g_warning("internal error: %s", e.what());
        status = 75;
    } catch (...) {
        g_warning("internal error: unknown exception");
        status = 75;
    }
    g_mime_shutdown();
    return status;
}
