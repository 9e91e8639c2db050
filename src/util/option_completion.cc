// option_completion: the bash completion script, made from an option table.
//
// SYNOPSIS  bash_completion(table, subcommands): a script that completes every option (a
//           choice's values, a list's items, a file or a folder) and the subcommands; the
//           build writes it (completion/), so it always matches the options.
#include "option_table.hh"

namespace mimeuri {

namespace {

bool takes_argument(const OptionSpec &s) { return s.kind != OptionKind::Flag; }

} // namespace

std::string bash_completion(const OptionTable &t, const std::vector<std::string> &subcommands)
{
    std::string words, value_options, cases;
    for (const auto &s : t.options) {
        if (s.hidden) continue;
        std::string names = "--" + s.long_name + (s.short_name ? std::string("|-") + s.short_name : "");
        words += (words.empty() ? "" : " ") + ("--" + s.long_name) + (takes_argument(s) ? "=" : "");
        if (!takes_argument(s)) continue;
        value_options += (value_options.empty() ? "" : "|") + names;
        std::string reply;
        if (s.kind == OptionKind::Choice)
            reply = "COMPREPLY=($(compgen -W '" + join(words_of(s), " ") + "' -- \"$cur\"))";
        else if (s.kind == OptionKind::List && !s.choices.empty())
            reply = "COMPREPLY=($(compgen -P \"${cur%\"${cur##*,}\"}\" -W '" + join(s.choices, " ") +
                    "' -- \"${cur##*,}\"))";
        else if (s.kind == OptionKind::Path && s.arg_name == "DIR")
            reply = "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))";
        else if (s.kind == OptionKind::Path)
            reply = "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))";
        else
            reply = "COMPREPLY=()";
        cases += "        " + names + ") " + reply + " ;;\n";
    }
    return "# bash completion for mimeuri(1), made from its option table when it was built.\n"
           "_mimeuri()\n"
           "{\n"
           "    local cur=${COMP_WORDS[COMP_CWORD]} prev= opt=\n"
           "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
           "    case ${COMP_WORDS[1]-} in\n"
           "    " + join(subcommands, "|") + ")\n"
           "        ((COMP_CWORD > 1)) && [[ $cur == -* ]] && COMPREPLY=($(compgen -W '--label-format= --help' -- \"$cur\"))\n"
           "        return ;;\n"
           "    esac\n"
           "    # --name=value: bash splits it at the '=' (COMP_WORDBREAKS), or not.\n"
           "    if [[ $cur == = ]]; then opt=$prev cur=\n"
           "    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then opt=${COMP_WORDS[COMP_CWORD-2]}\n"
           "    elif [[ $cur == --*=* ]]; then opt=${cur%%=*} cur=${cur#*=}\n"
           "    else case $prev in " + value_options + ") opt=$prev ;; esac\n"
           "    fi\n"
           "    if [[ -n $opt ]]; then\n"
           "        case $opt in\n" + cases +
           "        esac\n"
           "        return\n"
           "    fi\n"
           "    if [[ $cur == -* ]]; then\n"
           "        COMPREPLY=($(compgen -W '" + words + "' -- \"$cur\"))\n"
           "        [[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null\n"
           "        return\n"
           "    fi\n"
           "    compopt -o filenames 2>/dev/null\n"
           "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
           "    ((COMP_CWORD == 1)) && COMPREPLY+=($(compgen -W '" + join(subcommands, " ") + "' -- \"$cur\"))\n"
           "    return 0\n"
           "}\n"
           "complete -F _mimeuri mimeuri\n";
}

} // namespace mimeuri
