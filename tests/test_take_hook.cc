// The run's TakeHook (src/mime/engine.hh): the work a pass leaves for the take is handed to
// the hook the entry point gave run(), once per plan, in message order, never with --check,
// then finish() once; a failure fails that message only; and a plan with such work and no
// hook fails rather than report it done. A pass of the test's own leaves the work, so the
// run is seen to know nothing of what it is (issue 50: extraction above the passes).
#include "helpers.hh"
#include "run.hh"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mimeuri;

namespace {

// Leaves "work:N" (N: the message's number) for the take of every message.
class LeavesWork final : public Pass {
public:
    std::string_view name() const override { return "leaves-work"; }
    Status apply(MessageContext &ctx) override
    {
        ctx.at_take() = "work:" + std::to_string(ctx.at().number);
        return ok();
    }
};

class Recorder final : public TakeHook {
public:
    std::vector<std::string> taken;
    int finished{0};
    std::string refuse; // this work fails
    Status take(Plan &plan) override
    {
        taken.push_back(plan.at_take);
        if (plan.at_take == refuse) return Error{Code::CantCreate, "leaves-work: refused " + refuse};
        return ok();
    }
    Status finish() override
    {
        ++finished;
        return ok();
    }
};

const std::string kMbox = "From a@x Thu Jan  1 00:00:00 2026\nMessage-ID: <1@x>\n\none\n\n"
                          "From a@x Thu Jan  1 00:00:00 2026\nMessage-ID: <2@x>\n\ntwo\n\n"
                          "From a@x Thu Jan  1 00:00:00 2026\nMessage-ID: <3@x>\n\nthree\n";

int run_with(Options opts, TakeHook *hook)
{
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<LeavesWork>());
    RunStats st;
    return run(opts, passes, 0, 1, &st, hook);
}

} // namespace

TEST_CASE("take hook: each plan's work handed over in message order, then finish once")
{
    testing::TempDir d;
    Options opts;
    opts.inputs = {d.file("in.mbox", kMbox)};
    opts.output = d / "out.mbox";
    Recorder hook;
    CHECK(run_with(opts, &hook) == 0);
    CHECK(hook.taken == std::vector<std::string>{"work:1", "work:2", "work:3"});
    CHECK(hook.finished == 1);
    CHECK(testing::read_file(d / "out.mbox") == kMbox); // the work changes no byte of the mail
}

TEST_CASE("take hook: never with --check; a refused work fails its message only")
{
    testing::TempDir d;
    Options opts;
    opts.inputs = {d.file("in.mbox", kMbox)};
    opts.check = true;
    opts.report_path = d / "check.json";
    Recorder checked;
    CHECK(run_with(opts, &checked) == 0);
    CHECK(checked.taken.empty());

    opts.check = false;
    opts.report_path.clear();
    opts.output = d / "out.mbox";
    Recorder hook;
    hook.refuse = "work:2";
    RunStats st;
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<LeavesWork>());
    run(opts, passes, 0, 1, &st, &hook);
    CHECK(hook.taken.size() == 3);
    CHECK(st.failed == 1);
    CHECK(testing::read_file(d / "out.mbox") == kMbox); // --on-error=pass: written as it came
}

TEST_CASE("take hook: work with no hook to do it fails the message")
{
    testing::TempDir d;
    Options opts;
    opts.inputs = {d.file("in.mbox", kMbox)};
    opts.output = d / "out.mbox";
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<LeavesWork>());
    RunStats st;
    run(opts, passes, 0, 1, &st, nullptr);
    CHECK(st.failed == 3);
}
