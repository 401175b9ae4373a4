package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// The completion scripts are made from the command table, as the help is:
// the commands, their subcommands and the flags each one defines.

func cmdCompletion(e *env, args []string) error {
	fs := e.flags("completion", "completion bash|zsh|fish")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("completion takes the shell: bash, zsh or fish")
	}
	var script string
	switch pos[0] {
	case "bash":
		script = bashCompletion()
	case "zsh":
		script = zshCompletion()
	case "fish":
		script = fishCompletion()
	default:
		return usageHelpf("completion knows bash, zsh and fish, not %q", pos[0])
	}
	_, err = io.WriteString(e.out, script)
	return err
}

// completionEntry is what one command line completes to: "" for the
// top level, "pay", "webhooks", "webhooks create".
type completionEntry struct {
	path    string
	words   []*command // the subcommands (or, at the top level, the commands)
	flags   []*flag.Flag
	summary string
}

// completionEntries walks the table: the top level first, then every
// command and subcommand in order.
func completionEntries() []completionEntry {
	entries := []completionEntry{{path: "", words: table}}
	var walk func(c *command)
	walk = func(c *command) {
		en := completionEntry{path: c.path, words: c.subs, summary: c.summary}
		if fs, _, err := describe(c); err == nil && fs != nil {
			fs.VisitAll(func(f *flag.Flag) { en.flags = append(en.flags, f) })
		}
		entries = append(entries, en)
		for _, s := range c.subs {
			walk(s)
		}
	}
	for _, c := range table {
		walk(c)
	}
	return entries
}

// flagWord is a flag as typed: -o, --org.
func flagWord(f *flag.Flag) string {
	if len(f.Name) == 1 {
		return "-" + f.Name
	}
	return "--" + f.Name
}

func names(cs []*command) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# bash completion for strongroom; made by "strongroom completion bash".
# Load it with: source <(strongroom completion bash)
_strongroom() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    local cmd="" sub="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            -*) ;;
            *)
                if [[ -z "$cmd" ]]; then
                    cmd="${COMP_WORDS[i]}"
                elif [[ -z "$sub" ]]; then
                    sub="${COMP_WORDS[i]}"
                fi
                ;;
        esac
    done
    local words=""
    case "$cmd/$sub" in
`)
	// Longest paths first: "webhooks/create" before "webhooks/*".
	entries := completionEntries()
	sort.SliceStable(entries, func(i, j int) bool {
		return strings.Count(entries[i].path, " ") > strings.Count(entries[j].path, " ")
	})
	for _, en := range entries {
		var words []string
		words = append(words, names(en.words)...)
		for _, f := range en.flags {
			words = append(words, flagWord(f))
		}
		pattern := "/"
		switch parts := strings.Fields(en.path); len(parts) {
		case 1:
			pattern = parts[0] + "/*"
			if len(en.words) > 0 {
				pattern = parts[0] + "/" // a group: its subcommands
			}
		case 2:
			pattern = parts[0] + "/" + parts[1]
		}
		fmt.Fprintf(&b, "        %s) words=%q ;;\n", pattern, strings.Join(words, " "))
	}
	b.WriteString(`    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _strongroom strongroom
`)
	return b.String()
}

// zshQuote quotes s for a zsh single-quoted word.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func zshCompletion() string {
	var b strings.Builder
	b.WriteString(`#compdef strongroom
# zsh completion for strongroom; made by "strongroom completion zsh".
# Put it in a directory of $fpath as _strongroom, or: source <(strongroom completion zsh)
_strongroom() {
    local cmd="" sub="" i
    for ((i = 2; i < CURRENT; i++)); do
        case "${words[i]}" in
            -*) ;;
            *)
                if [[ -z "$cmd" ]]; then
                    cmd="${words[i]}"
                elif [[ -z "$sub" ]]; then
                    sub="${words[i]}"
                fi
                ;;
        esac
    done
    local -a commands flags
    case "$cmd/$sub" in
`)
	entries := completionEntries()
	sort.SliceStable(entries, func(i, j int) bool {
		return strings.Count(entries[i].path, " ") > strings.Count(entries[j].path, " ")
	})
	for _, en := range entries {
		pattern := "/"
		switch parts := strings.Fields(en.path); len(parts) {
		case 1:
			pattern = parts[0] + "/*"
			if len(en.words) > 0 {
				pattern = parts[0] + "/"
			}
		case 2:
			pattern = parts[0] + "/" + parts[1]
		}
		var cmds, flags []string
		for _, c := range en.words {
			cmds = append(cmds, zshQuote(c.name+":"+strings.ReplaceAll(c.summary, ":", `\:`)))
		}
		for _, f := range en.flags {
			flags = append(flags, zshQuote(flagWord(f)))
		}
		fmt.Fprintf(&b, "        %s) commands=(%s); flags=(%s) ;;\n", pattern, strings.Join(cmds, " "), strings.Join(flags, " "))
	}
	b.WriteString(`    esac
    if [[ "$PREFIX" == -* ]]; then
        compadd -- $flags
    elif (( ${#commands} )); then
        _describe 'command' commands
    else
        _files
    fi
}
if [[ "${funcstack[1]}" == "_strongroom" ]]; then
    _strongroom "$@"
else
    compdef _strongroom strongroom
fi
`)
	return b.String()
}

// fishQuote quotes s for fish.
func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString(`# fish completion for strongroom; made by "strongroom completion fish".
# Save it as ~/.config/fish/completions/strongroom.fish
`)
	for _, en := range completionEntries() {
		parts := strings.Fields(en.path)
		var cond string
		switch len(parts) {
		case 0:
			cond = "__fish_use_subcommand"
		case 1:
			cond = "__fish_seen_subcommand_from " + parts[0]
			if len(en.words) > 0 {
				cond += "; and not __fish_seen_subcommand_from " + strings.Join(names(en.words), " ")
			}
		case 2:
			cond = "__fish_seen_subcommand_from " + parts[0] + "; and __fish_seen_subcommand_from " + parts[1]
		}
		for _, c := range en.words {
			fmt.Fprintf(&b, "complete -c strongroom -n %s -a %s -d %s\n", fishQuote(cond), c.name, fishQuote(c.summary))
		}
		for _, f := range en.flags {
			opt := "-l " + f.Name
			if len(f.Name) == 1 {
				opt = "-s " + f.Name
			}
			value, usage := flag.UnquoteUsage(f)
			req := ""
			if value != "" {
				req = " -r"
			}
			fmt.Fprintf(&b, "complete -c strongroom -n %s %s%s -d %s\n", fishQuote(cond), opt, req, fishQuote(usage))
		}
	}
	return b.String()
}
