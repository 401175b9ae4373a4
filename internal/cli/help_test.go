package cli

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/internal/app"
)

// runLocal runs a command that needs no server (help, version, completion,
// usage errors), with STRONGROOM_URL at a closed port.
func runLocal(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errw strings.Builder
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "STRONGROOM_URL" {
			return "http://127.0.0.1:1"
		}
		if k == "XDG_CONFIG_HOME" {
			return t.TempDir()
		}
		return ""
	}
	code := Run(t.Context(), args, getenv, strings.NewReader(""), &out, &errw)
	return result{out.String(), errw.String(), code}
}

// goldenHelp compares got with testdata/help/<name>.golden; go test
// -update rewrites it.
func goldenHelp(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "help", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: every command's help has a golden file (go test ./internal/cli -run TestHelp -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the help of %s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// everyCommand is every command and subcommand of the table.
func everyCommand() []*command {
	var all []*command
	var walk func(c *command)
	walk = func(c *command) {
		all = append(all, c)
		for _, s := range c.subs {
			walk(s)
		}
	}
	for _, c := range table {
		walk(c)
	}
	return all
}

// TestHelpOfEveryCommand walks every command the top-level usage lists,
// and every subcommand it names: `help CMD`, `CMD --help` and `CMD -h`
// exit 0 and print the command's own usage, the same each way, as its
// golden file has it. A command added without a summary, an example, flags
// parsed first or a golden file fails here.
func TestHelpOfEveryCommand(t *testing.T) {
	top := runLocal(t, nil, "help")
	if top.code != 0 || top.stderr != "" {
		t.Fatalf("strongroom help: %+v", top)
	}
	goldenHelp(t, "strongroom", top.stdout)
	for _, args := range [][]string{{"--help"}, {"-h"}} {
		if r := runLocal(t, nil, args...); r.code != 0 || r.stdout != top.stdout {
			t.Errorf("strongroom %s: exit %d, or not the usage of strongroom help", args[0], r.code)
		}
	}
	// No command at all: the usage, on stderr, and the usage exit code.
	if r := runLocal(t, nil); r.code != ExitUsage || r.stdout != "" || r.stderr != top.stdout {
		t.Errorf("strongroom alone: %+v", r)
	}

	// The commands as the usage lists them: "  name  summary", then for a
	// group "  subcommands: a, b".
	listed := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*) +\S.*\n(?:  +subcommands: (.*)\n)?`)
	var paths []string
	commands, _, _ := strings.Cut(top.stdout, "\nCommon flags")
	for _, m := range listed.FindAllStringSubmatch(commands, -1) {
		paths = append(paths, m[1])
		if m[2] != "" {
			for sub := range strings.SplitSeq(m[2], ", ") {
				paths = append(paths, m[1]+" "+sub)
			}
		}
	}
	if len(paths) != len(everyCommand()) {
		t.Errorf("the usage lists %d commands and subcommands, the table has %d:\n%s", len(paths), len(everyCommand()), strings.Join(paths, "\n"))
	}
	for _, path := range paths {
		words := strings.Fields(path)
		help := runLocal(t, nil, append([]string{"help"}, words...)...)
		if help.code != 0 || help.stderr != "" || !strings.HasPrefix(help.stdout, "strongroom "+path+": ") ||
			!strings.Contains(help.stdout, "\nUsage:\n  strongroom "+path) || !strings.Contains(help.stdout, "\nExamples:\n  ") {
			t.Errorf("strongroom help %s: exit %d, stderr %q, stdout:\n%s", path, help.code, help.stderr, help.stdout)
			continue
		}
		for _, flag := range []string{"--help", "-h"} {
			r := runLocal(t, nil, append(words, flag)...)
			if r.code != 0 || r.stdout != help.stdout || r.stderr != "" {
				t.Errorf("strongroom %s %s: exit %d, stderr %q; want exit 0 and the text of help %s", path, flag, r.code, r.stderr, path)
			}
		}
		goldenHelp(t, strings.ReplaceAll(path, " ", "-"), help.stdout)
	}

	// Every command's flags come from its code, parsed before it acts.
	for _, c := range everyCommand() {
		if c.summary == "" || c.example == "" && len(c.subs) == 0 {
			t.Errorf("%s has no summary or no example", c.path)
		}
		if _, _, err := describe(c); err != nil {
			t.Error(err)
		}
	}
}

func TestHelpDetails(t *testing.T) {
	// The server's flags, each once, with defaults and variables.
	r := runLocal(t, nil, "server", "--help")
	if r.code != 0 || strings.Count(r.stdout, "\n  --addr string\n") != 1 || strings.Contains(r.stdout, "\n  --strongroom-") ||
		len(regexp.MustCompile(`(?m)^  --`).FindAllString(r.stdout, -1)) != countFlags(app.ConfigFlags("x")) ||
		!strings.Contains(r.stdout, "($STRONGROOM_ADDR) (default 127.0.0.1:8080)") {
		t.Fatalf("server --help: %+v", r)
	}
	// migrate says migrate.
	r = runLocal(t, nil, "migrate", "--help")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "strongroom migrate: ") || strings.Contains(r.stdout, "strongroom server") {
		t.Fatalf("migrate --help: %+v", r)
	}
	// A wrong flag of the server: one line and where the help is, exit 2.
	r = runLocal(t, nil, "server", "--no-such-flag")
	if r.code != ExitUsage || r.stderr != "strongroom: flag provided but not defined: -no-such-flag\nRun \"strongroom server --help\" for its usage.\n" {
		t.Fatalf("server --no-such-flag: %+v", r)
	}
	// The server commands' own failures are theirs: a database that is not
	// there is not the client commands' server.
	r = runLocal(t, nil, "migrate", "--database", "postgres://app@127.0.0.1:1/none?sslmode=disable")
	if r.code != ExitError || strings.Contains(r.stderr, "STRONGROOM_URL") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("migrate without its database: %+v", r)
	}
	r = runLocal(t, nil, "migrate", "extra")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `unexpected argument "extra"`) {
		t.Fatalf("migrate extra: %+v", r)
	}
	// Help after other flags, and help of help.
	if r := runLocal(t, nil, "pay", "--amount", "1", "-h"); r.code != 0 || !strings.HasPrefix(r.stdout, "strongroom pay: ") {
		t.Fatalf("pay --amount 1 -h: %+v", r)
	}
	if r := runLocal(t, nil, "help", "no-such-command"); r.code != ExitUsage || !strings.Contains(r.stderr, `unknown command "no-such-command"`) {
		t.Fatalf("help no-such-command: %+v", r)
	}
	if r := runLocal(t, nil, "help", "webhooks", "melt"); r.code != ExitUsage || !strings.Contains(r.stderr, `webhooks has no subcommand "melt"`) {
		t.Fatalf("help webhooks melt: %+v", r)
	}
	// A group without its subcommand: what it has, exit 2.
	r = runLocal(t, nil, "approvals")
	if r.code != ExitUsage || r.stderr != "strongroom: approvals needs a subcommand: list, approve, reject\nRun \"strongroom approvals --help\" for its usage.\n" {
		t.Fatalf("approvals: %+v", r)
	}
	// An unknown flag of a client command names it and the help.
	r = runLocal(t, nil, "balances", "--frobnicate")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "-frobnicate") || !strings.Contains(r.stderr, `Run "strongroom balances --help"`) {
		t.Fatalf("balances --frobnicate: %+v", r)
	}
}

func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

func TestVersion(t *testing.T) {
	a, b := runLocal(t, nil, "version"), runLocal(t, nil, "--version")
	if a.code != 0 || b.code != 0 || a.stdout != "strongroom "+app.Version+"\n" || b.stdout != a.stdout {
		t.Fatalf("version %+v, --version %+v", a, b)
	}
}

func TestCompletionScripts(t *testing.T) {
	scripts := map[string]string{}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := runLocal(t, nil, "completion", shell)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("completion %s: %+v", shell, r)
		}
		scripts[shell] = r.stdout
		// Every command, subcommand and flag is in every script.
		for _, c := range everyCommand() {
			if !strings.Contains(r.stdout, c.name) {
				t.Errorf("completion %s misses %s", shell, c.path)
			}
		}
		for _, flag := range []string{"--contact", "--match-code", "--database", "--forward-to"} {
			if !strings.Contains(r.stdout, strings.TrimPrefix(flag, "--")) {
				t.Errorf("completion %s misses %s", shell, flag)
			}
		}
		// The shell reads it.
		if path, err := exec.LookPath(shell); err == nil {
			f := filepath.Join(t.TempDir(), "completion."+shell)
			if err := os.WriteFile(f, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(path, "-n", f).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		} else if shell == "bash" {
			t.Errorf("bash is not installed: %v", err)
		}
	}
	if !strings.Contains(scripts["bash"], `webhooks/create) words="--description --event -o --org --step-up --url"`) ||
		!strings.Contains(scripts["bash"], "complete -o default -F _strongroom strongroom") {
		t.Errorf("bash script:\n%s", scripts["bash"])
	}
	if r := runLocal(t, nil, "completion", "tcsh"); r.code != ExitUsage || !strings.Contains(r.stderr, `not "tcsh"`) {
		t.Fatalf("completion tcsh: %+v", r)
	}
}

// TestBashCompletionCompletes runs the bash script's function.
func TestBashCompletionCompletes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := runLocal(t, nil, "completion", "bash").stdout
	for _, tc := range []struct{ line, want string }{
		{"strongroom web", "webhooks"},
		{"strongroom webhooks cr", "create"},
		{"strongroom webhooks create --u", "--url"},
		{"strongroom sandbox approve --ma", "--match-code"},
		{"strongroom server --data", "--database"},
	} {
		words := strings.Fields(tc.line)
		prog := script + "\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_strongroom\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tc.want {
			t.Errorf("%q completes to %q (%v), want %q", tc.line, out, err, tc.want)
		}
	}
}

// TestErrorsSayWhatToDo: a server that is not there, a bad id, and never
// a doubled "strongroom: strongroom:" prefix.
func TestErrorsSayWhatToDo(t *testing.T) {
	vars := map[string]string{"STRONGROOM_TOKEN": "srs_not_checked"}
	r := runLocal(t, vars, "balances")
	want := "strongroom: cannot reach the server at http://127.0.0.1:1 (connection refused): start one with \"strongroom server\", or set STRONGROOM_URL to its address\n"
	if r.code != ExitError || r.stderr != want {
		t.Fatalf("no server: %+v", r)
	}
	r = runLocal(t, vars, "approvals", "approve", "not-a-uuid")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `approval id "not-a-uuid" is not a UUID`) {
		t.Fatalf("bad uuid: %+v", r)
	}
	r = runLocal(t, vars, "sandbox", "approve", "nope", "--token", "x")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `approval id "nope" is not a UUID`) {
		t.Fatalf("sandbox approve nope: %+v", r)
	}
	r = runLocal(t, vars, "sandbox", "deposit", "--currency", "EUR", "--amount", "1")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "STRONGROOM_SANDBOX_TOKEN") {
		t.Fatalf("no sandbox token: %+v", r)
	}

	// Every kind of failure printed once with one prefix, including the
	// client's own errors that carry "strongroom: " themselves.
	for _, err := range []error{
		&client.InvalidIDError{What: "card id", Value: "x"},
		&client.StepUpError{Status: "declined", Err: &client.Error{StatusCode: 403, Type: "step_up_required"}},
		errors.New("strongroom: step-up: strongroom: no response"),
		&client.Error{StatusCode: 500, Type: "internal_error", Message: "Something went wrong.", RequestID: "r1"},
		usagef("bad"), context.Canceled, errNotSignedIn,
	} {
		var errw strings.Builder
		e := &env{errw: &errw}
		e.fail(err)
		if strings.Contains(errw.String(), "strongroom: strongroom:") || strings.Count(errw.String(), "strongroom: ") != 1 {
			t.Errorf("%v printed as %q", err, errw.String())
		}
	}
	// A server error prints its message and type.
	var errw strings.Builder
	(&env{errw: &errw}).fail(&client.Error{StatusCode: 409, Type: "conflict", Message: "The card is not frozen.", RequestID: "r2"})
	if errw.String() != "strongroom: The card is not frozen. (conflict, request r2)\n" {
		t.Errorf("server error printed as %q", errw.String())
	}
}
