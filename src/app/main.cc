// mimeuri: the command-line entry point.
#include "archive.hh"
#include "config_check.hh"
#include "cturi_cli.hh"
#include "extract.hh"
#include "index_cmd.hh"
#include "milter.hh"
#include "offload.hh"
#include "output.hh"
#include "proc_title.hh"
#include "run.hh"
#include "settings.hh"

#include <gmime/gmime.h>

#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
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

// The filter (and the service): options and configuration, then the run.
int run_filter(int argc, char **argv)
{
    // One loader for every entry point: the service reads the same files again with it
    // on SIGHUP.
    const mimeuri::SettingsLoader loader(argc, argv, MIMEURI_SYSCONFDIR "/mimeuri.conf");
    if (mimeuri::wants_check_config(loader)) return mimeuri::check_config(loader);
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
    if (!opts.milter.empty()) return mimeuri::run_milter(loader, std::move(loaded->settings));
    auto passes = mimeuri::build_passes(opts, settings.pass_opts);
    // On a terminal, a progress line; with --check too, unless the report itself goes to
    // that terminal (the line would be drawn over it).
    opts.progress = isatty(2) && !(opts.check && opts.report_path.empty() && isatty(1));
    // What the passes leave for the take (--cid=extract's folders) is written by the archive.
    mimeuri::archive::ExtractFiles take_hook;
    return mimeuri::run(opts, passes, 0, 1, nullptr, &take_hook);
}

} // namespace

int main(int argc, char **argv)
{
    std::setlocale(LC_ALL, "");
    mimeuri::proc_title::init(argc, argv); // before anything reads argv: a service's children retitle
    // A closed output pipe must surface as EPIPE (exit 74), not kill us silently.
    std::signal(SIGPIPE, SIG_IGN);
    // A file-size limit (ulimit -f: Postfix's local and pipe delivery set it from
    // mailbox_size_limit) must surface as EFBIG, a temporary failure (75) like a full disk,
    // with the temporary files and the dotlock removed, not kill us (SIGXFSZ, exit 153).
    std::signal(SIGXFSZ, SIG_IGN);
    g_log_set_default_handler(log_handler, nullptr);
    mimeuri::install_signal_cleanup();
    g_mime_init();

    const bool cturi = argc > 1 && (std::strcmp(argv[1], "ct2uri") == 0 || std::strcmp(argv[1], "uri2ct") == 0);
    const bool index = argc > 1 && std::strcmp(argv[1], "index") == 0;
    const bool verify = argc > 1 && std::strcmp(argv[1], "offload-verify") == 0;
    const bool archive = argc > 1 && std::strcmp(argv[1], "archive") == 0;
    int status = 0;
    try {
        if (cturi) {
            status = mimeuri::run_cturi_command(argc - 1, argv + 1);
        } else if (index) {
            status = mimeuri::run_index_command(argc - 1, argv + 1);
        } else if (archive) {
            status = mimeuri::run_archive_command(argc - 1, argv + 1);
        } else if (verify) {
            status = mimeuri::run_offload_verify_command(argc - 1, argv + 1);
        } else {
            status = run_filter(argc, argv);
        }
    } catch (const std::bad_alloc &) {
        // Out of memory is temporary for every entry point: try again later.
        g_warning("internal error: out of memory");
        status = 75;
    } catch (const std::exception &e) {
        // Nothing may escape, from the option parsing and the passes' construction as from
        // the run: for the filter an unexpected failure is a temporary failure, so the MTA
        // keeps the message and retries rather than losing or bouncing it. The subcommands
        // carry no mail in transit: theirs is an internal error (EX_SOFTWARE).
        g_warning("internal error: %s", e.what());
        status = cturi || index || verify || archive ? 70 : 75;
    } catch (...) {
        g_warning("internal error: unknown exception");
        status = cturi || index || verify || archive ? 70 : 75;
    }
    g_mime_shutdown();
    return status;
}
