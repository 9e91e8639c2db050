// The pass sections of the report (report_section.hh): the kinds registered, and a report's
// sections copied and sent between processes.
#include "report_section.hh"

#include "record.hh"

#include <stdexcept>

namespace mimeuri {

namespace {

std::vector<const ReportSectionType *> &types()
{
    static std::vector<const ReportSectionType *> t;
    return t;
}

} // namespace

void register_section_type(const ReportSectionType &t)
{
    for (const ReportSectionType *k : types())
        if (k == &t) return;
    types().push_back(&t);
}

const std::vector<const ReportSectionType *> &section_types() { return types(); }

const ReportSectionType *section_type(std::string_view name)
{
    for (const ReportSectionType *k : types())
        if (k->name == name) return k;
    return nullptr;
}

ReportSections::ReportSections(const ReportSections &o)
{
    for (const auto &s : o.list_) list_.push_back(s->clone());
}

ReportSections &ReportSections::operator=(const ReportSections &o)
{
    if (this != &o) *this = ReportSections(o);
    return *this;
}

ReportSection *ReportSections::find(const ReportSectionType &t) const
{
    for (const auto &s : list_)
        if (&s->type() == &t) return s.get();
    return nullptr;
}

ReportSection &ReportSections::add(const ReportSectionType &t)
{
    register_section_type(t); // a pass run without the registry (a test) still has its kind known
    list_.push_back(t.make());
    return *list_.back();
}

std::string ReportSections::serialize() const
{
    Record r;
    r.put(list_.size());
    for (const auto &s : list_) {
        r.put(std::string(s->type().name));
        r.put(s->save());
    }
    return r.take();
}

ReportSections ReportSections::deserialize(std::string bytes)
{
    Record r(std::move(bytes));
    ReportSections out;
    for (std::size_t n = r.get_size(); n > 0; --n) {
        const std::string name = r.get();
        const ReportSectionType *t = section_type(name);
        if (!t || out.find(*t)) throw std::runtime_error("wire: unknown or repeated report section '" + name + "'");
        out.list_.push_back(t->make());
        out.list_.back()->load(r.get());
    }
    return out;
}

} // namespace mimeuri
