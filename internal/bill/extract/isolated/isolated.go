// Package isolated reads an invoice in a child process of the running binary,
// so that a hostile document can cost the service at most one bounded,
// short-lived process: the child has a memory limit, a CPU-time limit and a
// deadline, holds none of the server's secrets and is killed when any runs
// out. The reader in package extract bounds every input shape it knows of;
// this is the backstop for the ones nobody has thought of yet (a loop or a
// blow-up inside a third-party PDF library cannot be interrupted from
// another goroutine, only by ending its process).
//
// The child is this same executable started with an environment variable
// that this package's init function recognises: it reads the document from
// standard input, writes the result to standard output as JSON and exits
// before the rest of the program initialises. That works for the strongroom
// binary and for test binaries alike, with nothing to install.
package isolated

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/strongroom/strongroom/internal/bill/extract"
)

// Limits bound one child. The zero value of a field means its default.
type Limits struct {
	// Memory is the most memory the child's Go runtime may hold (heap,
	// stacks and runtime structures together). Default 256 MiB.
	Memory int64
	// Deadline is how long the child may take, start-up included. Default 30 s.
	Deadline time.Duration
}

// Defaults for Limits.
const (
	DefaultMemory   = 256 << 20
	DefaultDeadline = 30 * time.Second
)

func (l Limits) withDefaults() Limits {
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.Deadline <= 0 {
		l.Deadline = DefaultDeadline
	}
	return l
}

// ErrLimit is wrapped by the error Read returns when the child ran out of
// memory or time or died otherwise while reading: the document's fault, so
// the error also wraps extract.ErrUnreadable.
var ErrLimit = errors.New("isolated: reading the document exceeded a limit")

// The child's environment. workerEnv marks the process as a child; the limit
// is passed explicitly so the child does not depend on the parent's
// environment, which it does not inherit.
const (
	workerEnv   = "STRONGROOM_EXTRACT_CHILD"
	memoryEnv   = "STRONGROOM_EXTRACT_CHILD_MEMORY"
	cpuEnv      = "STRONGROOM_EXTRACT_CHILD_CPU_SECONDS"
	maxOutput   = 1 << 20 // a Result is a few KiB; more is a fault
	maxStderr   = 4 << 10 // what is kept of the child's complaint for the log
	exitMemory  = 90      // the child's watchdog saw the memory limit
	exitProblem = 91      // the child could not read its input or write its output
)

// reply is what the child writes: the result, or the reader's error.
type reply struct {
	Result     extract.Result `json:"result"`
	Error      string         `json:"error,omitempty"`
	Unreadable bool           `json:"unreadable,omitempty"`
}

// Read runs extract.Read on data in a child process within lim. Its error
// wraps extract.ErrUnreadable when the document could not be read (including
// when reading it hit a limit: then it also wraps ErrLimit); any other error
// (the child could not be started, ctx ended) says nothing about the document
// and may be retried.
func Read(ctx context.Context, data []byte, lim Limits) (extract.Result, error) {
	lim = lim.withDefaults()
	exe, err := os.Executable()
	if err != nil {
		return extract.Result{}, fmt.Errorf("isolated: find own executable: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, lim.Deadline)
	defer cancel()
	cmd := exec.CommandContext(cctx, exe)
	cmd.Env = []string{
		workerEnv + "=1",
		memoryEnv + "=" + strconv.FormatInt(lim.Memory, 10),
		cpuEnv + "=" + strconv.Itoa(int(lim.Deadline/time.Second)+5),
		// One core: a runaway child leaves the other to the service.
		"GOMAXPROCS=1",
		// A binary built with the race detector (tests) otherwise waits a
		// second before it exits; other builds ignore it.
		"GORACE=atexit_sleep_ms=0",
	}
	cmd.Dir = os.TempDir()
	cmd.Stdin = bytes.NewReader(data)
	stdout := &boundedBuffer{max: maxOutput}
	stderr := &boundedBuffer{max: maxStderr, truncate: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	setProcessAttributes(cmd)
	if err := cmd.Start(); err != nil {
		return extract.Result{}, fmt.Errorf("isolated: start reader process: %w", err)
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		// The caller gave up (shutdown): nothing is known about the document.
		return extract.Result{}, ctx.Err()
	case cctx.Err() != nil:
		return extract.Result{}, limitError("reading took longer than %s", lim.Deadline)
	case waitErr != nil:
		var exit *exec.ExitError
		if errors.As(waitErr, &exit) && exit.ExitCode() == exitMemory {
			return extract.Result{}, limitError("reading needed more than %d MiB", lim.Memory>>20)
		}
		return extract.Result{}, limitError("reader process failed: %v: %s", waitErr, firstLine(stderr.Bytes()))
	case stdout.overflow:
		return extract.Result{}, limitError("reader process wrote more than %d bytes", maxOutput)
	}
	var r reply
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return extract.Result{}, limitError("reader process answered garbage: %v", err)
	}
	switch {
	case r.Error == "":
		return r.Result, nil
	case r.Unreadable:
		// Error already begins with ErrUnreadable's text; keep it as is.
		return extract.Result{}, &unreadableError{msg: r.Error}
	default:
		return extract.Result{}, fmt.Errorf("%w: %s", extract.ErrUnreadable, r.Error)
	}
}

func limitError(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", extract.ErrUnreadable, ErrLimit, fmt.Sprintf(format, args...))
}

// unreadableError carries the child's message for an extract.ErrUnreadable.
type unreadableError struct{ msg string }

func (e *unreadableError) Error() string { return e.msg }
func (e *unreadableError) Unwrap() error { return extract.ErrUnreadable }

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// boundedBuffer keeps at most max bytes. Past that it fails the write (the
// child then dies of a broken pipe, which is what a flood deserves), or,
// with truncate, drops the rest quietly.
type boundedBuffer struct {
	bytes.Buffer
	max      int
	truncate bool
	overflow bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.Len()
	if len(p) <= room {
		return b.Buffer.Write(p)
	}
	b.overflow = true
	b.Buffer.Write(p[:max(room, 0)])
	if b.truncate {
		return len(p), nil
	}
	return max(room, 0), errors.New("isolated: output limit")
}

func init() {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(child(os.Stdin, os.Stdout, os.Stderr))
	}
}

// child is the reader process: limits first, then read, answer and exit.
func child(stdin io.Reader, stdout, stderr io.Writer) int {
	memory, err := strconv.ParseInt(os.Getenv(memoryEnv), 10, 64)
	if err != nil || memory <= 0 {
		memory = DefaultMemory
	}
	if s, err := strconv.Atoi(os.Getenv(cpuEnv)); err == nil && s > 0 {
		limitCPU(s)
	}
	// The garbage collector works harder as the limit nears; the watchdog
	// ends the process if that is not enough.
	debug.SetMemoryLimit(memory * 3 / 4)
	go watchMemory(memory, stderr)

	data, err := io.ReadAll(io.LimitReader(stdin, extract.MaxInputSize+1))
	if err != nil {
		fmt.Fprintf(stderr, "read input: %v\n", err)
		return exitProblem
	}
	// The watchdog samples; these checks make the limit hold at the points
	// where the most is live whatever the scheduling.
	checkMemory(memory, stderr)
	var r reply
	r.Result, err = extract.Read(data)
	checkMemory(memory, stderr)
	if err != nil {
		r.Result = extract.Result{}
		r.Error = err.Error()
		r.Unreadable = errors.Is(err, extract.ErrUnreadable)
	}
	if err := json.NewEncoder(stdout).Encode(r); err != nil {
		fmt.Fprintf(stderr, "write result: %v\n", err)
		return exitProblem
	}
	return 0
}

// watchMemory ends the process as soon as the Go runtime holds more than
// limit bytes. A sample every few milliseconds is enough: memory is taken
// by allocations, which the runtime counts as they are made, and a goroutine
// in a tight loop is preempted for this one.
func watchMemory(limit int64, stderr io.Writer) {
	for {
		checkMemory(limit, stderr)
		time.Sleep(5 * time.Millisecond)
	}
}

// checkMemory ends the process if the Go runtime holds more than limit
// bytes. Memory it returned to the operating system stays in "total" but is
// not held, so it does not count.
func checkMemory(limit int64, stderr io.Writer) {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(sample)
	if held := sample[0].Value.Uint64() - sample[1].Value.Uint64(); held > uint64(limit) {
		fmt.Fprintf(stderr, "memory limit of %d MiB reached\n", limit>>20)
		os.Exit(exitMemory)
	}
}
