package apitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce   sync.Once
	builtBinary string
	buildErr    error
	buildOut    []byte
)

// Binary builds cmd/strongroom once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "strongroom-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBinary = filepath.Join(dir, "strongroom")
		buildOut, buildErr = exec.Command("go", "build", "-o", builtBinary, "github.com/strongroom/strongroom/cmd/strongroom").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build strongroom: %v\n%s", buildErr, buildOut)
	}
	return builtBinary
}

// Process is the server running as its own operating-system process, so a
// test can kill it mid-request as a crash would.
type Process struct {
	*Server
	// DSN is the database the process runs on, to start another on it.
	DSN string
	cmd *exec.Cmd
}

// StartProcess runs the built server with env (KEY=VALUE, on top of the
// defaults Start uses) and waits until it listens.
func StartProcess(t testing.TB, env ...string) *Process {
	t.Helper()
	vars := defaults(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cmd := exec.Command(Binary(t), "server")
	cmd.Env = os.Environ()
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	doc, router := loadDocument(t)
	p := &Process{Server: &Server{Stdout: &Buffer{}, Logs: &Buffer{}, doc: doc, router: router, client: newClient()}, DSN: vars["STRONGROOM_DATABASE"], cmd: cmd}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	for deadline := time.Now().Add(startTimeout); p.URL == ""; time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(p.Logs.String()); m != nil {
			p.URL = m[1]
		} else if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("server process did not listen:\n%s", p.Logs.String())
		}
	}
	t.Cleanup(func() {
		p.Kill()
		checkLedger(t, vars["STRONGROOM_DATABASE"])
	})
	return p
}

// Kill ends the process at once (SIGKILL): no graceful stop, as in a crash.
func (p *Process) Kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}
