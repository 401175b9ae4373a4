package isolated

import (
	"os/exec"
	"syscall"
)

// setProcessAttributes makes the kernel kill the child when the thread that
// started it ends, so a reader never outlives a server that died.
func setProcessAttributes(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// limitCPU makes the kernel end the process after seconds of CPU time, a
// bound that holds even if the parent is gone.
func limitCPU(seconds int) {
	lim := syscall.Rlimit{Cur: uint64(seconds), Max: uint64(seconds) + 1}
	_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &lim)
}
