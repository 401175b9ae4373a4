package app

import (
	"errors"
	"flag"
)

// UsageError is a wrong command line of a server command (an unknown flag,
// an unexpected argument): the command line's usage exit code, not a failure
// of the server.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ConfigFlags is the configuration flags of the server commands (server,
// migrate), each once, with its built-in default and its environment
// variable in the usage: what their help and the shell completion show.
// (Each flag is also accepted as --strongroom-NAME.)
func ConfigFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, s := range settings(map[string]*string{}) {
		fs.String(flagName(s.env), s.def, s.help+" ($"+s.env+")")
	}
	return fs
}

// isHelp reports whether err is the flag package's answer to -h or --help.
func isHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }
