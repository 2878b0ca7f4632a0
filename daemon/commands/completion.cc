// The bash completion script, made from the command line that parses (cli_options.h).
#include "daemon/commands/completion.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "daemon/commands/cli_options.h"

namespace pgwaitprof::commands {
namespace {

// The values an option accepts when CLI11 knows them (IsMember, CheckedTransformer): the first
// "{a,b,c}" of its type name, each without a transformer's "->value".
std::vector<std::string> option_choices(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  std::vector<std::string> choices;
  if (open == std::string::npos || close == std::string::npos) return choices;
  std::string item;
  for (const char character : type.substr(open + 1, close - open - 1) + ",") {
    if (character != ',') {
      item += character;
      continue;
    }
    choices.push_back(item.substr(0, item.find("->")));
    item.clear();
  }
  return choices;
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// One command's part of the completion function: its subcommands and options for the word
// being completed, the values of its options, and the options that take a value (whose value
// is not a subcommand when the words before the cursor are walked).
struct CompletionCases {
  std::string walk;    // case "$path/$word" arms that descend into a subcommand
  std::string skip;    // case "$path $word" arms of options that take a value
  std::string values;  // case "$path $prev" arms that complete an option's value
  std::string words;   // case "$path" arms with the subcommands and options
};

void add_completion_cases(const CLI::App& command, const std::string& path,
                          CompletionCases& cases) {
  std::vector<std::string> words;
  for (const CLI::App* subcommand : command.get_subcommands({})) {
    const std::string sub_path = path + "/" + subcommand->get_name();
    cases.walk += "      \"" + sub_path + "\") path=" + sub_path + " ;;\n";
    words.push_back(subcommand->get_name());
    add_completion_cases(*subcommand, sub_path, cases);
  }
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_positional()) {
      // A positional with known values (explain's event names) completes them.
      const auto choices = option_choices(*option);
      words.insert(words.end(), choices.begin(), choices.end());
      continue;
    }
    std::vector<std::string> names;
    for (const auto& name : option->get_snames()) names.push_back("-" + name);
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    words.insert(words.end(), names.begin(), names.end());
    if (option->get_expected_min() == 0) continue;  // a flag
    const auto choices = option_choices(*option);
    for (const auto& name : names) {
      cases.skip += "      \"" + path + " " + name + "\") ((index++)) ;;\n";
      cases.values += "    \"" + path + " " + name + "\") ";
      cases.values += choices.empty() ? "compopt -o default; COMPREPLY=(); return 0 ;;\n"
                                      : "COMPREPLY=($(compgen -W \"" + joined(choices) +
                                            "\" -- \"$cur\")); return 0 ;;\n";
    }
  }
  cases.words += "    \"" + path + "\") words=\"" + joined(words) + "\" ;;\n";
}

}  // namespace

std::string bash_completion() {
  CLI::App app;
  Commands commands;
  add_commands(app, commands);
  CompletionCases cases;
  add_completion_cases(app, "", cases);
  // Positionals (targets, run directories, plans) complete as files; after "--" the words
  // belong to the load generator.
  return fmt::format(
      R"(# bash completion for pgwaitprof, generated from its command line at build time
# (daemon/completion_main.cc): do not edit.
_pgwaitprof() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD - 1]}}
  local path="" word words index
  for ((index = 1; index < COMP_CWORD; index++)); do
    word=${{COMP_WORDS[index]}}
    if [[ $word == -- ]]; then
      compopt -o default
      COMPREPLY=()
      return 0
    fi
    case "$path $word" in
{}    esac
    case "$path/$word" in
{}    esac
  done
  case "$path $prev" in
{}  esac
  case "$path" in
{}  esac
  if [[ $cur == -* || -z $path ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    compopt -o default
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}}
complete -F _pgwaitprof pgwaitprof
)",
      cases.skip, cases.walk, cases.values, cases.words);
}

}  // namespace pgwaitprof::commands
