package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/strongroom/strongroom/internal/app"
)

// errDescribed stops a command run in describe mode once it has defined
// its flags (e.parse answers it before parsing anything).
var errDescribed = errors.New("described")

// describe returns the flags and the synopsis of c: its flagSet, or what
// its run defines before it parses (run in describe mode: no input, no
// output, no server, a cancelled context). A leaf command whose run does
// not reach e.parse first is an error (its help could not list its flags).
func describe(c *command) (*flag.FlagSet, string, error) {
	if c.flagSet != nil {
		return c.flagSet(), c.synopsis, nil
	}
	if c.run == nil {
		return nil, c.synopsis, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := &env{ctx: ctx, getenv: func(string) string { return "" }, stdin: strings.NewReader(""), out: io.Discard, errw: io.Discard,
		describing: true, cmd: c}
	e.in = bufio.NewReader(e.stdin)
	if err := c.run(e, nil); !errors.Is(err, errDescribed) {
		return nil, c.synopsis, fmt.Errorf("%s does not define its flags and parse them first (describe: %v)", c.path, err)
	}
	synopsis := e.synopsis
	if c.synopsis != "" {
		synopsis = c.synopsis
	}
	return e.fs, synopsis, nil
}

// helpText is the help of one command: what it does, its usage, its
// subcommands, its flags with their defaults, examples and notes.
func helpText(c *command) string {
	fs, synopsis, _ := describe(c)
	var b strings.Builder
	fmt.Fprintf(&b, "strongroom %s: %s\n\nUsage:\n", c.path, c.summary)
	if synopsis == "" && c.run != nil {
		synopsis = c.path
	}
	if synopsis != "" {
		fmt.Fprintf(&b, "  strongroom %s\n", synopsis)
	}
	if len(c.subs) > 0 {
		fmt.Fprintf(&b, "  strongroom %s SUBCOMMAND [flags]\n\nSubcommands:\n", c.path)
		for _, s := range c.subs {
			fmt.Fprintf(&b, "  %-15s %s\n", s.name, s.summary)
		}
	}
	if fs != nil {
		var flags strings.Builder
		fs.VisitAll(func(f *flag.Flag) { writeFlag(&flags, f) })
		if flags.Len() > 0 {
			fmt.Fprintf(&b, "\nFlags:\n%s", flags.String())
		}
	}
	examples := c.example
	if examples == "" { // a group: the first example of each subcommand
		for _, s := range c.subs {
			first, _, _ := strings.Cut(s.example, "\n")
			examples = strings.TrimPrefix(examples+"\n"+first, "\n")
		}
	}
	if examples != "" {
		b.WriteString("\nExamples:\n")
		for line := range strings.SplitSeq(examples, "\n") {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	if c.notes != "" {
		fmt.Fprintf(&b, "\n%s\n", c.notes)
	}
	if len(c.subs) > 0 {
		fmt.Fprintf(&b, "\nRun \"strongroom %s SUBCOMMAND --help\" for a subcommand's flags.\n", c.path)
	}
	return b.String()
}

// writeFlag writes one flag as its help lists it: --name value, then its
// usage and its default (when not the zero value) on the next line.
func writeFlag(w io.Writer, f *flag.Flag) {
	value, usage := flag.UnquoteUsage(f)
	dash := "--"
	if len(f.Name) == 1 {
		dash = "-"
	}
	head := "  " + dash + f.Name
	if value != "" {
		head += " " + value
	}
	switch f.DefValue {
	case "", "false", "0", "[]":
	default:
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	fmt.Fprintf(w, "%s\n        %s\n", head, usage)
}

// topUsage is the usage of strongroom: every command of the table, by
// section, then what the client commands share.
func topUsage() string {
	var b strings.Builder
	b.WriteString("usage: strongroom <command> [flags]\n")
	section := ""
	for _, c := range table {
		if c.section != section {
			section = c.section
			fmt.Fprintf(&b, "\n%s:\n", section)
		}
		fmt.Fprintf(&b, "  %-14s %s\n", c.name, c.summary)
		if len(c.subs) > 0 {
			var names []string
			for _, s := range c.subs {
				names = append(names, s.name)
			}
			fmt.Fprintf(&b, "  %-14s subcommands: %s\n", "", strings.Join(names, ", "))
		}
	}
	b.WriteString(usageTail)
	return b.String()
}

const usageTail = `
Common flags of the client commands:
  -o table|json   output format (default table; json prints the API's records)
  --org ID|NAME   the organization (default: your only one)
  --step-up M     answer a step-up with app (your phone), totp (authenticator
                  code, asked on stdin) or email (code sent by email); default:
                  app when you have it, else totp

Environment:
  STRONGROOM_URL            the server (default ` + DefaultURL + `)
  STRONGROOM_TOKEN          a session token or API key to use instead of the
                            token file
  STRONGROOM_SANDBOX_TOKEN  the sandbox token of the sandbox commands (the
                            test server prints it when it starts)
  XDG_CONFIG_HOME           where the token file lives (default ~/.config):
                            $XDG_CONFIG_HOME/strongroom/token
  The server commands' variables are listed by "strongroom server --help".

Exit codes:
  0 ok  1 other error  2 usage or invalid request  3 not signed in
  4 forbidden or step-up not completed  5 not found  6 refused (conflict,
  insufficient funds, …)  7 rate limited  130 interrupted

Run "strongroom help COMMAND" (or "strongroom COMMAND --help") for a command's
usage, flags and examples.
`

// isHelpArg reports whether a is a request for help.
func isHelpArg(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// hasHelpFlag reports whether args ask for help before any "--".
func hasHelpFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelpArg(a) {
			return true
		}
	}
	return false
}

func cmdHelp(e *env, args []string) error {
	fs := e.flags("help", "help [COMMAND [SUBCOMMAND]]")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		_, err := io.WriteString(e.out, topUsage())
		return err
	}
	c := lookup(pos[0])
	if c == nil {
		return usagef("unknown command %q: run \"strongroom help\" for the list of commands", pos[0])
	}
	for _, w := range pos[1:] {
		s := c.sub(w)
		if s == nil {
			return usagef("%s has no subcommand %q: run \"strongroom help %s\" for its subcommands", c.path, w, c.path)
		}
		c = s
	}
	_, err = io.WriteString(e.out, helpText(c))
	return err
}

func cmdVersion(e *env, args []string) error {
	fs := e.flags("version", "version")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageHelpf("version takes no arguments")
	}
	_, err = fmt.Fprintln(e.out, "strongroom", app.Version)
	return err
}
